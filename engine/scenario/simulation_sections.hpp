#pragma once
// The section readers and writers of serving mode "simulate", shared by
// read_simulation.cpp (the whole section), read_workload.cpp and
// read_cluster.cpp. Internal to the scenario module.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scenario/simulation_spec.hpp"

namespace sightline {
struct SoftwareStack;
}

namespace sightline::serve {

// The value of `name` in `table` (a name the registry already checked), or the first entry's.
template <typename E>
E pick(const std::string& name, const std::vector<std::pair<const char*, E>>& table) {
  for (const auto& [n, e] : table)
    if (name == n) return e;
  return table.front().second;
}

// `v[key]` when it is a string, "" otherwise (to choose the keys a section may have).
std::string peek_string(const json& v, const char* key);

WorkloadSpec read_workload(const json& v, const std::string& path, int64_t max_len, const LimitSpec& limits);
json workload_to_json(const WorkloadSpec& w);

ClusterSpec read_cluster(const json* v, const std::string& path, const Scenario& s, const ParallelLayout& default_layout,
                         bool has_parallelism, const std::string& parallelism_path);
// The software stack's scheduler (perf/default_scheduler.hpp) for a scenario
// that names no policy, its token budget on the cluster's GPUs
// (stack_scheduler.cpp): the smallest of the pools' where they differ. None
// for a stack without one.
struct StackSchedulerDefault {
  SchedulerPolicy policy = SchedulerPolicy::Continuous;
  Priority priority = Priority::PrefillFirst;
  int64_t token_budget = 0;  // per step: chunk_size, or continuous's max_num_batched_tokens (0: the reader's own)
  std::string source;  // said in the result where the scenario took it
};
// A policy's and a priority's value by name (names the registries checked).
SchedulerPolicy scheduler_policy_named(const std::string& name);
Priority scheduler_priority_named(const std::string& name);
// The policy a scheduler runs, by name: the scenario's own (`given`, empty
// when it names none), else its stack's default (`stack_default`, empty when
// the stack has none), else the generic continuous policy. The one rule for
// the scenario reader and for what reads a scenario before it (fit's replays).
std::string scheduler_policy_run(const std::string& given, const std::string& stack_default);
// The smallest of `per_pool(pool)` over the cluster's pools, and whether the
// pools gave different figures: one scheduler serves every pool, so a
// stack's per-GPU default runs at the smallest and the result says so.
struct SmallestOverPools {
  int64_t value = 0;
  bool pools_differ = false;
};
template <class PerPool>
SmallestOverPools smallest_over_pools(const ClusterSpec& cluster, const PerPool& per_pool) {
  SmallestOverPools out;
  for (size_t i = 0; i < cluster.pools.size(); ++i) {
    const int64_t v = per_pool(cluster.pools[i]);
    out.pools_differ = out.pools_differ || (i > 0 && v != out.value);
    out.value = i == 0 ? v : std::min(out.value, v);
  }
  return out;
}
std::optional<StackSchedulerDefault> stack_scheduler_default(const Scenario& s, const ClusterSpec& cluster);
// `stack`: what a key the scenario leaves out takes (read_cluster.cpp): the
// policy, its priority where the policy is the stack's, the chunk size under
// chunked_prefill.
SchedulerSpec read_scheduler(const json* v, const std::string& path, int64_t max_len,
                             const std::optional<StackSchedulerDefault>& stack);
// A scheduler without its own max_num_seqs takes the software stack's default
// (stack_running_limit.cpp): the smallest of its pools' where they differ.
void apply_stack_running_limit(const json* scheduler, const std::string& path, const Scenario& s,
                               double runtime_overhead_GiB, SimulationSpec& sp);
json scheduler_to_json(const SchedulerSpec& sc);
// serving.kv_cache.offload (read_kv_offload.cpp): the tiers below HBM.
void read_kv_offload(const json& v, const std::string& path, KvCacheSpec& kv);
json kv_offload_to_json(const KvCacheSpec& kv);
// serving.workload.sessions (read_sessions.cpp), with the workload's own keys
// num_sessions and duration_s read by read_workload.
SessionSpec read_sessions(const json& v, const std::string& path, int64_t max_len);
json sessions_to_json(const SessionSpec& s);
// The workload's own keys of a sessions workload (num_sessions, duration_s),
// its sessions, and with a trace (sessions.csv) no arrival.
void read_session_trace_workload(const ObjectReader& r, WorkloadSpec& w, int64_t max_len, const LimitSpec& limits);
void read_session_workload(const ObjectReader& r, WorkloadSpec& w, int64_t max_len, const LimitSpec& limits,
                           bool rate_based, const std::string& process_path);
// serving.workload.sessions.csv (read_session_trace.cpp): the trace's rows
// into `s`, with its lengths' bounds as s's length specs.
void read_session_trace(const json& v, const std::string& path, int64_t max_len, SessionSpec& s);
json session_trace_to_json(const SessionSpec& s);
// Distinct sessions of a multi-turn trace (its rows are grouped by session).
int64_t count_trace_sessions(const std::vector<SessionTraceRow>& rows);
LengthSpec read_length(const json& v, const std::string& path, int64_t max_len);
json length_to_json(const LengthSpec& l);

// serving.slo (read_slo.cpp).
void read_slo(const ObjectReader& r, SimulationSpec& sp);

// `stack`: its default_kv_admission is the admission where the scenario names none.
KvCacheSpec read_kv(const json* v, const std::string& path, const ModelArch& m, const SoftwareStack& stack);
SpeculativeSpec read_speculative(const json* v, const std::string& path, const Scenario& s, const ClusterSpec& c,
                                 const SchedulerSpec& sc);
json speculative_to_json(const SpeculativeSpec& sp);

}  // namespace sightline::serve
