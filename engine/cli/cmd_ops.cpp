// sightline ops: the priced operators of one model step on one GPU's shard.
//   prefill: --batch sequences of --tokens new tokens each on top of --kv-len cached ones
//   decode:  --batch sequences (default --tokens) of one new token after --kv-len cached ones
#include <iostream>

#include "core/json_text.hpp"
#include "cli/cli_common.hpp"
#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "perf/cost_setup.hpp"
#include "perf/calibration.hpp"
#include "presets/preset_store.hpp"
#include "scenario/checks.hpp"

namespace sightline::cli {

int cmd_ops(const Args& args) {
  std::string model_id, gpu_id, tier = "auto", phase, format = "json", link_id, dtype = "bf16", weights;
  int64_t tp = 1, tokens = 0, batch = 0, kv_len = -1;
  bool training = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool v = i + 1 < args.size();
    auto number = [&](int64_t& out) { out = std::stoll(args[++i]); };
    try {
      if (args[i] == "--model" && v) model_id = args[++i];
      else if (args[i] == "--gpu" && v) gpu_id = args[++i];
      else if (args[i] == "--tier" && v) tier = args[++i];
      else if (args[i] == "--phase" && v) phase = args[++i];
      else if (args[i] == "--format" && v) format = args[++i];
      else if (args[i] == "--interconnect" && v) link_id = args[++i];
      else if (args[i] == "--dtype" && v) dtype = args[++i];
      else if (args[i] == "--weights" && v) weights = args[++i];
      else if (args[i] == "--tp" && v) number(tp);
      else if (args[i] == "--tokens" && v) number(tokens);
      else if (args[i] == "--batch" && v) number(batch);
      else if (args[i] == "--kv-len" && v) number(kv_len);
      else if (args[i] == "--training") training = true;
      else return usage_error("unexpected argument '" + args[i] + "'");
    } catch (const std::exception&) {
      return usage_error("'" + args[i] + "' needs a whole number");
    }
  }
  if (model_id.empty() || gpu_id.empty() || tokens <= 0 || (phase != "prefill" && phase != "decode"))
    return usage_error("ops needs --model ID --gpu ID --phase prefill|decode --tokens N");
  if (format != "json" && format != "table") return usage_error("unknown format '" + format + "'");
  try {
    const ModelArch model = read_model(json(model_id), "/model");
    const GpuSpec gpu = read_gpu(json(gpu_id), "/gpu");
    check_tensor_parallel(model, static_cast<int>(tp), "/tp");
    std::string provenance;
    auto cost = make_kernel_cost_model(tier, gpu, &provenance);
    if (!cost) fail(error_code::kConstraint, "/tier", "no target-measured calibration for " + gpu_id);
    bool dtype_known = false;
    for (const auto& n : dtype_names()) dtype_known = dtype_known || n == dtype || n == weights;
    if (!dtype_known) fail(error_code::kInvalidValue, "/dtype", "unknown dtype");
    Precision p;
    p.activations = p.kv_cache = parse_dtype(dtype);
    p.weights = parse_dtype(weights.empty() ? dtype : weights);
    InterconnectSpec link;
    CostContext ctx;
    ctx.gpu = &gpu;
    if (tp > 1) {
      if (link_id.empty()) link_id = gpu.default_intra_node;  // the GPU preset's own link
      if (link_id.empty())
        fail(error_code::kMissingKey, "/interconnect", gpu.id + " names no default_intra_node; give --interconnect ID");
      link = read_interconnect(json(link_id), "/interconnect");
      ctx.tp_link = ctx.pp_link = &link;
    }
    BatchShape b;
    const int64_t seqs = batch > 0 ? batch : (phase == "decode" ? tokens : 1);
    if (phase == "prefill") b.seqs.assign(static_cast<size_t>(seqs), SeqChunk{tokens, std::max<int64_t>(kv_len, 0)});
    else b.seqs.assign(static_cast<size_t>(seqs), SeqChunk{1, kv_len >= 0 ? kv_len : 1024});
    ParallelLayout layout;
    layout.tp = static_cast<int>(tp);
    StepOptions options;
    options.training = training;
    StepOperators step = build_forward_step(model, p, layout, b, options);
    if (training) {
      const StepOperators bwd = build_backward_step(step, p);
      step.ops.insert(step.ops.end(), bwd.ops.begin(), bwd.ops.end());
    }
    json ops = json::array();
    double total = 0;
    for (const Operator& op : step.ops) {
      const OpCost c = cost->cost(op, ctx);
      total += c.time_s * op.count;
      json o = {{"name", op.name}, {"family", op_family_name(op.family)},
                {"kernel_class", kernel_class_name(kernel_class_of(op))},
                {"count", op.count}, {"time_us", c.time_s * 1e6},
                {"time_low_us", c.time_low_s * 1e6}, {"time_high_us", c.time_high_s * 1e6},
                {"flops", op.flops}, {"bytes", op.bytes}, {"bound", c.bound},
                {"achieved_tflops", c.time_s > 0 ? op.flops / c.time_s / 1e12 : 0.0},
                {"achieved_GBps", c.time_s > 0 ? op.bytes / c.time_s / 1e9 : 0.0},
                {"arithmetic_intensity", op.bytes > 0 ? op.flops / op.bytes : 0.0}};
      if (op.family == OpFamily::Gemm) o["shape"] = {{"m", op.m}, {"n", op.n}, {"k", op.k}};
      if (op.family == OpFamily::AttentionPrefill || op.family == OpFamily::AttentionDecode)
        o["shape"] = {{"q_tokens", op.q_tokens}, {"kv_tokens", op.kv_tokens}, {"seqs", op.seqs},
                      {"heads", op.heads}, {"kv_heads", op.kv_heads}};
      ops.push_back(o);
    }
    json out = {{"model", model.id}, {"gpu", gpu.id}, {"tp", tp}, {"phase", phase}, {"training", training},
                {"tier", cost->tier()}, {"provenance", provenance}, {"batch", seqs}, {"tokens", tokens},
                {"interconnect", tp > 1 ? json(link_id) : json(nullptr)},
                {"step_time_us", total * 1e6}, {"operators", ops}};
    if (format == "json") {
      std::cout << safe_dump(out, 2) << "\n";
    } else {
      for (const json& o : ops)
        std::cout << o["name"].get<std::string>() << "\t" << fixed(o["time_us"], 2) << " us x " << o["count"]
                  << "\t" << o["bound"].get<std::string>() << "\n";
      std::cout << "step\t" << fixed(total * 1e6, 1) << " us (" << cost->tier() << ")\n";
    }
    return 0;
  } catch (const SightlineError& e) {
    return report_error(e);
  }
}

}  // namespace sightline::cli
