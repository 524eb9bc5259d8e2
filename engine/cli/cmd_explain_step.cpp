// sightline explain-step: one decode step of a serving scenario, taken apart
// by mechanism; with --prompt-tokens, the mixed step in which the scheduler
// also admits one prompt (chunked prefill / in-flight batching), which runs
// without CUDA graphs. The step is built and priced as the serving simulator prices
// it (the pool's layout, the stack's CUDA-graph padding and host model, the
// MoE placement with its busiest-rank load and all-to-alls), then each
// mechanism's share is the difference it makes:
//   kernels            GPU time of the batch as requested, experts balanced,
//                      itself taken apart by kernel group (routed / shared
//                      experts, decode attention, other GEMMs, routing,
//                      memory-bound kernels, other collectives)
//   graph padding      the dummy rows of the captured batch size
//   expert imbalance   the busiest EP rank's excess (sampling + hot experts)
//   all-to-all         DeepEP dispatch / combine
//   host               launches and scheduling the stack leaves exposed
//   two-batch overlap  (when the scenario runs it) the step as two
//                      micro-batches against the batch as one
// Each line names where its numbers come from.
#include <iostream>
#include <iterator>
#include <optional>

#include "cli/cli_common.hpp"
#include "cli/flags.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "comm/collectives.hpp"
#include "perf/calibrated_cost.hpp"
#include "perf/cost_setup.hpp"
#include "perf/decode_kernel.hpp"
#include "perf/kernel_family.hpp"
#include "scenario/scenario.hpp"
#include "serve/moe_step.hpp"
#include "serve/two_batch_overlap.hpp"

