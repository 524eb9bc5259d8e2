#pragma once
// Serving deployment search: which GPU type, tensor/pipeline split, replica
// count, batch limit and scheduler serve a workload at a target rate within
// its SLO for the fewest dollars per million tokens?
//
// 1. Plan: enumerate the space (GPU types from a list, each with its price per
//    hour and links; tp, pp, max_num_seqs, chunked prefill on/off) and prune
//    without simulating: the scenario checks (memory fit, tp divides heads,
//    tp inside a node) and fast analytic bounds from the same cost model (a
//    batch-1 decode step above the TPOT SLO, or a lone prefill of the mean
//    prompt above the TTFT SLO, cannot meet it; a replica's decode-only
//    throughput at a full batch bounds its request rate from above, so it
//    gives the fewest replicas that could reach the target rate). Each
//    surviving candidate is a plain serving scenario at the target rate with
//    `serving.steady_state`: it runs through the ordinary run call, sized and
//    grown like the capacity search's runs, and judged by the same verdict.
// 2. Run the candidates at the cost model's central bound (independent: threads
//    natively, the page's worker pool in the browser).
// 3. Rank; the Pareto front of $/Mtok against P99 TTFT among the deployments
//    that meet the SLO; each front point re-run at the kernels' low and high
//    cost bounds for its 80% interval; the cheapest deployment meeting the SLO.
#include <cstdint>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "perf/cost_bounds.hpp"

namespace sightline::search {

struct GpuOption {
  std::string gpu;          // GPU preset id
  double usd_per_hour = 0;  // per GPU
  std::string intra_node;   // interconnect preset ids
  std::string inter_node;
  int gpus_per_node = 8;
};

struct DeploymentSearchSpec {
  json base;                 // a serving "simulate" scenario: model, workload, slo, scheduler...
  double target_qps = 0;
  int max_gpus = 64;         // the GPU budget of one deployment
  std::vector<GpuOption> gpus;
  std::vector<int> tp = {1, 2, 4, 8};
  std::vector<int> pp = {1};
  std::vector<int64_t> max_num_seqs = {64, 128, 256};
  std::vector<bool> chunked_prefill = {false, true};
  int64_t requests = 1000;        // first run of each candidate
  int64_t max_requests = 20000;   // a candidate's run never grows past this
  int replica_options = 3;        // replica counts tried per layout, from the analytic minimum up
  int max_interval_points = 8;    // Pareto points re-run at the low and high cost bounds
};

// Reads a search question; errors are located (code, JSON pointer, message).
DeploymentSearchSpec read_deployment_search(const json& doc);

struct Candidate {
  size_t gpu = 0;  // index into spec.gpus
  int tp = 1, pp = 1, replicas = 1;
  int64_t max_num_seqs = 256;
  bool chunked = false;
  int gpus() const { return tp * pp * replicas; }
};

struct Pruned {
  Candidate layout;  // replicas = 1
  std::string reason;
};

struct Plan {
  std::vector<Candidate> candidates;  // to simulate
  std::vector<json> scenarios;        // candidates[i] as a runnable scenario document
  std::vector<Pruned> pruned;
  int64_t space_size = 0;             // layouts before pruning (replica counts not counted)
};

Plan plan_deployment_search(const DeploymentSearchSpec& spec);

// What a candidate's run says, read from its result document (the ordinary
// serving result with its steady_state block), so native threads and the
// page's workers feed the ranking the same way.
struct CandidateOutcome {
  bool ok = false;  // the run finished
  std::string error;
  bool meets_slo = false;
  std::string verdict;
  double attainment = 0, attainment_low = 0, attainment_high = 0;
  int64_t requests = 0;
  double ttft_p99_ms = 0, tpot_p99_ms = 0, output_tokens_per_s = 0;
  double usd_per_million_tokens = 0;
};
CandidateOutcome read_candidate_outcome(const json& run_result);

// Runs one candidate scenario at a cost bound (thread-safe: shares nothing).
CandidateOutcome evaluate_candidate(const json& scenario, CostBound bound);

struct RankedCandidate {
  size_t index = 0;  // into the plan
  Candidate c;
  std::string label;
  double usd_per_hour = 0;
  CandidateOutcome central;
  bool has_interval = false;
  CandidateOutcome low, high;  // the same run at the kernels' low / high cost bounds
  bool on_front = false;
};

// The typed search answer; to_json() is its one JSON writer.
struct DeploymentSearchResult {
  double target_qps = 0;
  int max_gpus = 0;
  json slo;
  json accuracy;  // tier of the cost model behind the cheapest deployment (or the first GPU)
  int64_t space_size = 0, pruned = 0, simulated = 0, requests_simulated = 0;
  std::vector<RankedCandidate> ranked;  // best first
  std::vector<size_t> front;            // indices into ranked, by $/Mtok
  int cheapest = -1;                    // index into ranked, -1 when none meets the SLO
  std::vector<Pruned> pruned_layouts;
  std::vector<std::string> pruned_labels;
  json to_json() const;
};

// Which plan candidates need their interval runs (the Pareto front of the
// central results, at most spec.max_interval_points, cheapest first).
std::vector<size_t> interval_candidates(const DeploymentSearchSpec& spec, const Plan& plan,
                                        const std::vector<CandidateOutcome>& central);

// Ranks the central outcomes (one per plan candidate); `low`/`high` hold the
// interval runs of the candidates interval_candidates() named, in its order.
DeploymentSearchResult rank_deployment_search(const DeploymentSearchSpec& spec, const Plan& plan,
                                              const std::vector<CandidateOutcome>& central,
                                              const std::vector<CandidateOutcome>& low,
                                              const std::vector<CandidateOutcome>& high);

std::string candidate_label(const DeploymentSearchSpec& spec, const Candidate& c);

}  // namespace sightline::search
