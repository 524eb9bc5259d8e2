#pragma once
// Training configuration search: which TP × PP × CP × EP × micro-batch ×
// virtual stages × recompute × ZeRO stage (and, given several, which GPU type
// and count) trains a model fastest, or for the most tokens per dollar, while
// fitting in memory?
//
// 1. Plan: enumerate the space with dp = gpus / (tp · pp · cp) and the base's
//    global batch fixed (so the gradient accumulation follows from dp and the
//    micro-batch), and prune without estimating: tp · pp · cp must divide the
//    GPU count, virtual stages need a pipeline, and every surviving
//    configuration goes through the training scenario checks (tp divides the
//    heads and sits inside a node, pp × virtual_stages divides the layers, the
//    global batch is a multiple of dp × micro-batch with at least pp
//    micro-batches per pipeline, ep divides the experts and dp, ...). Each
//    survivor is a plain training scenario.
// 2. Estimate every survivor with the training estimator at the cost model's
//    central bound (independent: threads natively). Memory fit is the
//    estimator's own memory block (peak activations depend on the schedule's
//    micro-batches in flight), so a configuration over the GPU's memory is
//    dropped there, with its need.
// 3. Rank the fitting ones by the objective; the top few and the Pareto front
//    of the objective against memory per GPU are re-run at the kernels' low and
//    high cost bounds for their 80% intervals.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "perf/cost_bounds.hpp"
#include "scenario/scenario.hpp"
#include "search/explorer.hpp"

