#pragma once
// The validated configuration of a serving simulation (serving mode
// "simulate"): workload, cluster, scheduler, KV cache, techniques, SLO,
// outputs and work limits. Read by scenario/read_simulation.cpp (workload in
// read_workload.cpp, cluster, scheduler, KV cache and speculative decoding in
// read_cluster.cpp); every default is
// explicit here and in docs/serving.md's table.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "model/operators.hpp"
#include "scenario/spec_acceptance.hpp"

namespace sightline {
struct Scenario;
}

namespace sightline::serve {

enum class ArrivalProcess { Poisson, Gamma, Fixed, AllAtOnce, Trace, ClosedLoop };
enum class LengthDist { Fixed, Uniform, Normal, Lognormal, Zipf };
enum class RouterKind { RoundRobin, LeastOutstanding, LeastKvLoad, PrefixAffinity, SessionAffinity, KvAware };
enum class PoolRole { Mixed, Prefill, Decode };
enum class SchedulerPolicy { Continuous, ChunkedPrefill, Static };
enum class Priority { PrefillFirst, DecodeFirst, PrefillAlone, Fcfs };
enum class KvAllocation { Paged, Contiguous };
enum class PreemptionMode { Recompute, Swap };
enum class KvAdmission { OnDemand, ToCompletion };
enum class SpecMethod { None, Draft, Ngram, Mtp, Eagle3 };
enum class LoraTargets { Attention, AllLinear };

// One row of an inline trace: arrival time, prompt and output lengths, and an
// optional shared-prefix group with its prefix length.
struct TraceRow {
  double arrival_s = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  int64_t prefix_group = -1;
  int64_t prefix_tokens = 0;
};

struct ArrivalSpec {
  ArrivalProcess process = ArrivalProcess::Poisson;
  double rate_qps = 1.0;
  double cv = 1.0;  // gamma: coefficient of variation of the inter-arrival time
  std::vector<TraceRow> trace;
  // closed_loop: `concurrency` clients, each sending its next request
  // `think_time_s` after its previous one ends (a benchmark's --max-concurrency).
  int64_t concurrency = 0;
  double think_time_s = 0;
  // poisson, gamma, fixed: a client-side cap on requests in flight (0: none),
  // as a benchmark's --request-rate with --max-concurrency applies it: an
  // arrival that finds `max_concurrency` requests in flight waits (FIFO) until
  // one ends, and is sent then; its latencies count from the send.
  int64_t max_concurrency = 0;
};

struct LengthSpec {
  LengthDist dist = LengthDist::Fixed;
  double value = 0;          // fixed
  double mean = 0;           // normal, lognormal (mean of the distribution itself)
  double stddev = 0;         // normal
  double cv = 0;             // lognormal: stddev / mean
  double theta = 1.0;        // zipf exponent
  int64_t min = 1;           // clamp (uniform / zipf: the range)
  int64_t max = 0;           // clamp (0: the model's max_model_len)
  int64_t max_possible() const;  // the largest value a draw can take
  // A typical value: the fixed value, the uniform range's middle, the normal
  // or lognormal mean (before the clamp); nullopt for Zipf (no single value).
  std::optional<double> typical() const;
};

struct SharedPrefixSpec {
  bool enabled = false;
  int64_t tokens = 0;             // prefix length
  double request_fraction = 1.0;  // share of requests that start with a prefix
  int groups = 1;                 // distinct prefixes (chosen uniformly)
};

// A span of time drawn per use: fixed, uniform, exponential or lognormal (seconds).
enum class TimeDist { Fixed, Uniform, Exponential, Lognormal };
struct TimeSpec {
  TimeDist dist = TimeDist::Fixed;
  double value_s = 0;             // fixed
  double min_s = 0, max_s = 0;    // uniform
  double mean_s = 0;              // exponential, lognormal
  double cv = 0;                  // lognormal: stddev / mean
  double typical_s() const;       // the fixed value, the uniform range's middle, the mean
};

// serving.workload.sessions: multi-turn sessions (chat, agents). Sessions
// arrive by the workload's arrival process; each turn re-sends the session's
// whole context (the previous turn's prompt and output) plus its new input,
// and arrives a think/tool time after the previous turn's last token.
// One turn of a multi-turn trace (serving.workload.sessions.csv).
struct SessionTraceRow {
  int64_t session_id = 0;
  double arrival_s = 0;
  int64_t input_tokens = 0;   // the turn's new tokens
  int64_t output_tokens = 0;
};

struct SessionSpec {
  bool enabled = false;
  // A replayed trace instead of distributions: its turns grouped by session
  // (sessions in order of their first arrival, turns in time order).
  std::vector<SessionTraceRow> trace;
  int64_t num_sessions = 0;          // 0 when driven by duration_s
  LengthSpec turns;                  // turns per session
  LengthSpec first_input;            // new tokens of the first turn (after the system prompt)
  LengthSpec input;                  // new tokens of each returning turn (a tool result, the next message)
  LengthSpec output;                 // output tokens of each turn
  TimeSpec think_time;               // from a turn's last token to the next turn's arrival
  int64_t system_prompt_tokens = 0;  // one prompt every session starts with (shared in the prefix cache)
};

struct WorkloadSpec {
  ArrivalSpec arrival;
  int64_t num_requests = 0;  // 0 when driven by duration_s or a trace
  double duration_s = 0;
  LengthSpec prompt;
  LengthSpec output;
  SharedPrefixSpec prefix;
  SessionSpec sessions;
};

struct PoolSpec {
  std::string name;
  int replicas = 1;
  ParallelLayout layout;
  std::optional<GpuSpec> gpu;  // heterogeneous pools: another GPU than hardware.gpu
  // The link between this pool's GPUs when it is not hardware.intra_node: the
  // pool's "intra_node", else its own GPU's default_intra_node (a GB200 decode
  // pool talks over NVL72 while H100 prefill pools use their HGX NVSwitch).
  std::optional<InterconnectSpec> intra_node;
  PoolRole role = PoolRole::Mixed;
};

struct ClusterSpec {
  RouterKind router = RouterKind::RoundRobin;
  // prefix_affinity: a replica may take a request for its cache only while
  // its outstanding requests are at most load_bound x the candidates' mean + 1
  // (consistent hashing with bounded loads, Mirrokni, Thorup & Zadimoghaddam, SODA 2018).
  double router_load_bound = 1.25;
  bool router_load_bound_given = false;
  std::vector<PoolSpec> pools;
  bool disaggregated = false;
  std::optional<InterconnectSpec> kv_transfer_link;  // disaggregated: prefill -> decode
};

struct SchedulerSpec {
  SchedulerPolicy policy = SchedulerPolicy::Continuous;
  Priority priority = Priority::PrefillFirst;
  int64_t max_num_seqs = 256;
  // Where max_num_seqs came from when the scenario does not give it: the
  // software stack's rule (perf/running_limit.hpp), said in the result; empty:
  // the scenario's value or the generic 256.
  std::string max_num_seqs_source;
  // Where the policy, its priority and budget came from when the scenario
  // names no policy: the software stack's default_scheduler, said in the
  // result; empty: the scenario's policy or the generic continuous one.
  std::string policy_source;
  int64_t max_num_batched_tokens = 0;  // token budget per step (chunked: the chunk size)
  int64_t max_prefill_chunk = 0;       // chunked: most prompt tokens one request gets per step (0: the budget)
  int64_t batch_size = 8;              // static
  double max_wait_ms = 0;              // static: wait this long for a fuller batch
  double cpu_overhead_us = 0;          // scheduler/host time added to every step
};

// One KV offload tier below HBM (serving.kv_cache.offload.tiers): blocks the
// prefix cache evicts from HBM move here (from here to the next tier), and a
// prompt whose prefix is found here reloads it over the tier's link.
struct KvTierSpec {
  std::string name;
  double capacity_GiB = 0;    // per GPU (a shared tier: the whole store)
  double bandwidth_GBps = 0;  // per GPU, tier -> HBM
  double latency_us = 0;      // per reload
  bool shared = false;        // one store for every replica (a network store) instead of one per GPU
  std::string preset;         // the kv_tiers preset it came from, if any (echoed)
};
enum class ReloadOverlap { Layerwise, Serial };

struct KvCacheSpec {
  KvAllocation allocation = KvAllocation::Paged;
  int64_t block_size = 16;
  double gpu_memory_utilization = 0.9;
  double watermark = 0.01;
  PreemptionMode preemption = PreemptionMode::Recompute;
  // When a prompt may enter the KV cache: with its first chunk's blocks free
  // (on demand, growing after), or with its whole prompt and output's.
  KvAdmission admission = KvAdmission::OnDemand;
  // Where the admission came from when the scenario names none: the software
  // stack's default_kv_admission, said in the result; empty otherwise.
  std::string admission_source;
  double swap_space_GiB = 4.0;
  bool prefix_caching = false;
  int64_t max_model_len = 0;  // 0 resolved to the model's max_context
  std::vector<KvTierSpec> offload_tiers;  // empty: HBM only
  ReloadOverlap reload_overlap = ReloadOverlap::Layerwise;
};

struct SpeculativeSpec {
  SpecMethod method = SpecMethod::None;
  std::optional<ModelArch> draft_model;
  int draft_tp = 1;
  int k = 5;
  // Probability that each drafted position is accepted, given the ones before
  // it were (verification stops at the first rejection).
  // 0.7 when not given, for every method: a generic assumption with no single
  // source (one default, so the page's form and the CLI agree). The result says
  // it was assumed; for MTP it cites what DeepSeek measured instead.
  // When not given and presets/spec_acceptance has rows for the method, the
  // rate comes from them (`published` says which, with their spread); 0.7
  // stays the default where no row matches.
  double acceptance_rate = 0.7;
  bool acceptance_assumed = false;  // not given: the default is an assumption, said in the result
  std::optional<AcceptanceEstimate> published;
  double ngram_lookup_us = 20;
};

struct LoraSpec {
  bool enabled = false;
  int adapters = 1;
  int rank = 16;
  int max_adapters_per_batch = 4;
  double load_time_ms = -1;   // < 0: adapter bytes over PCIe
  double popularity_zipf = 0;  // 0: uniform adapter choice; > 0: zipf exponent
  LoraTargets targets = LoraTargets::AllLinear;
};

// How MoE tokens reach experts on other GPUs (DeepEP's two kernel sets).
enum class AllToAllMode {
  Auto,            // low_latency for decode-only steps, high_throughput otherwise
  LowLatency,      // one kernel, every (token, expert) copy sent directly; fp8 dispatch
  HighThroughput,  // a counts exchange first, then one copy per destination GPU
};

struct MoeServingSpec {
  // The busiest expert-parallel rank's routed work over the mean, beyond a
  // step's sampling excess (hot experts after placement). Not given: under
  // expert parallelism, the published default of model/moe_hot_experts.hpp.
  double load_imbalance = 1.0;
  bool load_imbalance_given = false;
  int expert_parallel = 1;
  // Wide EP: experts spread over attention_data_parallel replicas (ep = dp·tp).
  int attention_data_parallel = 1;
  int redundant_experts = 0;    // EPLB's extra expert copies over the EP group
  AllToAllMode all_to_all = AllToAllMode::Auto;
  // Two micro-batches a step, one's all-to-all hidden behind the other's
  // compute (SGLang --enable-two-batch-overlap; serve/two_batch_overlap.hpp).
  bool two_batch_overlap = false;
};

struct ColocatedSpec {
  bool enabled = false;
  std::optional<ModelArch> model;
  double memory_fraction = 0.5;   // share of the KV budget for the second model
  double traffic_fraction = 0.5;  // share of requests for the second model
};

// The SLO as users state it, one object read by the run, the max-QPS search,
// the deployment search and the page. Each bound (0: none) is judged either
// alone at its own percentile (MLPerf / vllm-bench style: "P99 TTFT within
// 500 ms" is "at least 99% of requests have TTFT within 500 ms"), or, when it
// names no percentile, together with the other such bounds: the share of
// requests within all of them at once must reach `attainment` (DistServe
// style). TTFT, TPOT and E2E are per request; ITL is per gap between tokens
// (in the joint share a request meets it when every one of its gaps does).
enum SloMetric : unsigned { kSloTtft = 1u, kSloTpot = 2u, kSloItl = 4u, kSloE2e = 8u };
struct SloSpec {
  bool enabled = false;
  double ttft_ms = 0;  // 0: no bound
  double tpot_ms = 0;
  double itl_ms = 0;
  double e2e_ms = 0;
  double attainment = 0.9;  // required share of requests within every bound that names no percentile
  // Percentile of each metric as a share (0.5, 0.9, 0.95, 0.99); 0: judged in the joint share.
  double ttft_percentile = 0, tpot_percentile = 0, itl_percentile = 0, e2e_percentile = 0;
  double bound_ms(SloMetric m) const;
  double percentile(SloMetric m) const;
};

// One condition of an SLO: the share of requests (of gaps, for ITL alone)
// within the bounds of `metrics` must reach `share`.
struct SloCondition {
  unsigned metrics = 0;  // SloMetric bits
  double share = 0;
};
// The joint condition first (if any bound names no percentile), then one per
// bound with a percentile, in the order TTFT, TPOT, ITL, E2E.
std::vector<SloCondition> slo_conditions(const SloSpec& slo);
// The strictest share any condition asks for (sizes runs to see its misses).
double slo_strictest_share(const SloSpec& slo);
// "P99 TTFT", "TPOT" (joint), for verdict lines.
const char* slo_metric_name(SloMetric m);
json slo_to_json(const SloSpec& slo);

// The steady-state max-QPS search (serving.max_qps_search): bracket, then
// bisect the arrival rate on a verdict that needs a stable queue and an SLO
// attainment whose batch-means interval clears the target.
struct SearchSpec {
  bool enabled = false;
  double min_qps = 0.1;
  double max_qps = 0;                   // 0: grow from the workload's rate
  int iterations = 12;                  // most bisection steps
  double precision = 0.03;              // stop once upper / lower - 1 is at most this
  int64_t num_requests = 600;           // fewest requests per run (runs grow to what L asks for)
  int64_t max_requests_per_run = 60000; // a run never grows past this
  double confidence = 0.9;              // batch-means interval level: 0.8, 0.9, 0.95 or 0.99
};

// serving.steady_state: judge the run at the workload's own rate by the
// capacity search's steady-state verdict, and grow the run (to what the
// measured occupancy asks for, at least doubling, at most 3 times, never past
// max_requests) while the verdict is undecided. One deployment-search
// candidate is one such run.
struct SteadyStateCheckSpec {
  bool enabled = false;
  // One such run is a run of the capacity search at one rate: its cap and
  // interval level by default.
  int64_t max_requests = SearchSpec{}.max_requests_per_run;
  double confidence = SearchSpec{}.confidence;
};

struct OutputSpec {
  bool trace = false;
  int64_t trace_max_steps = 20000;
  int64_t max_request_records = 1000;
  int time_series_points = 500;
};

struct LimitSpec {
  int64_t max_requests = 200000;
  int64_t max_events = 20000000;
  double max_sim_time_s = 86400;
};

struct SimulationSpec {
  WorkloadSpec workload;
  ClusterSpec cluster;
  SchedulerSpec scheduler;
  KvCacheSpec kv;
  SpeculativeSpec speculative;
  LoraSpec lora;
  MoeServingSpec moe;
  ColocatedSpec colocated;
  SloSpec slo;
  std::optional<double> usd_per_gpu_hour;
  SearchSpec search;
  SteadyStateCheckSpec steady_state;
  OutputSpec outputs;
  LimitSpec limits;
  // A benchmark's end (simulated seconds from t = 0; 0: none, the run drains):
  // the run stops there and the requests still in flight are in no figure, as
  // a benchmark tool leaves out the requests it cancels at its max_seconds.
  // Set only by a fit's replay of a run cut in flight
  // (fit/calibration_fit_replay.cpp), never read from a scenario: figures that leave out the
  // slowest, latest requests by construction answer no serving question.
  double stop_at_s = 0;
  std::vector<std::string> key_metrics;
  // Runs of the same workload with a JSON merge patch applied to the scenario
  // ("compare": one {label, patch}, or an array of up to 16 of them), each
  // reported next to this one with ratios.
  struct CompareVariant {
    std::string label;
    json patch;
    std::shared_ptr<const Scenario> scenario;
  };
  std::vector<CompareVariant> compares;
  bool compare_is_array = false;  // the result's "compare" is then an array too
};

const char* to_string(ArrivalProcess v);
const char* to_string(LengthDist v);
const char* to_string(RouterKind v);
const char* to_string(PoolRole v);
const char* to_string(SchedulerPolicy v);
const char* to_string(Priority v);
const char* to_string(KvAllocation v);
const char* to_string(PreemptionMode v);
const char* to_string(KvAdmission v);
const char* to_string(SpecMethod v);

// Reads serving mode "simulate". `serving` is the whole serving object, `s`
// has model, hardware and precision already.
std::shared_ptr<const SimulationSpec> read_simulation(const json& serving, const std::string& path, const Scenario& s,
                                                      ParallelLayout& default_layout);
json simulation_to_json(const SimulationSpec& spec);

}  // namespace sightline::serve
