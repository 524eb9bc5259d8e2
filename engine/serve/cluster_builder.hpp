#pragma once
// Building a serving simulation's cluster: each pool's cost setups (the
// pricer's), replicas and model engines with their KV spaces, the lockstep
// groups and the memory plans; and the workload's requests with the order
// the first of them arrive in. Run once per simulation, before its first event.
#include <cstdint>
#include <vector>

#include "scenario/memory_plan.hpp"
#include "scenario/run_limits.hpp"
#include "scenario/scenario.hpp"
#include "serve/kv_manager.hpp"
#include "serve/metrics_recorder.hpp"
#include "serve/sim_state.hpp"
#include "serve/step_pricer.hpp"
#include "serve/workload.hpp"

namespace sightline::serve {

// The memory plan of the scenario's pool `pool` (its KV blocks per engine).
ReplicaMemoryPlan pool_memory_plan(const Scenario& s, size_t pool);
// The limits a simulation of `s` runs under, without building it: max_num_seqs
// and every pool's engines' KV blocks, in the order the simulation builds them.
RunLimits run_limits(const Scenario& s);

// Wide expert parallelism: the attention data-parallel ranks of a group
// meet at every MoE layer's dispatch and combine, so they step in lockstep.
// A group step starts when every rank is free, each rank forms its own
// batch, the experts serve the tokens of all of them, and the step lasts as
// long as its slowest rank (a rank with a prompt chunk holds up the others;
// Simulation::start_group_step).
struct DpGroup {
  std::vector<int> members;  // replica indices
  int inflight = 0;          // members whose batch of the current group step has not ended
};

// The replicas a simulation runs, every pool's in the scenario's order.
struct Cluster {
  std::vector<Replica> replicas;
  std::vector<int> entry_replicas;   // where arrivals go
  std::vector<int> decode_replicas;  // disaggregated decode pool
  std::vector<DpGroup> dp_groups;    // attention data-parallel groups in lockstep
  std::vector<ReplicaMemoryPlan> pool_memory;
  int64_t kv_total = 0;  // KV blocks of every engine
};

// Which requests arrive on their own, in the order their arrivals are fed to
// the event queue (empty when that is index order); the others arrive when an
// earlier one ends (a session's next turn, a closed-loop client's next request).
struct FirstArrivals {
  std::vector<int32_t> order;
  size_t next_client_request = 0;  // closed loop: the first request no client sends at the start (0: none)
  TimeNs first_arrival = 0;        // the earliest arrival of all
};

class ClusterBuilder {
 public:
  // The pools' cost setups go into `pricer`, their KV spaces into `kv`.
  ClusterBuilder(const Scenario& s, StepPricer& pricer, KvManager& kv, MetricsRecorder& rec)
      : s_(s), spec_(*s.serving->simulation), pricer_(pricer), kv_(kv), rec_(rec) {}
  Cluster build();
  // The workload's requests into `reqs` (generated there, not copied), and
  // which of them arrive on their own.
  FirstArrivals load_workload(const WorkloadOverride& override, std::vector<SimRequest>& reqs,
                              GeneratedWorkload& info) const;

 private:
  void add_pool(size_t pool_index, Cluster& c);
  static std::vector<int32_t> first_turns(const std::vector<SimRequest>& requests);
  // The requests sent at the start of a closed loop: one per client.
  static std::vector<int32_t> first_requests_of_clients(size_t requests, int64_t clients);

  const Scenario& s_;
  const SimulationSpec& spec_;
  StepPricer& pricer_;
  KvManager& kv_;
  MetricsRecorder& rec_;
};

}  // namespace sightline::serve
