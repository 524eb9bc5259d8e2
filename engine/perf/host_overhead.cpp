#include "perf/host_overhead.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "core/error.hpp"
#include "presets/preset_store.hpp"

namespace sightline {

namespace {

// The fused kernels a stack may name (model/operators.hpp KernelFusion), by
// the serving engines' own kernel names.
constexpr const char* kRotaryEmbedding = "rotary_embedding";
constexpr const char* kSiluAndMul = "silu_and_mul";
constexpr const char* kFusedAddRmsNorm = "fused_add_rms_norm";

json fusion_to_json(const KernelFusion& f) {
  json names = json::array();
  if (f.rotary_embedding) names.push_back(kRotaryEmbedding);
  if (f.silu_and_mul) names.push_back(kSiluAndMul);
  if (f.fused_add_rms_norm) names.push_back(kFusedAddRmsNorm);
  return names;
}

KernelFusion read_fusion(const json& names, const std::string& path) {
  if (!names.is_array()) fail(error_code::kType, path, "fused_kernels must be an array of kernel names");
  KernelFusion f;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string at = pointer_append(path, i);
    if (!names[i].is_string()) fail(error_code::kType, at, "expected a kernel name (a string)");
    const std::string n = names[i].get<std::string>();
    bool* flag = n == kRotaryEmbedding ? &f.rotary_embedding
                 : n == kSiluAndMul    ? &f.silu_and_mul
                 : n == kFusedAddRmsNorm ? &f.fused_add_rms_norm
                                         : nullptr;
    if (flag == nullptr)
      fail(error_code::kInvalidValue, at,
           "unknown fused kernel '" + n + "'; valid: " + kRotaryEmbedding + ", " + kSiluAndMul + ", " + kFusedAddRmsNorm);
    if (*flag) fail(error_code::kConstraint, at, "'" + n + "' is listed twice");
    *flag = true;
  }
  return f;
}

}  // namespace

json SoftwareStack::to_json() const {
  json j = {{"id", id},
          {"name", name},
          {"source", source},
          {"cuda_graphs", cuda_graphs},
          {"kernel_launch_us", kernel_launch_us},
          {"graph_launch_us", graph_launch_us},
          {"scheduler_us_per_step", scheduler_us_per_step},
          {"scheduler_us_per_sequence", scheduler_us_per_sequence},
          {"overlap_scheduler", overlap_scheduler},
          {"fused_kernels", fusion_to_json(fusion)},
          {"all_reduce", all_reduce.to_json()},
          {"sampler_bytes_per_logit", sampler_bytes_per_logit},
          {"tokenize_us_per_token", tokenize_us_per_token}};
  if (cuda_graphs != "none") j["cuda_graph_batch_sizes"] = graph_batch_sizes.to_json();
  if (decode_attention_kernel) j["decode_attention_kernel"] = decode_attention_kernel->to_json();
  if (default_max_num_seqs) j["default_max_num_seqs"] = default_max_num_seqs->to_json();
  if (default_scheduler) j["default_scheduler"] = default_scheduler->to_json();
  if (default_kv_admission) j["default_kv_admission"] = default_kv_admission->to_json();
  return j;
}

SoftwareStack read_software_stack(const json& value, const std::string& path) {
  const json& v = value.is_string() ? require_preset("stacks", value.get<std::string>(), path) : value;
  ObjectReader r(v, path,
                 {"id", "name", "source", "cuda_graphs", "cuda_graph_batch_sizes", "kernel_launch_us", "graph_launch_us",
                  "scheduler_us_per_step", "scheduler_us_per_sequence", "overlap_scheduler", "fused_kernels",
                  "all_reduce", "sampler_bytes_per_logit", "tokenize_us_per_token", "decode_attention_kernel",
                  "default_max_num_seqs", "default_scheduler", "default_kv_admission"});
  SoftwareStack s;
  s.id = r.string("id", "custom-stack");
  s.name = r.string("name", s.id);
  s.source = r.string("source", "user-supplied profile");
  // Every behaviour field is required: a profile that silently took zero
  // launch and scheduler costs would price a different stack than the user meant.
  s.cuda_graphs = r.choice("cuda_graphs", {"none", "decode", "all"});
  // Which batch sizes the graphs were captured at decides padding and the
  // eager fallback; a stack without graphs captures none.
  if (s.cuda_graphs == "none") {
    if (r.find("cuda_graph_batch_sizes"))
      fail(error_code::kConstraint, r.child_path("cuda_graph_batch_sizes"),
           "a stack with cuda_graphs \"none\" captures no batch sizes; remove cuda_graph_batch_sizes");
  } else {
    s.graph_batch_sizes = read_graph_buckets(r.required("cuda_graph_batch_sizes"), r.child_path("cuda_graph_batch_sizes"));
  }
  s.kernel_launch_us = r.number("kernel_launch_us", 0, 1e5);
  s.graph_launch_us = r.number("graph_launch_us", 0, 1e6);
  s.scheduler_us_per_step = r.number("scheduler_us_per_step", 0, 1e7);
  s.scheduler_us_per_sequence = r.number("scheduler_us_per_sequence", 0, 1e6);
  s.overlap_scheduler = r.boolean("overlap_scheduler");
  s.fusion = read_fusion(r.required("fused_kernels"), r.child_path("fused_kernels"));
  s.all_reduce = read_all_reduce_policy(r.required("all_reduce"), r.child_path("all_reduce"));
  // Optional: a stack without its own sampler figure keeps the generic fp32 logits + probabilities.
  s.sampler_bytes_per_logit = r.number("sampler_bytes_per_logit", 1, 1024, kFp32LogitsAndProbsBytes);
  // Optional: a stack whose engine is handed token ids tokenizes nothing on the arrival path.
  s.tokenize_us_per_token = r.number("tokenize_us_per_token", 0, 1e4, 0.0);
  // Optional: a stack whose engine runs the GPU's fastest decode kernel names none.
  if (const json* k = r.find("decode_attention_kernel"))
    s.decode_attention_kernel = read_decode_kernel(*k, r.child_path("decode_attention_kernel"));
  // Optional: a stack without its own rule runs the generic 256 when the scenario sets no max_num_seqs.
  if (const json* m = r.find("default_max_num_seqs"))
    s.default_max_num_seqs = read_running_limit_rule(*m, r.child_path("default_max_num_seqs"));
  // Optional: a stack without its own runs the generic continuous policy when the scenario names none.
  if (const json* d = r.find("default_scheduler"))
    s.default_scheduler = read_stack_scheduler(*d, r.child_path("default_scheduler"));
  // Optional: a stack without its own takes KV blocks on demand when the scenario names no admission.
  if (const json* a = r.find("default_kv_admission"))
    s.default_kv_admission = read_stack_kv_admission(*a, r.child_path("default_kv_admission"));
  return s;
}

