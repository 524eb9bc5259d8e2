#pragma once
// Serving deployment search: which GPU type, tensor/pipeline split, replica
// count, batch limit and scheduler serve a workload at a target rate within
// its SLO for the fewest dollars per million tokens?
//
// 1. Enumerate the space: GPU types from a list (each with its price per hour
//    and links), tp, pp, max_num_seqs, chunked prefill on/off.
// 2. Prune without simulating: the scenario checks (memory fit, tp divides
//    heads, tp inside a node) and fast analytic bounds from the same cost
//    model: a batch-1 decode step above the TPOT SLO, or a lone prefill of the
//    mean prompt above the TTFT SLO, cannot meet it; a replica's decode-only
//    throughput at a full batch bounds its request rate from above, so it gives
//    the fewest replicas that could reach the target rate.
// 3. Simulate the survivors at the target rate (each independent: a caller
//    may run them on threads) and judge each by the steady-state verdict of
//    the capacity search (stable, SLO attainment interval at or above target).
// 4. Rank; the Pareto front of $/Mtok against P99 TTFT; the cheapest
//    deployment that meets the SLO, with the cost model's 80% interval.
#include <cstdint>
#include <string>
#include <vector>

#include "core/json_reader.hpp"

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
  int max_gpus = 64;
  std::vector<GpuOption> gpus;
  std::vector<int> tp = {1, 2, 4, 8};
  std::vector<int> pp = {1};
  std::vector<int64_t> max_num_seqs = {64, 128, 256};
  std::vector<bool> chunked_prefill = {false, true};
  int64_t requests = 2000;   // per simulated candidate
  int replica_options = 3;   // replica counts tried per layout, from the analytic minimum up
};

// Reads a search document; errors are located (code, JSON pointer, message).
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
  std::vector<Pruned> pruned;
  int64_t space_size = 0;             // layouts before pruning (replica counts not counted)
};

Plan plan_deployment_search(const DeploymentSearchSpec& spec);

struct CandidateResult {
  Candidate c;
  bool ok = false;            // the simulation ran
  std::string error;
  bool meets_slo = false;
  std::string verdict;        // steady-state verdict at the target rate
  double attainment = 0, attainment_low = 0, attainment_high = 0;
  double ttft_p99_ms = 0, tpot_p99_ms = 0, output_tokens_per_s = 0;
  double usd_per_million_tokens = 0;  // input + output tokens
  double usd_per_hour = 0;
};

// Simulates one candidate (thread-safe: shares nothing).
CandidateResult evaluate_candidate(const DeploymentSearchSpec& spec, const Candidate& c);

// Ranked table, Pareto front, the cheapest deployment that meets the SLO (with
// its cost-model interval: re-simulated at the low and high kernel bounds).
json summarize_deployment_search(const DeploymentSearchSpec& spec, const Plan& plan,
                                 const std::vector<CandidateResult>& results);

}  // namespace sightline::search