namespace sightline::search {

enum class TrainObjective { TimeToTrain, TokensPerUsd };

struct TrainGpuOption {
  std::string gpu;          // GPU id (for labels)
  json gpu_value;           // as the scenario's hardware.gpu takes it (preset id or the base's custom object)
  double usd_per_hour = 0;  // per GPU; 0: no cost figures
  json intra_node;          // interconnects as hardware takes them; null: none (then the count must not need one)
  json inter_node;
  int gpus_per_node = 0;    // always read: the question's or the base's, else the GPU's own node_gpus
  std::vector<int> counts;  // total GPUs of the job
};

struct TrainingSearchSpec {
  json base;  // a training scenario document (a preset id resolved)
  std::string base_id;
  TrainObjective objective = TrainObjective::TimeToTrain;
  std::vector<TrainGpuOption> gpus;
  std::vector<int> tp = {1, 2, 4, 8};
  std::vector<int> pp = {1, 2, 4, 8};
  std::vector<int> cp = {1};
  std::vector<int> ep = {1};
  std::vector<int64_t> micro_batch = {1, 2, 4};
  std::vector<int> virtual_stages = {1, 2};
  std::vector<std::string> recompute = {"none", "selective", "full"};
  std::vector<int> zero_stage = {0, 1, 2, 3};
  std::vector<bool> sequence_parallel = {true};  // applies where tp ≥ 2
  int64_t global_batch_size = 0;                 // from the base
  int64_t seq_len = 0;
  double tokens_to_train = 0;                    // from the base, or the question
  int top = 5;                                   // best configurations re-run at the low and high bounds
  int max_interval_points = 16;                  // at most this many interval runs (top + Pareto points)
};

// Reads a training search question; errors are located (code, JSON pointer, message).
TrainingSearchSpec read_training_search(const json& doc);
// The configurations the question's axes multiply to (before any is pruned).
int64_t training_search_space(const TrainingSearchSpec& spec);

struct TrainCandidate {
  size_t gpu = 0;  // index into spec.gpus
  int gpus = 0;    // total GPUs
  int tp = 1, pp = 1, cp = 1, ep = 1, dp = 1, virtual_stages = 1, zero_stage = 0;
  int64_t micro_batch = 1;
  std::string recompute = "none";
  bool sequence_parallel = false;
  int64_t ga = 0;  // gradient accumulation (micro-batches per step per replica), from the scenario checks
};

struct TrainPruned {
  TrainCandidate c;
  std::string reason_key;  // what groups it in the counts: "code at /path" or a fixed key
  std::string reason;      // the full message
};

struct TrainPlan {
  std::vector<TrainCandidate> candidates;
  std::vector<Scenario> scenarios;  // candidates[i] read and checked
  std::vector<json> documents;      // candidates[i] as a runnable scenario document
  std::vector<TrainPruned> pruned;
  int64_t space_size = 0;
};

TrainPlan plan_training_search(const TrainingSearchSpec& spec);

// One configuration's estimate, read from the estimator's typed result.
struct TrainOutcome {
  bool ok = false;
  std::string error;
  bool fits = false;
  double step_time_ms = 0, tokens_per_s = 0, tokens_per_s_per_gpu = 0, mfu_pct = 0;
  double memory_GiB = 0, capacity_GiB = 0, bubble_pct = 0, exposed_comm_ms = 0;
  int64_t max_micro_batch = 0;
  double time_to_train_days = 0;  // 0 without tokens_to_train
  double cost_usd = 0;            // 0 without a price or tokens_to_train
  double tokens_per_usd = 0;      // 0 without a price
};

// Estimates one candidate at a cost bound (thread-safe: shares nothing).
TrainOutcome evaluate_training_candidate(const TrainingSearchSpec& spec, const TrainPlan& plan, size_t index,
                                         CostBound bound);

struct RankedTrainCandidate {
  size_t index = 0;  // into the plan
  TrainCandidate c;
  std::string label;
  std::string gpu;
  double usd_per_hour = 0;  // the whole job's
  TrainOutcome central;
  bool has_interval = false;
  TrainOutcome low, high;  // the same configuration at the kernels' low / high cost bounds
  bool on_front = false;
};

// The typed search answer; to_json() is its one JSON writer.
struct TrainingSearchResult {
  TrainObjective objective = TrainObjective::TimeToTrain;
  std::string base_id, model;
  int64_t global_batch_size = 0, seq_len = 0;
  double tokens_to_train = 0;
  json accuracy;
  SpaceCounts space;  // configurations planned, pruned by the checks, estimated
  int64_t pruned_memory = 0, failed = 0;
  std::vector<RankedTrainCandidate> ranked;  // fitting configurations, best first
  std::vector<size_t> front;                 // indices into ranked: Pareto front of objective vs memory
  std::string best_at_low_bound, best_at_high_bound;  // among the interval runs
  struct Reason {
    std::string key, example;
    int64_t count = 0;
  };
  std::vector<Reason> reasons;  // pruning counts, most frequent first
  std::vector<std::pair<std::string, std::string>> pruned;  // label, reason (plan order, then memory)
  json to_json() const;
};

// Which plan candidates need their interval runs: the best `top` by the
// objective and the Pareto front of the objective against memory per GPU,
// best first, at most spec.max_interval_points.
std::vector<size_t> training_interval_candidates(const TrainingSearchSpec& spec, const TrainPlan& plan,
                                                 const std::vector<TrainOutcome>& central);

// Ranks the central outcomes (one per plan candidate); `low`/`high` hold the
// interval runs of the candidates training_interval_candidates() named, in its order.
TrainingSearchResult rank_training_search(const TrainingSearchSpec& spec, const TrainPlan& plan,
                                          const std::vector<TrainOutcome>& central,
                                          const std::vector<TrainOutcome>& low, const std::vector<TrainOutcome>& high);

// The whole search through the search explorer (search/explorer.hpp): plan,
// central estimates, interval runs, rank; `for_each` places the estimates.
TrainingSearchResult run_training_search(const TrainingSearchSpec& spec, const ForEach& for_each);

std::string training_candidate_label(const TrainingSearchSpec& spec, const TrainCandidate& c);

// The objective's figure (larger is better): tokens per second for
// time_to_train (the global batch and tokens to train are fixed, so the
// fastest step trains soonest), tokens per dollar for tokens_per_usd.
double objective_score(const TrainingSearchSpec& spec, const TrainOutcome& o);

}  // namespace sightline::search
