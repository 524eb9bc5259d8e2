// Table for "training" results: the seed suite's key metric first, then
// throughput, the step-time breakdown, memory per GPU, communication, the
// pipeline, compared variants and the scaling curve.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "core/json_text.hpp"
#include "cli/cli_common.hpp"

namespace sightline::cli {

namespace {

std::string value_text(const json& v, const std::string& unit) {
  if (v.is_null()) return "n/a";
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_integer() || v.is_number_unsigned()) return safe_dump(v) + (unit.empty() ? "" : " " + unit);
  if (!v.is_number()) return safe_dump(v);
  const double x = v.get<double>();
  if (x == 0) return "0" + (unit.empty() ? std::string() : " " + unit);
  const double ax = x < 0 ? -x : x;
  const int digits = ax >= 1000 ? 0 : ax >= 100 ? 1 : ax >= 1 ? 2 : 4;
  return fixed(x, digits) + (unit.empty() ? "" : " " + unit);
}

double num(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

void row(const std::string& label, const std::string& value) {
  std::cout << "  " << std::left << std::setw(38) << label << std::right << std::setw(label.size() > 38 ? 0 : 16)
            << (label.size() > 38 ? "  " + value : value) << "\n";
}

void row_ms(const std::string& label, double ms) { row(label, fixed(ms, 3) + " ms"); }

// One row per catalogued metric the result has (absent ones are skipped): the
// catalogue's label and unit, so the table says what the page says.
void metric_rows(const json& r, std::initializer_list<const char*> ids) {
  for (const char* id : ids) {
    const MetricInfo& info = catalogued(MetricKind::kTraining, id);
    const json& v = catalogued_value(info, r);
    if (!v.is_null()) row(info.label, value_text(v, info.unit));
  }
}

}  // namespace

void print_training_table(const json& r) {
  const json& d = r["deployment"];
  const json& b = r["batch"];
  std::cout << "scenario  " << r["scenario"]["id"].get<std::string>() << "  " << r["scenario"]["title"].get<std::string>()
            << "\n";
  if (r.contains("does_not_fit"))
    std::cout << "DOES NOT FIT (" << r["does_not_fit"]["path"].get<std::string>() << ")  "
              << r["does_not_fit"]["message"].get<std::string>() << "\n";
  std::cout << "model     " << r["model"]["name"].get<std::string>() << " (" << fixed(num(r["model"], "params_B"), 2)
            << " B params, " << fixed(num(r["model"], "trainable_params_M"), 1) << " M trainable)\n";
  std::cout << "gpus      " << d["gpus"] << " x " << d["gpu"].get<std::string>() << " (" << d["nodes"] << " node"
            << (d["nodes"].get<int>() > 1 ? "s" : "") << ")  dp=" << d["dp"] << " tp=" << d["tp"] << " pp=" << d["pp"]
            << " cp=" << d["cp"] << " ep=" << d["ep"] << (d["sequence_parallel"].get<bool>() ? " +sp" : "")
            << "  zero=" << d["zero_stage"] << "\n";
  std::cout << "recipe    schedule " << d["schedule"].get<std::string>() << " (v=" << d["virtual_stages"]
            << "), recompute " << d["recompute"].get<std::string>() << ", fp8 " << d["fp8"].get<std::string>()
            << ", " << d["optimizer"].get<std::string>() << (d["cpu_offload"].get<bool>() ? " (CPU offload)" : "");
  if (!d["lora"].is_null())
    std::cout << ", LoRA r=" << d["lora"]["rank"] << " base " << d["lora"]["base_dtype"].get<std::string>();
  std::cout << "\n";
  std::cout << "batch     seq " << b["seq_len"] << " x micro-batch " << b["micro_batch_size"] << " x "
            << b["micro_batches_per_step"] << " micro-batches/step -> global batch " << b["global_batch_size"]
            << " seq (" << value_text(b["global_batch_tokens"], "tokens") << ")\n";
  std::cout << "cost tier " << r["cost_tier"].get<std::string>() << "\n\n";

  std::cout << "KEY METRICS (seed suite)\n";
  for (const json& k : r["key_metrics"]) row(k["label"].get<std::string>(), value_text(k["value"], k["unit"]));
  std::cout << "\n";

  std::cout << "throughput\n";
  metric_rows(r, {"step_time_ms", "tokens_per_s", "tokens_per_s_per_gpu", "samples_per_s", "mfu_pct", "hfu_pct",
                  "model_tflops_per_gpu", "hardware_tflops_per_gpu"});
  std::cout << "\n";

  const json& sb = r["step_breakdown_ms"];
  std::cout << "step time breakdown (ms, pipeline rank " << sb["rank"] << ")\n";
  for (auto it = sb["compute"].begin(); it != sb["compute"].end(); ++it)
    if (it.value().get<double>() > 0) row_ms("compute: " + it.key(), it.value().get<double>());
  if (num(sb, "recompute") > 0) row_ms("recompute", num(sb, "recompute"));
  for (auto it = sb["exposed_comm"].begin(); it != sb["exposed_comm"].end(); ++it)
    if (it.value().get<double>() > 0) row_ms("exposed comm: " + it.key(), it.value().get<double>());
  if (num(sb, "pipeline_bubble") > 0) row_ms("pipeline bubble / waits", num(sb, "pipeline_bubble"));
  row_ms("optimizer step", num(sb, "optimizer"));
  if (num(sb, "cpu_offload") > 0) row_ms("CPU offload (PCIe + host update)", num(sb, "cpu_offload"));
  if (num(sb, "framework") > 0) row_ms("framework (grad-norm/amax all-reduces, input copy)", num(sb, "framework"));
  if (num(sb, "overhead") > 1e-9) row_ms("overhead", num(sb, "overhead"));
  std::cout << "\n";

  const json& mem = r["memory_per_gpu"];
  std::cout << "memory per GPU (GiB, pipeline rank " << mem["rank"] << ")\n";
  for (const char* k : {"params_GiB", "grads_GiB", "optimizer_states_GiB", "activations_GiB", "temporary_GiB",
                        "runtime_overhead_GiB", "total_GiB", "capacity_GiB"}) {
    const std::string label = memory_label(MetricKind::kTraining, k);
    row(label, fixed(num(mem, k), 2));
  }
  if (num(mem, "host_optimizer_states_GiB") > 0) row(memory_label(MetricKind::kTraining, "host_optimizer_states_GiB"), fixed(num(mem, "host_optimizer_states_GiB"), 2));
  const bool fits = mem["fits"].get<bool>();
  row(catalogued(MetricKind::kTraining, "fits").label, fits ? "yes" : "NO, over by " + fixed(num(mem, "overflow_GiB"), 2) + " GiB");
  const json& byr = mem["max_micro_batch_by_recompute"];
  row(catalogued(MetricKind::kTraining, "max_micro_batch").label, std::to_string(mem["max_micro_batch"].get<int64_t>()) + " (none " + safe_dump(byr["none"]) +
                             ", selective " + safe_dump(byr["selective"]) + ", full " + safe_dump(byr["full"]) + ")");
  std::cout << "\n";

  const json& c = r["communication"];
  const json& p = r["pipeline"];
  std::cout << "communication and pipeline (per step)\n";
  if (c["tp"]["group"].get<int>() > 1) metric_rows(r, {"tp_comm_ms", "tp_comm_exposed_ms", "tp_comm_exposed_pct"});
  if (c["ep"]["group"].get<int>() > 1) metric_rows(r, {"ep_all_to_all_ms", "ep_all_to_all_call_us"});
  if (c["cp"]["group"].get<int>() > 1) metric_rows(r, {"cp_ring_ms", "cp_ring_exposed_ms"});
  if (c["dp"]["group"].get<int>() > 1 || c["dp"]["expert_group"].get<int>() > 1) {
    std::cout << "  DP mode: " << c["dp"]["mode"].get<std::string>() << "\n";
    metric_rows(r, {"dp_grad_sync_ms", "dp_grad_sync_exposed_ms", "dp_comm_overlap_pct", "dp_allreduce_one_shot_ms"});
  }
  if (p["stages"].get<int>() > 1) metric_rows(r, {"pp_bubble_pct", "pp_bubble_formula_pct", "pp_p2p_transfer_us"});
  std::cout << "\n";

  std::cout << "one layer, one micro-batch\n";
  metric_rows(r, {"attention_fwd_bwd_ms", "attention_block_fwd_bwd_ms", "mlp_fwd_bwd_ms", "layer_fwd_bwd_ms"});
  std::cout << "\n";

  if (r["compare"].is_array() && !r["compare"].empty()) {
    std::cout << "compared with\n";
    std::cout << "  " << std::left << std::setw(36) << "variant" << std::right << std::setw(12) << "tokens/s"
              << std::setw(12) << "this/var." << std::setw(12) << "GiB/GPU" << std::setw(6) << "fits" << "\n";
    for (const json& v : r["compare"]) {
      std::cout << "  " << std::left << std::setw(36) << v["label"].get<std::string>() << std::right << std::setw(12)
                << fixed(num(v, "tokens_per_s"), 0) << std::setw(11) << fixed(num(v, "base_over_variant_throughput"), 2)
                << "x" << std::setw(12) << fixed(num(v, "memory_per_gpu_GiB"), 1) << std::setw(6)
                << (v["fits"].get<bool>() ? "yes" : "no") << "\n";
      for (const json& k : v["key_metrics"])
        std::cout << "      " << std::left << std::setw(40) << k["label"].get<std::string>() << std::right
                  << value_text(k["value"], k["unit"].get<std::string>()) << "\n";
    }
    std::cout << "\n";
  }
  if (r["scaling"].is_object()) {
    std::cout << "scaling (" << r["scaling"]["mode"].get<std::string>() << ", over dp)\n";
    std::cout << "  " << std::setw(6) << "dp" << std::setw(7) << "GPUs" << std::setw(14) << "tokens/s" << std::setw(14)
              << "tok/s/GPU" << std::setw(10) << "speedup" << std::setw(12) << "efficiency" << std::setw(6) << "fits"
              << "\n";
    for (const json& pt : r["scaling"]["points"])
      std::cout << "  " << std::setw(6) << safe_dump(pt["dp"]) << std::setw(7) << safe_dump(pt["gpus"]) << std::setw(14)
                << fixed(num(pt, "tokens_per_s"), 0) << std::setw(14) << fixed(num(pt, "tokens_per_s_per_gpu"), 1)
                << std::setw(9) << fixed(num(pt, "speedup"), 2) << "x" << std::setw(11)
                << fixed(num(pt, "efficiency_pct"), 1) << "%" << std::setw(6) << (pt["fits"].get<bool>() ? "yes" : "no")
                << "\n";
    std::cout << "\n";
  }
  if (r["training_run"].is_object()) {
    const json& t = r["training_run"];
    std::cout << "training run (" << value_text(t["tokens_to_train"], "tokens") << ")\n";
    metric_rows(r, {"time_to_train_hours", "time_to_train_days", "gpu_hours", "energy_MWh", "cost_usd"});
    std::cout << "\n";
  }
  std::cout << "MFU/HFU convention: " << r["flop_convention"].get<std::string>() << "\n";
  for (const json& w : r["warnings"]) std::cout << "warning: " << w.get<std::string>() << "\n";
}

}  // namespace sightline::cli
