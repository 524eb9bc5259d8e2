// serving.scheduler.max_num_seqs when the scenario does not give it: the
// software stack's own rule (perf/running_limit.hpp), else the generic 256.
#include "core/json_reader.hpp"
#include "core/parameter_schema.hpp"
#include "scenario/memory_plan.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_sections.hpp"

namespace sightline::serve {

void apply_stack_running_limit(const json* scheduler, const std::string& path, const Scenario& s,
                               double runtime_overhead_GiB, SimulationSpec& sp) {
  const SoftwareStack& stack = s.cost_model.software_stack;
  if (!stack.default_max_num_seqs || (scheduler && scheduler->contains("max_num_seqs"))) return;
  // Static batches are the product's own request-level model: batch_size limits them.
  if (sp.scheduler.policy == SchedulerPolicy::Static) return;
  const RunningLimitRule& rule = *stack.default_max_num_seqs;
  const std::string stack_default = "the default of software stack '" + stack.id + "'";
  bool recurrent_state = false;
  const SmallestOverPools limit = smallest_over_pools(sp.cluster, [&](const PoolSpec& p) -> int64_t {
    if (recurrent_state) return 0;  // the generic limit stays: no later pool is sized for it
    const GpuSpec& gpu = p.gpu ? *p.gpu : s.hardware.gpu;
    // The pool as sized before the limit is known, as SGLang sizes its KV
    // pool from memory first and its request pool from that.
    const ReplicaMemoryPlan plan = plan_replica_memory(s.model, s.precision, p.layout, gpu, runtime_overhead_GiB,
                                                       stack.sampler_bytes_per_logit, sp);
    // A model with recurrent (SSM / linear-attention) state keeps the generic
    // limit: the memory plan reserves that state per max_num_seqs slot, where
    // vLLM V1 and SGLang draw it per running request from a pool of their own;
    // the stack's larger limit would reserve state for requests never run.
    for (const EngineMemory& e : plan.engines) recurrent_state = recurrent_state || e.fixed_GiB > 0;
    const int64_t kv_tokens = plan.engines.empty() ? 0 : plan.engines.front().blocks * sp.kv.block_size;
    return running_limit(rule, gpu, kv_tokens, sp.kv.max_model_len);
  });
  if (recurrent_state) {
    sp.scheduler.max_num_seqs_source = std::to_string(sp.scheduler.max_num_seqs) + ", not " + stack_default +
                                       ": the model's recurrent state is reserved per max_num_seqs slot";
    return;
  }
  if (limit.value <= 0) return;
  sp.scheduler.max_num_seqs = limit.value;
  // The parameter schema says the default varies with the stack (the page then shows none of its own).
  if (ParameterSchemaRecorder* rec = ParameterSchemaRecorder::active())
    rec->record(pointer_append(path, "max_num_seqs"), "integer", 1, 65536, json(limit.value));
  const std::string rule_name = rule.to_json().at("rule").get<std::string>();
  sp.scheduler.max_num_seqs_source =
      limit.pools_differ ? "the smallest of the pools' limits by " + stack_default + " (rule " + rule_name +
                         "): one scheduler limit serves every pool"
                   : stack_default + " (its default_max_num_seqs, rule " + rule_name + ")";
}

}  // namespace sightline::serve
