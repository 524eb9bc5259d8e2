#pragma once
// Serving deployment search: which GPU type, tensor/pipeline split, replica
// count, batch limit and scheduler serve a workload at a target rate within
// its SLO for the fewest dollars per million tokens?
//
// 1. Plan: enumerate the space (GPU types from a list, each with its price per
//    hour and links; tp, pp, max_num_seqs, chunked prefill on/off, and the
//    optional axes: the scheduler's token budget per step, weight and KV
//    dtypes, colocated or disaggregated prefill:decode pools) and prune
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
// 3. Rank; the Pareto front of $/Mtok against TTFT at the question's
//    percentile (front_percentile below) among the deployments that meet the SLO; each front point re-run at the kernels' low and high
//    cost bounds for its 80% interval; the cheapest deployment meeting the SLO.
#include <cstdint>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "perf/cost_bounds.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_spec.hpp"
#include "search/explorer.hpp"

namespace sightline::search {

// A GPU option of the question (search/explorer.hpp, shared with the training search).
using GpuOption = GpuOptionFields;

// The percentiles a run reports its latencies at (serve::Summary).
enum class LatencyPercentile { P50, P90, P99 };
const char* percentile_name(LatencyPercentile p);  // "p50", "p90", "p99"
// The percentile the question judges a latency at, as the runs report it: the
// bound's own percentile, else (a bound in the joint share) the attainment
// share; the smallest reported percentile at or above that share (P95 is
// judged on P99). A metric without a bound: P99. The one rule of the front's
// axis, written in the answer (`question_percentiles`) for the page to read.
LatencyPercentile question_percentile(const serve::SloSpec& slo, serve::SloMetric m);
// The answer's id of a latency at a percentile, the one spelling every
// reader of the answer (CLI, page) quotes it by: ("tpot", P90) -> "tpot_p90_ms".
std::string latency_id(const char* metric, LatencyPercentile p);
// The same latency in words: ("tpot", P90) -> "P90 TPOT".
std::string latency_words(const char* metric, LatencyPercentile p);
// The question's two latencies as the plan and the answer write them
// (`question_latencies`): {"ttft": {"id", "words"}, "tpot": {...}}, so that a
// reader (the page) quotes the engine's ids and words and spells neither.
json question_latencies_json(LatencyPercentile ttft, LatencyPercentile tpot);

// A prefill:decode pool ratio; {0, 0} is colocated (one pool of mixed replicas).
struct PoolRatio {
  int prefill = 0, decode = 0;
  bool disaggregated() const { return prefill > 0; }
  int unit() const { return disaggregated() ? prefill + decode : 1; }  // replicas per unit of the ratio
};
std::string ratio_name(const PoolRatio& r);  // "colocated" or "P:D"

struct DeploymentSearchSpec {
  json base;                 // a serving "simulate" scenario: model, workload, slo, scheduler...
  double target_qps = 0;     // 0: the budget question (below)
  // No target rate, a GPU budget: each layout fills max_gpus (whole nodes),
  // its highest rate within the SLO comes from the steady-state capacity
  // search (serving.max_qps_search), and the ranking is by $/Mtok at that rate.
  bool budget() const { return target_qps <= 0; }
  int max_gpus = 64;         // the GPU budget of one deployment
  std::vector<GpuOption> gpus;
  std::vector<int> tp = {1, 2, 4, 8};
  std::vector<int> pp = {1};
  std::vector<int64_t> max_num_seqs = {64, 128, 256};
  std::vector<bool> chunked_prefill = {false, true};
  // Optional axes; empty means "the base's value only", and the output then
  // has no trace of the axis (questions without them answer as before).
  std::vector<int64_t> max_num_batched_tokens;  // the step's token budget of continuous candidates
  std::vector<int64_t> chunk_size;              // the step's token budget of chunked-prefill candidates
  std::vector<std::string> weights;             // precision.weights
  std::vector<std::string> kv_cache;            // precision.kv_cache
  std::vector<PoolRatio> prefill_decode_ratio;  // empty: colocated only
  // Mixed pools: a disaggregated candidate's decode pool may take another GPU
  // option and tp than its prefill pool (both from the gpus and tp axes; pp is
  // shared). Off: both pools share the candidate's GPU and tp, as before.
  bool mixed_pools = false;
  // Wide expert parallelism for MoE models: attention data-parallel group sizes
  // (in replicas) of colocated candidates; a group of d replicas of tp GPUs
  // spreads the experts over all its d x tp GPUs (serving.moe). Empty: the
  // base's serving.moe only.
  std::vector<int> attention_dp;
  int64_t requests = 1000;        // first run of each candidate
  int64_t max_requests = 20000;   // a candidate's run never grows past this
  int replica_options = 3;        // replica counts tried per layout, from the analytic minimum up
  int max_interval_points = 8;    // Pareto points re-run at the low and high cost bounds
  // The base SLO's percentiles (question_percentile): the front is $/Mtok
  // against TTFT at ttft_percentile.
  LatencyPercentile ttft_percentile = LatencyPercentile::P99, tpot_percentile = LatencyPercentile::P99;
};

// Reads a search question; errors are located (code, JSON pointer, message).
DeploymentSearchSpec read_deployment_search(const json& doc);

struct Candidate {
  size_t gpu = 0;  // index into spec.gpus
  int tp = 1, pp = 1, replicas = 1;
  int64_t max_num_seqs = 256;
  bool chunked = false;
  int64_t batched_tokens = 0;    // max_num_batched_tokens or chunk_size by the policy; 0: the base's
  std::string weights, kv_cache; // empty: the base's
  PoolRatio ratio;               // disaggregated: replicas = k x (prefill + decode)
  // Mixed pools: the decode pool's GPU option and tp (-1 / 0: the candidate's gpu and tp).
  int attention_dp = 1;  // colocated wide EP: replicas in groups of this many, experts over dp x tp GPUs
  int decode_gpu_option = -1;
  int decode_tp_value = 0;
  size_t decode_gpu() const { return decode_gpu_option >= 0 ? static_cast<size_t>(decode_gpu_option) : gpu; }
  int decode_tp() const { return decode_tp_value > 0 ? decode_tp_value : tp; }
  bool mixed() const { return ratio.disaggregated() && (decode_gpu() != gpu || decode_tp() != tp); }
  int prefill_replicas() const { return ratio.disaggregated() ? replicas / ratio.unit() * ratio.prefill : 0; }
  int decode_replicas() const { return ratio.disaggregated() ? replicas / ratio.unit() * ratio.decode : 0; }
  int gpus() const {
    return ratio.disaggregated() ? (prefill_replicas() * tp + decode_replicas() * decode_tp()) * pp : tp * pp * replicas;
  }
  // GPUs of one unit of the ratio (one replica when colocated).
  int unit_replicas() const { return ratio.disaggregated() ? ratio.unit() : attention_dp; }
  int unit_gpus() const {
    return ratio.disaggregated() ? (ratio.prefill * tp + ratio.decode * decode_tp()) * pp : attention_dp * tp * pp;
  }
};

// The deployment's price per hour: each pool's GPUs at its own GPU option's price.
double candidate_usd_per_hour(const DeploymentSearchSpec& spec, const Candidate& c);

struct Pruned {
  Candidate layout;  // replicas = one unit of its ratio (1 when colocated)
  std::string reason;
};

struct Plan {
  std::vector<Candidate> candidates;  // to simulate
  std::vector<json> scenarios;        // candidates[i] as a runnable scenario document
  std::vector<Pruned> pruned;
  int64_t space_size = 0;             // layouts before pruning (replica counts not counted)
  double tokens_per_request = 0;      // budget question: mean input + output tokens of the workload's requests
};

// Refuses (limit_exceeded, at the widest axis) a question whose axes multiply
// to more than 20,000 combinations; each axis takes at most 64 values.
void check_search_space(const DeploymentSearchSpec& spec);
Plan plan_deployment_search(const DeploymentSearchSpec& spec);

// The analytic bounds the plan prunes and sizes with, for a candidate's
// scenario (any replica count), at the cost model's central bound.
struct LayoutBounds {
  double decode1_s = 0;            // a batch-1 decode step: a floor under TPOT
  double prefill_s = 0;            // a lone prefill of the mean prompt: a floor under TTFT
  double replica_qps = 0;          // a (decode) replica's request rate can be no higher
  double prefill_replica_qps = 0;  // a prefill replica's request rate can be no higher (disaggregated only)
};
LayoutBounds layout_bounds(const Scenario& s, const Candidate& c);

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
  // The latencies at the question's percentile when it judges them below P99.
  double ttft_p50_ms = 0, ttft_p90_ms = 0, tpot_p50_ms = 0, tpot_p90_ms = 0;
  double ttft_ms(LatencyPercentile p) const;
  double tpot_ms(LatencyPercentile p) const;
  double usd_per_million_tokens = 0;
  // A capacity-search run (the budget question): the highest rate meeting the
  // SLO and the lowest that did not; $/Mtok is priced at max_qps by the ranking.
  bool capacity = false;
  double max_qps = 0, max_qps_upper = 0, service_rate_qps = 0;
};
// An input reader, not a read-back: api::search_rank's caller (the page's
// workers, or any client of the API) ran each candidate in its own call and
// sends the written results back as input, so they are read like any input
// document. Runs inside the engine use their job's typed figures instead
// (outcome_of in deployment_search.cpp).
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
  // Which optional axes the question gave: their values are in the rows.
  bool show_tokens = false, show_weights = false, show_kv = false, show_ratio = false, show_mixed = false, show_dp = false;
  bool budget = false;  // the budget question: rows carry max_qps instead of latencies at a target rate
  std::vector<std::string> gpu_ids;  // the question's GPU options, by index (mixed pools name the decode pool's)
  LatencyPercentile ttft_percentile = LatencyPercentile::P99, tpot_percentile = LatencyPercentile::P99;
  double target_qps = 0;
  int max_gpus = 0;
  json slo;
  json accuracy;  // tier of the cost model behind the cheapest deployment (or the first GPU)
  SpaceCounts space;  // layouts planned (replica counts not counted), pruned, simulated
  int64_t requests_simulated = 0;
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

struct RunOptions {
  // A candidate differing from another only in max_num_seqs takes that one's
  // central outcome when its run proves them the same (search/candidate_reuse.hpp);
  // off: every candidate runs (the test that reuse changes no outcome).
  bool reuse_runs = true;
  std::vector<int>* reused_from = nullptr;  // per candidate: whose run it took, -1 when it ran
};

// The plan's runs through the search explorer: every candidate at the central
// bound (or its proven sibling's outcome), then the interval points at the
// low and high bounds; `for_each` places the runs (search/explorer.hpp).
// rank_deployment_search(spec, plan, runs.central, runs.low, runs.high) answers.
ExplorerRuns<CandidateOutcome> run_deployment_plan(const DeploymentSearchSpec& spec, const Plan& plan,
                                                   const ForEach& for_each, const RunOptions& options = {});

}  // namespace sightline::search
