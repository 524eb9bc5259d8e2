#pragma once
// Host-side cost of running a step: kernel launches (eager or CUDA-graph
// replay) and the serving engine's per-iteration scheduling, grouped into
// software-stack profiles (presets/stacks/).
#include <string>

#include "comm/allreduce_policy.hpp"
#include "core/json_reader.hpp"
#include "model/operators.hpp"

namespace sightline {

struct SoftwareStack {
  std::string id, name, source;
  std::string cuda_graphs = "decode";  // none | decode | all
  double kernel_launch_us = 0;         // CPU time per eager launch
  double graph_launch_us = 0;          // CPU time per graph replay
  double scheduler_us_per_step = 0;
  double scheduler_us_per_sequence = 0;
  bool overlap_scheduler = false;      // scheduling of step i+1 hides behind GPU step i
  AllReducePolicy all_reduce;          // which all-reduce the engine runs, by message size
  KernelFusion fusion;                 // memory-bound chains launched as one fused kernel
  json to_json() const;
};

SoftwareStack read_software_stack(const json& value, const std::string& path);  // preset id or object

struct HostTime {
  double launch_s = 0;     // CPU time to launch the step's kernels
  double scheduler_s = 0;  // CPU time to schedule the step
  int64_t kernels = 0;
  bool graphs = false;
  bool admits_prompts = false;  // the step runs prefill: its scheduling cannot be prepared ahead
};

HostTime host_time(const StepOperators& step, const SoftwareStack& stack);

// Wall time of a step whose kernels take `gpu_s`: launches overlap kernel
// execution (the slower of the two wins); scheduling adds, unless the stack
// overlaps it with the previous step, which only decode-only steps allow (a
// step admitting new prompts waits for their scheduling).
double step_wall_time_s(double gpu_s, const HostTime& host, const SoftwareStack& stack);

}  // namespace sightline