HostTime host_time(const StepOperators& step, const SoftwareStack& stack) {
  bool has_prefill = false;
  double kernels = 0;
  for (const Operator& op : step.ops) {
    kernels += op.count;
    if (op.family == OpFamily::AttentionPrefill) has_prefill = true;
  }
  return host_time(kernels, has_prefill, step, stack);
}

HostTime host_time(double kernels, bool has_prefill, const StepOperators& step, const SoftwareStack& stack) {
  HostTime h;
  // Scheduling, sampling and bookkeeping run once per real sequence: a
  // graph's dummy rows are GPU work only. (Counted from the batch, not from
  // the attention operators, which a model with several attention kinds —
  // windowed and full layers — lists once per kind.)
  h.sequences = std::max<int64_t>(0, step.sequences - step.padding_sequences);
  h.kernels = static_cast<int64_t>(std::llround(kernels));
  // Compared as views (lengths first, inline): a simulator asks per step.
  const std::string_view graphs = stack.cuda_graphs;
  const bool graph_step = graphs == "all" || (graphs == "decode" && !has_prefill);
  // Above the largest captured size the engine runs the step eagerly.
  h.graphs = graph_step && graph_bucket(stack.graph_batch_sizes, h.sequences) > 0;
  h.admits_prompts = has_prefill;
  h.launch_s = (h.graphs ? stack.graph_launch_us : stack.kernel_launch_us * kernels) * 1e-6;
  h.scheduler_s =
      (stack.scheduler_us_per_step + stack.scheduler_us_per_sequence * static_cast<double>(h.sequences)) * 1e-6;
  return h;
}

StepOperators build_served_step(const ModelArch& m, const Precision& p, const ParallelLayout& layout,
                                const BatchShape& batch, const StepOptions& options, const SoftwareStack& stack,
                                BatchShape* ran) {
  StepOperators ops;
  BatchShape scratch;
  const BatchShape& as_run = build_served_step_into(m, p, layout, batch, options, stack, scratch, ops);
  if (ran) *ran = as_run;
  return ops;
}

const BatchShape& build_served_step_into(const ModelArch& m, const Precision& p, const ParallelLayout& layout,
                                         const BatchShape& batch, const StepOptions& options,
                                         const SoftwareStack& stack, BatchShape& scratch, StepOperators& out) {
  const int64_t padding =
      graph_padding(batch, stack.graph_batch_sizes, std::string_view(stack.cuda_graphs) != "none", options.summary);
  if (padding == 0) {
    build_forward_step_into(m, p, layout, batch, options, out);
    out.padding_sequences = 0;
    return batch;
  }
  pad_with_dummies(batch, padding, scratch);
  if (!options.summary) {
    build_forward_step_into(m, p, layout, scratch, options, out);
  } else {
    // The caller's summary, and the dummies pad_with_dummies appended,
    // counted by the summary's own rule (BatchSummary::add).
    BatchSummary padded = *options.summary;
    for (size_t i = batch.seqs.size(); i < scratch.seqs.size(); ++i) padded.add(scratch.seqs[i]);
    StepOptions with_dummies = options;
    with_dummies.summary = &padded;
    build_forward_step_into(m, p, layout, scratch, with_dummies, out);
  }
  out.padding_sequences = padding;
  return scratch;
}

double step_wall_time_s(double gpu_s, const HostTime& host, const SoftwareStack& stack) {
  const double overlapped = std::max(gpu_s, host.launch_s);
  return stack.overlap_scheduler && !host.admits_prompts ? std::max(overlapped, host.scheduler_s)
                                                         : overlapped + host.scheduler_s;
}

}  // namespace sightline