namespace sightline::cli {

namespace {

constexpr int64_t kMaxExplainBatch = 1 << 16;
constexpr int64_t kMaxExplainKv = 16 << 20;

struct ExplainedPart {
  std::string name;
  double time_s = 0;
  std::string source;
};

// The dispatch / combine all-to-alls of expert parallelism (serve/moe_step.cpp).
bool is_all_to_all(const PricedOperator& p) {
  return p.name.rfind("moe_dispatch", 0) == 0 || p.name == "moe_combine";
}

// The step's operators as the simulator builds them, without the host part.
struct PricedVariant {
  StepOperators ops;
  StepCost cost;
  HostTime host;
  double a2a_s = 0;
  int64_t ran_batch = 0;  // decode sequences as run (graph dummies included, a prompt not)
};

PricedVariant price_variant(const Scenario& s, const ParallelLayout& layout, const CostSetup& setup,
                            const BatchShape& batch, const MoeRouting* routing, bool pad) {
  StepOptions o;
  o.attention = s.serving->attention;
  o.fusion = s.cost_model.software_stack.fusion;
  if (routing) o.moe = *routing;
  SoftwareStack stack = s.cost_model.software_stack;
  if (!pad) stack.graph_batch_sizes.every_size = true;  // the batch as requested
  BatchShape ran;
  PricedVariant v;
  StepOperators& ops = v.ops;
  ops = build_served_step(s.model, s.precision, layout, batch, o, stack, &ran);
  const serve::SimulationSpec* sim = s.serving->simulation.get();
  if (routing && sim && sim->moe.expert_parallel > 1)
    serve::append_moe_all_to_all(sim->moe, s.model, s.precision.activations, ran, *routing, ops);
  v.cost = setup.price(ops);
  v.host = host_time(ops, s.cost_model.software_stack);
  // A prompt chunk has nothing cached; decodes and graph dummies have.
  for (const SeqChunk& q : ran.seqs) v.ran_batch += q.cached_tokens > 0 ? 1 : 0;
  for (const PricedOperator& p : v.cost.parts)
    if (is_all_to_all(p)) v.a2a_s += p.time_s;
  return v;
}

// The kernels line taken apart by what runs: each operator of the step (the
// batch as requested, experts balanced; the all-to-alls have their own line)
// falls in one group, so the groups add up to the kernels line. Each group's
// source is what prices it (the calibration class's provenance), then the
// kernel-level figures it was checked against where those describe this GPU
// (NVIDIA-measured levels), or, on a GPU a kernel family prices, what the
// family says it has no figure for (`not_cited`: the generic price used).
struct KernelGroup {
  const char* name;
  const char* what;
  const char* nvidia_check;     // checked against (kernel-level, NVIDIA); "" none
  const char* family_uncited;   // the kernel family's not_cited key; "" none
};
constexpr KernelGroup kKernelGroups[] = {
    {"routed-expert grouped GEMMs",
     "one grouped GEMM per projection over the experts hit, tokens per expert from model/moe_routing.hpp",
     "checked against DeepGEMM's H800 grouped and dense FP8 tables (presets/calibrations/data/published_moe_kernels.csv)",
     "grouped_gemm"},
    {"shared-expert GEMMs", "dense GEMMs over every token (model/operators.cpp)", "", ""},
    {"decode attention", "attention-decode class: KV bytes at the decode efficiency, FLOPs on the tensor cores",
     "MLA checked against FlashMLA's H800 ceiling (660 TFLOP/s, 3 TB/s)", "decode_attention"},
    {"prefill attention", "FlashAttention forward efficiency by context", "", "prefill_attention"},
    {"other GEMMs (projections, lm_head, dense MLP)", "GEMM class", "", ""},
    {"MoE gate, top-k, permute", "router GEMM and memory-bound routing kernels (model/operators.cpp)", "", ""},
    {"memory-bound kernels (norm, rope, activation, KV write, sampling)", "memory classes of the calibration", "", ""},
    {"other collectives (tensor-parallel all-reduce)", "the stack's all-reduce kernels (comm/allreduce_policy.hpp)", "",
     ""},
};

// What a kernel family says it has no figure for under `key`, and the generic
// price it uses instead, as a clause to add to a source; "" when it says
// nothing, or when `gpu` has a figure of its own for that mechanism.
std::string uncited_clause(const KernelFamily* family, const std::string& key, const GpuSpec& gpu) {
  if (!family || key.empty() || !family->not_cited.count(key) || family_cites_for(*family, gpu, key)) return "";
  return "; " + family->not_cited.at(key) + " (presets/kernel_families/" + family->id + ".json)";
}

// The calibration class that prices each group (by index in kKernelGroups).
std::string group_provenance(size_t group, const KernelCalibration& cal) {
  switch (group) {
    case 0: case 1: case 4: return cal.gemm.provenance;
    case 2: return cal.memory.at(KernelClass::AttentionDecode).provenance;
    case 3: return cal.attention.provenance;
    default: return "";
  }
}

// The routed experts' weights a weight-only kernel dequantizes (FP4 without
// FP4 tensor cores) stream at their own level where the calibration has one:
// that level, as a clause of the experts' source; "" otherwise.
std::string weight_only_clause(const CalibratedCostModel* calibrated, const Precision& precision) {
  if (!calibrated || !is_fp4(precision.weights) || precision.fp4_tensor_cores) return "";
  const auto& levels = calibrated->calibration().gemm.grouped_weight_only_memory_scale;
  const auto level = levels.find(dtype_name(precision.weights));
  if (level == levels.end()) return "";
  return "; " + level->first + " weights dequantized in the main loop stream at " + fixed(level->second, 3) +
         " x the 16-bit level (gemm.grouped_weight_only_memory_scale: triton_kernels' matmul_ogs, "
         "presets/calibrations/data/published_mxfp4_grouped.csv)";
}

// Each group's source on this deployment (see KernelGroup).
std::vector<std::string> kernel_group_sources(const CostSetup& setup, const KernelFamily* family,
                                              const Precision& precision) {
  const auto* calibrated = dynamic_cast<const CalibratedCostModel*>(setup.model.get());
  std::vector<std::string> out;
  for (size_t i = 0; i < std::size(kKernelGroups); ++i) {
    const KernelGroup& g = kKernelGroups[i];
    std::string text = g.what;
    const std::string priced_by = calibrated ? group_provenance(i, calibrated->calibration()) : "";
    if (!priced_by.empty()) text += "; priced by " + priced_by;
    if (i == 7 && setup.ctx.tp_link)
      text += "; where NCCL/RCCL runs, link '" + setup.ctx.tp_link->id + "'" +
              (setup.ctx.tp_link->calibration.empty()
                   ? std::string()
                   : " (presets/comm_calibrations/" + setup.ctx.tp_link->calibration + ".json)") +
              ": " + comm_calibration_for(*setup.ctx.tp_link)->source;
    if (!family && *g.nvidia_check) text += "; " + std::string(g.nvidia_check);
    if (i == 0) text += weight_only_clause(calibrated, precision);
    if (i == 2 && setup.ctx.decode_kernel)
      text += "; GQA decode runs the stack's " + setup.ctx.decode_kernel->name +
              " at its published time over the fastest kernel's, by batch and context (presets/decode_kernels/" +
              setup.ctx.decode_kernel->id + ".json)";
    text += uncited_clause(family, g.family_uncited, *setup.ctx.gpu);
    out.push_back(text);
  }
  return out;
}

size_t kernel_group_of(const PricedOperator& p) {
  const bool moe_gemm = p.family == OpFamily::Gemm && p.name.rfind("moe_", 0) == 0;
  if (moe_gemm && p.name.rfind("moe_expert_", 0) == 0) return 0;
  if (moe_gemm && p.name.rfind("moe_shared_", 0) == 0) return 1;
  if (p.family == OpFamily::AttentionDecode) return 2;
  if (p.family == OpFamily::AttentionPrefill) return 3;
  if (p.family == OpFamily::Gemm && p.name != "moe_router") return 4;
  if (p.name == "moe_router" || p.name == "moe_topk" || p.name == "moe_permute" || p.name == "moe_unpermute") return 5;
  if (p.family == OpFamily::Collective) return 7;
  return 6;
}

json kernel_groups_json(const StepCost& even, double step_s, const std::vector<std::string>& sources) {
  double sums[std::size(kKernelGroups)] = {};
  for (const PricedOperator& p : even.parts)
    if (p.name != "host_overhead" && !is_all_to_all(p)) sums[kernel_group_of(p)] += p.time_s;
  json groups = json::array();
  for (size_t i = 0; i < std::size(kKernelGroups); ++i)
    if (sums[i] > 0)
      groups.push_back({{"name", kKernelGroups[i].name}, {"time_us", sums[i] * 1e6},
                        {"share", step_s > 0 ? sums[i] / step_s : 0.0}, {"source", sources[i]}});
  return groups;
}

// Every operator of the kernels line, all its invocations, with what it moved and computed.
json kernel_operators_json(const StepCost& even, double step_s) {
  json ops = json::array();
  for (const PricedOperator& p : even.parts) {
    if (p.name == "host_overhead" || is_all_to_all(p)) continue;
    ops.push_back({{"name", p.name}, {"family", op_family_name(p.family)}, {"count", p.count},
                   {"time_us", p.time_s * 1e6}, {"share", step_s > 0 ? p.time_s / step_s : 0.0}, {"bound", p.bound},
                   {"achieved_tflops", p.time_s > 0 ? p.flops / p.time_s * 1e-12 : 0.0},
                   {"achieved_GBps", p.time_s > 0 ? p.bytes / p.time_s * 1e-9 : 0.0}});
  }
  return ops;
}

void print_explained_table(const json& out) {
  const int64_t prompt = out["prompt_tokens"].get<int64_t>();
  std::cout << (prompt > 0 ? "mixed step: " : "decode step: ") << out["batch"] << " sequences ("
            << out["batch_as_run"] << " as run) x " << out["kv_len"] << " cached tokens";
  if (prompt > 0) std::cout << " + one " << prompt << "-token prompt";
  std::cout << ", stack " << out["stack"].get<std::string>() << "\n";
  for (const json& p : out["mechanisms"]) {
    std::cout << "  " << p["name"].get<std::string>() << "\t" << fixed(p["time_us"], 1) << " us\t"
              << fixed(p["share"].get<double>() * 100, 1) << "%\n";
    if (p.contains("parts"))
      for (const json& g : p["parts"])
        std::cout << "    " << g["name"].get<std::string>() << "\t" << fixed(g["time_us"], 1) << " us\t"
                  << fixed(g["share"].get<double>() * 100, 1) << "%\n";
  }
  std::cout << "  step\t" << fixed(out["step_time_us"], 1) << " us\n";
  std::cout << "sources:\n";
  for (const json& p : out["mechanisms"]) {
    std::cout << "  " << p["name"].get<std::string>() << ": " << p["source"].get<std::string>() << "\n";
    if (p.contains("parts"))
      for (const json& g : p["parts"])
        std::cout << "    " << g["name"].get<std::string>() << ": " << g["source"].get<std::string>() << "\n";
  }
}

// The step as two-batch overlap runs it (serve/two_batch_overlap.hpp), against the
// full batch priced as one: the line's time is the difference, its source
// says what the overlap hid and what the halves cost again.
struct OverlapLine {
  double step_s = 0, gpu_s = 0;  // the step's wall and GPU time under the overlap
  ExplainedPart part;
};

std::optional<OverlapLine> two_batch_overlap_line(const Scenario& s, const ParallelLayout& layout,
                                                  const CostSetup& setup, const BatchShape& batch,
                                                  const MoeRouting& routing, const PricedVariant& full) {
  const serve::SimulationSpec* sim = s.serving->simulation.get();
  BatchShape a, b;
  if (!sim || !sim->moe.two_batch_overlap || sim->moe.expert_parallel <= 1 || !serve::split_two_batches(batch, a, b))
    return std::nullopt;
  const PricedVariant va = price_variant(s, layout, setup, a, &routing, true);
  const PricedVariant vb = price_variant(s, layout, setup, b, &routing, true);
  const serve::TwoBatchOverlapTime t = serve::two_batch_overlap_time(
      serve::micro_batch_parts(va.ops, va.cost, s.model), serve::micro_batch_parts(vb.ops, vb.cost, s.model),
      serve::is_decode_step(batch), s.model.num_moe_layers(), *setup.ctx.gpu);
  StepOperators whole;  // the step's sequences, for its host time
  whole.sequences = va.ops.sequences + vb.ops.sequences;
  whole.padding_sequences = va.ops.padding_sequences + vb.ops.padding_sequences;
  const double host_s =
      setup.stack ? std::max(0.0, setup.exposed_host_s(t.gpu_s, host_time(va.cost.kernels + vb.cost.kernels,
                                                                           va.cost.has_prefill || vb.cost.has_prefill,
                                                                           whole, *setup.stack)))
                  : 0.0;
  OverlapLine line;
  line.step_s = t.gpu_s + host_s;
  line.gpu_s = t.gpu_s;
  const double halves_kernels_s = va.cost.gpu_time_s + vb.cost.gpu_time_s - t.all_to_all_s;
  const double one_batch_kernels_s = full.cost.gpu_time_s - full.a2a_s;
  line.part = {"two-batch overlap (micro-batches of " + std::to_string(a.seqs.size()) + " and " +
                   std::to_string(b.seqs.size()) + " sequences)",
               line.step_s - full.cost.time_s,
               "the halves' all-to-all " + fixed(t.all_to_all_s * 1e6, 1) + " us, " +
                   fixed((t.all_to_all_s - t.exposed_s) * 1e6, 1) +
                   " us of it hidden behind the other micro-batch's stages; their kernels " +
                   fixed(halves_kernels_s * 1e6, 1) + " us against " + fixed(one_batch_kernels_s * 1e6, 1) +
                   " us as one batch (each half reads the weights again)" +
                   (t.sm_share_s > 0 ? "; FP8 GEMMs on the SMs DeepEP's normal kernels leave, +" +
                                           fixed(t.sm_share_s * 1e6, 1) + " us"
                                     : std::string()) +
                   " (SGLang's stage plans, operations_strategy.py at 0e02cef9; serve/two_batch_overlap.cpp)"};
  return line;
}

// The step's mechanisms, each the difference it makes (see the file comment).
struct StepVariants {
  const PricedVariant& full;      // as the simulator runs it
  const PricedVariant& unpadded;  // the batch as requested
  const PricedVariant& even;      // as requested, experts balanced
};

std::vector<ExplainedPart> explained_parts(const Scenario& s, const StepVariants& v, const CostSetup& setup,
                                           const MoeRouting& routing, int64_t tokens, const KernelFamily* family) {
  const serve::SimulationSpec* sim = s.serving->simulation.get();
  const bool moe = s.model.is_moe();
  const PricedVariant& full = v.full;
  const PricedVariant& unpadded = v.unpadded;
  const PricedVariant& even = v.even;
  const SoftwareStack& stack = s.cost_model.software_stack;
  std::vector<ExplainedPart> parts;
  parts.push_back({"kernels (batch as requested, experts balanced)", even.cost.gpu_time_s - even.a2a_s,
                   "kernel cost model: " + setup.provenance});
  parts.push_back({"cuda-graph padding to " + std::to_string(full.ran_batch),
                   full.cost.gpu_time_s - unpadded.cost.gpu_time_s,
                   "captured sizes of stack '" + stack.id + "' (presets/stacks/" + stack.id + ".json): " +
                       (stack.cuda_graphs == "none" ? std::string("no graphs") : safe_dump(stack.graph_batch_sizes.to_json()))});
  if (moe) {
    const std::string hot_basis = serve::serving_load_imbalance_basis(sim->moe, routing.experts_per_gpu);
    parts.push_back({"expert load imbalance (busiest EP rank x" +
                         fixed(busiest_rank_factor(s.model.moe.num_experts, s.model.moe.top_k, tokens, routing), 3) + ")",
                     (unpadded.cost.gpu_time_s - unpadded.a2a_s) - (even.cost.gpu_time_s - even.a2a_s),
                     "expected maximum over EP ranks of binomial (token, expert) counts (model/moe_routing.hpp) "
                     "times the hot-expert factor " + fixed(routing.load_imbalance, 2) + " (" + hot_basis + ")"});
    parts.push_back({"expert-parallel all-to-all", unpadded.a2a_s,
                     "DeepEP low-latency / normal kernels priced on the pool's links, the busiest rank's volume "
                     "(serve/moe_step.cpp); the padding rows' share is in the padding line" +
                         (family ? uncited_clause(family, "all_to_all", *setup.ctx.gpu)
                                 : "; checked against DeepEP's H800 tables (presets/calibrations/data/published_moe_kernels.csv)")});
  }
  parts.push_back({"host: launches " + fixed(full.host.launch_s * 1e6, 1) + " us (" +
                       (full.host.graphs ? "graph replay" : "eager") + "), scheduling " +
                       fixed(full.host.scheduler_s * 1e6, 1) + " us, exposed",
                   full.cost.time_s - full.cost.gpu_time_s,
                   "stack '" + stack.id + "': " + fixed(stack.scheduler_us_per_step, 1) + " us/step + " +
                       fixed(stack.scheduler_us_per_sequence, 1) + " us/sequence, " +
                       (stack.overlap_scheduler ? "overlapped with the GPU step" : "between steps") +
                       " (sources in presets/stacks/" + stack.id + ".json)" + uncited_clause(family, "host", *setup.ctx.gpu)});
  if (sim && sim->moe.attention_data_parallel > 1)
    parts.push_back({"attention-DP rank wait", 0.0,
                     "not in one step of equal ranks: the simulator steps the " +
                         std::to_string(sim->moe.attention_data_parallel) +
                         " ranks in lockstep and each step lasts as long as its slowest rank's batch"});
  return parts;
}

}  // namespace

int cmd_explain_step(const Args& args) {
  std::string preset, format = "table";
  std::vector<std::string> files;
  int64_t batch = 0, kv_len = 1024, prompt = 0;
  std::string problem;
  Flags flags("explain-step");
  flags.text("--preset", &preset).text("--format", &format, {"table", "json"})
      .integer("--batch", &batch, 1, kMaxExplainBatch).integer("--kv-len", &kv_len, 1, kMaxExplainKv)
      .integer("--prompt-tokens", &prompt, 0, kMaxExplainKv).positional(&files, 1);
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (files.empty() == preset.empty()) return usage_error("explain-step takes exactly one of FILE or --preset ID");
  if (batch <= 0) return usage_error("explain-step needs --batch N (sequences in the decode step)");
  std::string text;
  if (const int status = read_scenario_text(files.empty() ? "" : files[0], preset, text)) return status;
  try {
    const Scenario s = read_scenario(parse_json_document(text, preset.empty() ? files[0] : "preset " + preset));
    if (!s.serving) fail(error_code::kConstraint, "/serving", "explain-step takes a serving scenario");
    const serve::SimulationSpec* sim = s.serving->simulation.get();
    ParallelLayout layout = s.serving->parallelism;
    HardwareSpec hw = s.hardware;
    if (sim && !sim->cluster.pools.empty()) {  // the (first) pool's layout and GPU, as the simulator prices it
      const serve::PoolSpec& pool = sim->cluster.pools.front();
      layout = pool.layout;
      if (pool.gpu) hw.gpu = *pool.gpu;
      if (pool.intra_node) hw.intra_node = pool.intra_node;
    }
    const CostSetup setup = make_cost_setup(s.cost_model, hw);
    // A kernel family prices the GPU at the cross-generation tier (AMD Instinct).
    const KernelFamily* family = resolve_cost_tier(s.cost_model.tier, hw.gpu) == "cross-generation"
                                     ? find_kernel_family(hw.gpu.architecture)
                                     : nullptr;
    BatchShape b;
    b.seqs.assign(static_cast<size_t>(batch), SeqChunk{1, kv_len});
    if (prompt > 0) b.seqs.push_back(SeqChunk{prompt, 0});  // admitted this step, nothing cached yet
    const bool moe = s.model.is_moe();
    MoeRouting routing, balanced;
    if (moe && sim) {
      routing = serve::serving_moe_routing(sim->moe, s.model, layout, 0);
      balanced = routing;
      balanced.load_imbalance = 1.0;
      balanced.rank_sampling_excess = false;
    }
    const PricedVariant full = price_variant(s, layout, setup, b, moe ? &routing : nullptr, true);
    const PricedVariant unpadded = price_variant(s, layout, setup, b, moe ? &routing : nullptr, false);
    const PricedVariant even = price_variant(s, layout, setup, b, moe ? &balanced : nullptr, false);
    std::vector<ExplainedPart> parts =
        explained_parts(s, StepVariants{full, unpadded, even}, setup, routing, b.total_new_tokens(), family);
    double step_s = full.cost.time_s, gpu_s = full.cost.gpu_time_s;
    if (moe)
      if (const std::optional<OverlapLine> overlap = two_batch_overlap_line(s, layout, setup, b, routing, full)) {
        parts.push_back(overlap->part);
        step_s = overlap->step_s;
        gpu_s = overlap->gpu_s;
      }
    json mechanisms = json::array();
    for (const ExplainedPart& p : parts)
      mechanisms.push_back({{"name", p.name}, {"time_us", p.time_s * 1e6},
                            {"share", step_s > 0 ? p.time_s / step_s : 0.0}, {"source", p.source}});
    mechanisms[0]["parts"] = kernel_groups_json(even.cost, step_s, kernel_group_sources(setup, family, s.precision));
    const json out = {{"scenario", s.id}, {"model", s.model.id}, {"gpu", hw.gpu.id}, {"stack", s.cost_model.software_stack.id},
                      {"batch", batch}, {"batch_as_run", full.ran_batch}, {"kv_len", kv_len},
                      {"prompt_tokens", prompt},
                      {"step_time_us", step_s * 1e6}, {"gpu_time_us", gpu_s * 1e6},
                      {"mechanisms", mechanisms}, {"kernels", kernel_operators_json(even.cost, step_s)}};
    if (format == "json") std::cout << safe_dump(out, 2) << "\n";
    else print_explained_table(out);
    return 0;
  } catch (const SightlineError& e) {
    return report_error(e);
  }
}

}  // namespace sightline::cli
