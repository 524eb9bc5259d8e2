#pragma once
// Host-side cost of running a step: kernel launches (eager or CUDA-graph
// replay) and the serving engine's per-iteration scheduling, grouped into
// software-stack profiles (presets/stacks/).
#include <optional>
#include <string>

#include "comm/allreduce_policy.hpp"
#include "core/json_reader.hpp"
#include "model/operators.hpp"
#include "perf/decode_kernel.hpp"
#include "perf/default_scheduler.hpp"
#include "perf/graph_buckets.hpp"
#include "perf/running_limit.hpp"

namespace sightline {

// Bytes per sampled row x vocabulary entry a sampler keeps live at its peak
// when a stack names no figure of its own: fp32 logits and fp32 probabilities.
inline constexpr double kFp32LogitsAndProbsBytes = 8.0;

struct SoftwareStack {
  std::string id, name, source;
  std::string cuda_graphs = "decode";  // none | decode | all
  GraphBuckets graph_batch_sizes;      // captured decode batch sizes (cuda_graphs != none)
  double kernel_launch_us = 0;         // CPU time per eager launch
  double graph_launch_us = 0;          // CPU time per graph replay
  double scheduler_us_per_step = 0;
  double scheduler_us_per_sequence = 0;
  bool overlap_scheduler = false;      // scheduling of step i+1 hides behind GPU step i
  AllReducePolicy all_reduce;          // which all-reduce the engine runs, by message size
  KernelFusion fusion;                 // memory-bound chains launched as one fused kernel
  // Peak live bytes of the sampler per sampled row x vocabulary entry; the
  // start-up memory profile reserves it once, for max_num_seqs rows (mem/inference_memory.hpp).
  double sampler_bytes_per_logit = kFp32LogitsAndProbsBytes;
  // Front-end CPU time to tokenize one prompt token of a request that arrives
  // as text (an OpenAI-style server): spent between the request's arrival and
  // its entry into the scheduler's queue, so it adds to TTFT. 0: the engine is
  // handed token ids (trtllm-bench, MLPerf LoadGen, vLLM benchmark_latency).
  double tokenize_us_per_token = 0;
  // The decode-attention kernel its engine runs where that is not the GPU's
  // fastest (presets/decode_kernels): GQA decode takes that kernel's time on
  // the architectures it names. None: the GPU's own decode-attention level.
  std::optional<DecodeKernel> decode_attention_kernel;
  // How its engine sizes the running batch when the scenario sets no
  // serving.scheduler.max_num_seqs. None: the generic 256 (vLLM V0's).
  std::optional<RunningLimitRule> default_max_num_seqs;
  // How its engine schedules when the scenario names no scheduler policy.
  // None: the generic continuous policy, prefill first (vLLM V0's).
  std::optional<StackScheduler> default_scheduler;
  // How its engine admits a prompt into the KV cache when the scenario's
  // serving.kv_cache names no admission. None: blocks on demand (vLLM's).
  std::optional<StackKvAdmission> default_kv_admission;
  json to_json() const;
};

SoftwareStack read_software_stack(const json& value, const std::string& path);  // preset id or object
inline constexpr const char* kDefaultSoftwareStack = "vllm-like";  // the stack of a scenario that names none

struct HostTime {
  double launch_s = 0;     // CPU time to launch the step's kernels
  double scheduler_s = 0;  // CPU time to schedule the step
  int64_t kernels = 0;
  bool graphs = false;
  bool admits_prompts = false;  // the step runs prefill: its scheduling cannot be prepared ahead
  int64_t sequences = 0;        // real sequences scheduled (graph padding excluded)
};

// Host time of a step: launches (one graph replay when the step is a graph
// step whose real batch is within the captured sizes, else every kernel) and
// scheduling (per step + per real sequence).
HostTime host_time(const StepOperators& step, const SoftwareStack& stack);
// The same from the step's counts: `kernels`, its operators' counts summed in
// order, and `has_prefill`, whether any is a prompt's attention (a pricer
// that walked the operators already has them: perf/step_cost.hpp StepCost).
HostTime host_time(double kernels, bool has_prefill, const StepOperators& step, const SoftwareStack& stack);

// The batch the stack's engine runs for `batch` (graph_padded_batch with this
// stack's buckets) and the operators of that batch, the padding recorded on
// them so that host time counts real sequences only. `ran`, when given,
// receives the batch as run (padding included).
StepOperators build_served_step(const ModelArch& m, const Precision& p, const ParallelLayout& layout,
                                 const BatchShape& batch, const StepOptions& options, const SoftwareStack& stack,
                                 BatchShape* ran = nullptr);
// The same into `out` (every field overwritten; model/operators.hpp
// build_forward_step_into); returns the batch as run: `batch` itself when the
// engine pads nothing (no copy: a simulator builds a step per event), else
// the padded batch, written into `scratch` (its storage kept between steps).
const BatchShape& build_served_step_into(const ModelArch& m, const Precision& p, const ParallelLayout& layout,
                                         const BatchShape& batch, const StepOptions& options,
                                         const SoftwareStack& stack, BatchShape& scratch, StepOperators& out);

// Wall time of a step whose kernels take `gpu_s`: launches overlap kernel
// execution (the slower of the two wins); scheduling adds, unless the stack
// overlaps it with the previous step, which only decode-only steps allow (a
// step admitting new prompts waits for their scheduling).
double step_wall_time_s(double gpu_s, const HostTime& host, const SoftwareStack& stack);

}  // namespace sightline
