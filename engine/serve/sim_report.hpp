#pragma once
// What a serving run says, written after it (or at any point it stopped)
// from a const view of the simulator's parts: the metrics
// (serving_metrics, metrics), the details (deployment, memory, capacity,
// tokens, warnings, limits and a detailed run's records; sim_details.cpp),
// every request's outcome and the limit facts. Nothing here changes the
// simulation's state.
#include <cstdint>
#include <vector>

#include "scenario/scenario.hpp"
#include "serve/cluster_builder.hpp"
#include "serve/kv_manager.hpp"
#include "serve/limit_facts.hpp"
#include "serve/metrics_recorder.hpp"
#include "serve/request_outcome.hpp"
#include "serve/serving_metrics.hpp"
#include "serve/sim_details.hpp"
#include "serve/sim_state.hpp"
#include "serve/sim_trace.hpp"
#include "serve/step_pricer.hpp"
#include "serve/step_stats.hpp"

namespace sightline::serve {

// Whether one request met every bound of the SLO named in `metrics`
// (SloMetric bits; an unfinished one did not). For ITL a request meets it when
// every one of its gaps does. The one per-request SLO check, used by the
// run's goodput (all bounds) and the steady-state verdict (per condition).
bool meets_slo(const RequestOutcome& q, const SloSpec& slo, unsigned metrics);
bool meets_slo(const RequestOutcome& q, const SloSpec& slo);

// A simulation's parts as its report reads them, each by const reference.
struct SimParts {
  const Scenario& s;
  const std::vector<SimRequest>& reqs;
  const Cluster& cluster;
  const GeneratedWorkload& workload;
  const RunProgress& run;
  const MetricsRecorder& rec;
  const StepStats& stats;
  const SimTrace& trace;
  const StepPricer& pricer;
  const KvManager& kv;
  const SeqLimitChecks& seqs;  // the batch scheduler's max_num_seqs checks
  bool capacity_read;          // a router read the KV pools' size
  bool detailed;               // per-request records, time series and trace kept
  int spec_k;                  // speculative tokens drafted per step (0: none)
};

class SimReport {
 public:
  explicit SimReport(const SimParts& parts)
      : sim_(parts), spec_(*parts.s.serving->simulation), run_(parts.run), block_size_(spec_.kv.block_size) {}

  ServingMetrics serving_metrics() const;  // the run's metrics, typed
  json metrics() const;                    // the "metrics" object: serving_metrics() written
  SimDetails details() const;  // deployment, memory, capacity, tokens, warnings, limits (+ records when detailed)
  bool all_completed() const;
  // Every request's outcome in arrival order (steady-state analysis of capacity searches).
  std::vector<RequestOutcome> outcomes() const;
  // What the run's batch limit and KV pools decided (serve/limit_facts.hpp).
  LimitFacts limit_facts() const;

 private:
  using State = RequestState;
  using Req = SimRequest;
  using Engine = ModelEngine;

  // serving_metrics()'s steps.
  void fill_rates(ServingMetrics& m, double duration, int64_t in_tokens, int64_t out_tokens, int64_t good) const;
  void fill_cache(ServingMetrics& m, double span) const;
  void fill_features(ServingMetrics& m) const;
  void fill_sessions(ServingMetrics& m) const;
  void fill_offload(ServingMetrics& m) const;
  void fill_gpu_energy_cost(ServingMetrics& m, double duration, int64_t out_tokens, int64_t in_tokens) const;
  // details()'s steps (sim_details.cpp).
  json deployment_json() const;
  ServingCapacity replica_capacity() const;
  json token_accounting() const;
  std::vector<std::string> run_warnings() const;
  json request_records() const;

  SimParts sim_;
  const SimulationSpec& spec_;
  const RunProgress& run_;
  int64_t block_size_;
};

}  // namespace sightline::serve
