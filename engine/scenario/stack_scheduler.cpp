// serving.scheduler's policy when the scenario names none: the software
// stack's default_scheduler (perf/default_scheduler.hpp), its token budget
// sized on the cluster's GPUs. Without one the scenario reader's generic
// continuous policy runs.
#include "core/error.hpp"
#include "core/json_reader.hpp"
#include "scenario/policy_registry.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_sections.hpp"

namespace sightline::serve {

std::optional<StackSchedulerDefault> stack_scheduler_default(const Scenario& s, const ClusterSpec& cluster) {
  const SoftwareStack& stack = s.cost_model.software_stack;
  if (!stack.default_scheduler) return std::nullopt;
  const StackScheduler& d = *stack.default_scheduler;
  StackSchedulerDefault out;
  // The stack's names are checked against the registries as a scenario's own
  // are, at the stack's keys (its reader, a layer down, cannot see them).
  const json names = {{"policy", d.policy}, {"priority", d.priority}};
  ObjectReader r(names, d.path, {"policy", "priority"});
  out.policy = scheduler_policy_named(r.choice("policy", registry_names(scheduler_policies())));
  if (out.policy == SchedulerPolicy::Static)
    fail(error_code::kConstraint, pointer_append(d.path, "policy"),
         "a stack's default policy is an engine's iteration-level scheduler: continuous or chunked_prefill");
  const bool chunked = out.policy == SchedulerPolicy::ChunkedPrefill;
  if (chunked && !d.chunk_size)
    fail(error_code::kMissingKey, pointer_append(d.path, "chunk_size"),
         "a stack whose default policy is chunked_prefill gives its token budget per step (chunk_size)");
  if (!chunked && d.chunk_size)
    fail(error_code::kConstraint, pointer_append(d.path, "chunk_size"),
         "chunk_size is chunked_prefill's budget; a continuous policy's is max_num_batched_tokens");
  if (chunked && d.max_num_batched_tokens)
    fail(error_code::kConstraint, pointer_append(d.path, "max_num_batched_tokens"),
         "max_num_batched_tokens is the continuous policy's budget; chunked_prefill's is chunk_size");
  out.priority = scheduler_priority_named(r.choice("priority", registry_names(scheduler_priorities())));
  const std::optional<MemoryTieredTokens>& tokens = chunked ? d.chunk_size : d.max_num_batched_tokens;
  bool pools_differ = false;
  if (tokens) {
    const SmallestOverPools budget = smallest_over_pools(
        cluster, [&](const PoolSpec& p) { return tokens->on(p.gpu ? *p.gpu : s.hardware.gpu); });
    out.token_budget = budget.value;
    pools_differ = budget.pools_differ;
  }
  const std::string policy = std::string(to_string(out.policy)) + "/" + to_string(out.priority);
  const std::string budget = tokens
                                 ? ", " + std::to_string(out.token_budget) + " tokens a step" +
                                       (pools_differ ? " (the smallest of the pools' GPUs': one scheduler serves every pool)" : "")
                                 : "";
  out.source = policy + budget + ": the default of software stack '" + stack.id + "' (its default_scheduler)";
  return out;
}

}  // namespace sightline::serve
