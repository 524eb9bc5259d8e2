#include "serve/serving_key_metrics.hpp"

#include <functional>

#include "scenario/metric_catalogue.hpp"
#include "serve/headline.hpp"

namespace sightline::serve {

json QuantizationFigures::to_json() const {
  return {{"weights", weights},
          {"unquantized_weights", unquantized_weights},
          {"context_tokens", context_tokens},
          {"decode_step_ms", decode_step_ms},
          {"decode_step_ms_unquantized", decode_step_ms_unquantized},
          {"decode_speedup", decode_speedup},
          {"prefill_ms", prefill_ms},
          {"prefill_ms_unquantized", prefill_ms_unquantized},
          {"prefill_speedup", prefill_speedup},
          {"weights_GiB", weights_GiB},
          {"weights_GiB_unquantized", weights_GiB_unquantized},
          {"weight_reduction", weight_reduction},
          {"unquantized_fits", unquantized_fits},
          {"unquantized_kv_blocks", unquantized_kv_blocks},
          {"note", "batch-1 steps priced on the first pool's GPUs with the same tp/pp"}};
}

// Named (not anonymous) so that its short helper names cannot meet another
// file's in a unity build.
namespace serving_key_figures {

using M = ServingMetrics;
using Kind = KeyMetric::Kind;

// One figure as a key metric holds it: its kind (Missing: the result has no
// such figure), its value and, for an empty distribution, the reason.
struct ServingFigure {
  Kind kind = Kind::Missing;
  double value = 0;
  std::string reason;
};
using FigureGetter = std::function<ServingFigure(const ServingFigures&)>;

// One serving figure: its catalogue id, how it is read from the typed
// figures, and the names it goes by in a compare block (compare.ratio: this /
// baseline; compare.speedup: baseline / this), "" where it is not compared.
// A figure compared without a catalogue id of its own has an empty id.
struct FigureRow {
  std::string id;
  FigureGetter get;
  std::string ratio = "", speedup = "";
};

ServingFigure number(double v) { return {Kind::Number, v, ""}; }
ServingFigure integer(int64_t v) { return {Kind::Integer, static_cast<double>(v), ""}; }
ServingFigure figure_or_missing(const std::optional<double>& v) { return v ? number(*v) : ServingFigure{}; }

// A statistic of a distribution: missing, with the distribution's reason, when it has no sample.
ServingFigure statistic(const Summary& s, double Summary::*field) {
  return s.empty() ? ServingFigure{Kind::Missing, 0, s.reason} : number(s.*field);
}

FigureGetter dist(Summary M::*d, double Summary::*field) {
  return [=](const ServingFigures& f) { return statistic(f.metrics->*d, field); };
}
// These helpers take the row's reading as a plain function pointer (each
// row's capture-free lambda converts to one), not a std::function: a
// std::function per row instantiated its own wrapper functions, and this
// file's wasm code went from 63.2 KB to 38.3 KB without them (2026-11-29).
FigureGetter real(double (*get)(const M&)) {
  return [=](const ServingFigures& f) { return number(get(*f.metrics)); };
}
FigureGetter count(int64_t (*get)(const M&)) {
  return [=](const ServingFigures& f) { return integer(get(*f.metrics)); };
}
// A figure of an optional block of the metrics: missing without the block.
template <class Block>
FigureGetter in_block(std::optional<Block> M::*block, ServingFigure (*get)(const Block&)) {
  return [=](const ServingFigures& f) { return (f.metrics->*block) ? get(*(f.metrics->*block)) : ServingFigure{}; };
}
FigureGetter capacity(ServingFigure (*get)(const ServingCapacity&)) {
  return [=](const ServingFigures& f) { return get(f.details->capacity); };
}
FigureGetter quantization(ServingFigure (*get)(const QuantizationFigures&)) {
  return [=](const ServingFigures& f) { return f.quantization ? get(*f.quantization) : ServingFigure{}; };
}
// A figure of the steady window the verdict judges: missing without a judged window under an SLO.
FigureGetter steady(double (*get)(const ServingHeadline&)) {
  return [=](const ServingFigures& f) {
    return f.headline && f.headline->judged && f.headline->has_slo ? number(get(*f.headline)) : ServingFigure{};
  };
}
// compare.ratio / compare.speedup by name: missing without one baseline, without the pair, or over a zero.
FigureGetter compared(std::map<std::string, std::optional<double>> CompareFigures::*which, std::string name) {
  return [=](const ServingFigures& f) {
    if (!f.compare) return ServingFigure{};
    const auto& m = f.compare->*which;
    const auto it = m.find(name);
    return it == m.end() ? ServingFigure{} : figure_or_missing(it->second);
  };
}
FigureGetter ratio(std::string name) { return compared(&CompareFigures::ratio, std::move(name)); }
FigureGetter speedup(std::string name) { return compared(&CompareFigures::speedup, std::move(name)); }

// The hit rate of the offload tier `i`; missing with fewer tiers.
ServingFigure tier_hit_rate(const M::KvOffload& b, size_t i) {
  return i < b.tiers.size() ? number(b.tiers[i].hit_token_fraction) : ServingFigure{};
}

// Latency distributions, throughput, goodput and queues.
std::vector<FigureRow> latency_getters() {
  using S = Summary;
  return {
      {"e2e_p50_s", dist(&M::e2e_s, &S::p50), "e2e_p50_s"},
      {"e2e_p99_s", dist(&M::e2e_s, &S::p99), "e2e_p99_s"},
      {"e2e_mean_s", dist(&M::e2e_s, &S::mean), "e2e_mean_s", "e2e_mean"},
      {"ttft_p50_ms", dist(&M::ttft_ms, &S::p50), "ttft_p50_ms"},
      {"ttft_p99_ms", dist(&M::ttft_ms, &S::p99), "ttft_p99_ms"},
      {"ttft_mean_ms", dist(&M::ttft_ms, &S::mean), "ttft_mean_ms", "ttft_mean"},
      {"ttft_stddev_ms", dist(&M::ttft_ms, &S::stddev), "ttft_stddev_ms"},
      {"tpot_p50_ms", dist(&M::tpot_ms, &S::p50), "tpot_p50_ms"},
      {"tpot_p99_ms", dist(&M::tpot_ms, &S::p99), "tpot_p99_ms"},
      {"tpot_mean_ms", dist(&M::tpot_ms, &S::mean), "tpot_mean_ms", "tpot_mean"},
      {"itl_p99_ms", dist(&M::itl_ms, &S::p99), "itl_p99_ms"},
      {"itl_max_ms", dist(&M::itl_ms, &S::max)},
      {"itl_mean_ms", dist(&M::itl_ms, &S::mean)},
      {"itl_p50_ms", dist(&M::itl_ms, &S::p50)},
      {"itl_stddev_ms", dist(&M::itl_ms, &S::stddev)},
      {"tpot_stddev_ms", dist(&M::tpot_ms, &S::stddev)},
      {"ttft_count", count([](const M& m) { return m.ttft_ms.count; })},
      {"tpot_count", count([](const M& m) { return m.tpot_ms.count; })},
      {"itl_count", count([](const M& m) { return m.itl_ms.count; })},
      {"decode_tokens_per_s",
       [](const ServingFigures& f) { return figure_or_missing(f.metrics->decode_tokens_per_s_per_request); }},
      {"output_tokens_per_s", real([](const M& m) { return m.throughput.output_tokens_per_s; }), "output_tokens_per_s"},
      {"total_tokens_per_s", real([](const M& m) { return m.throughput.total_tokens_per_s; })},
      {"requests_per_s", real([](const M& m) { return m.throughput.requests_per_s; }), "requests_per_s"},
      {"output_tokens_per_s_per_gpu", real([](const M& m) { return m.throughput.output_tokens_per_s_per_gpu; }), "output_tokens_per_s_per_gpu"},
      {"goodput_requests_per_s", in_block<M::Goodput>(&M::goodput, [](const M::Goodput& b) { return number(b.requests_per_s); }), "goodput_requests_per_s"},
      {"slo_attainment", in_block<M::Goodput>(&M::goodput, [](const M::Goodput& b) { return number(b.slo_attainment); })},
      {"steady_goodput_requests_per_s", steady([](const ServingHeadline& h) { return h.goodput_qps; })},
      {"steady_slo_attainment", steady([](const ServingHeadline& h) { return h.slo_attainment; })},
      {"max_qps", [](const ServingFigures& f) { return figure_or_missing(f.max_qps); }},
      {"queue_depth_max", count([](const M& m) { return m.concurrency.waiting_max; })},
      {"queue_depth_mean", real([](const M& m) { return m.concurrency.waiting_mean; })},
      {"queueing_p99_ms", dist(&M::queueing_ms, &S::p99)},
      {"running_max", count([](const M& m) { return m.concurrency.running_max; }), "running_max"},
      {"running_mean", real([](const M& m) { return m.concurrency.running_mean; }), "running_mean"},
      {"batch_size_mean", real([](const M& m) { return m.concurrency.batch_size_mean; })},
  };
}

// GPU use, the KV cache and its capacity, weights.
std::vector<FigureRow> gpu_and_kv_getters() {
  using S = Summary;
  return {
      {"gpu_utilization", real([](const M& m) { return m.gpu.busy_fraction; })},
      {"mfu_wall", real([](const M& m) { return m.gpu.mfu.over_wall_time; })},
      {"mfu_busy", real([](const M& m) { return m.gpu.mfu.over_busy_time; })},
      {"mfu_step_p50", [](const ServingFigures& f) { return statistic(f.metrics->gpu.mfu.per_step, &S::p50); }},
      {"mfu_step_p90", [](const ServingFigures& f) { return statistic(f.metrics->gpu.mfu.per_step, &S::p90); }},
      {"mbu_wall", real([](const M& m) { return m.gpu.mbu.over_wall_time; })},
      {"mbu_busy", real([](const M& m) { return m.gpu.mbu.over_busy_time; })},
      {"mbu_step_p50", [](const ServingFigures& f) { return statistic(f.metrics->gpu.mbu.per_step, &S::p50); }},
      {"mbu_step_p90", [](const ServingFigures& f) { return statistic(f.metrics->gpu.mbu.per_step, &S::p90); }},
      {"mean_power_per_gpu_W", real([](const M& m) { return m.energy.mean_power_per_gpu_W; })},
      {"kv_peak_utilization", real([](const M& m) { return m.kv_cache.peak_block_utilization; })},
      {"kv_memory_utilization", real([](const M& m) { return m.kv_cache.token_utilization; }), "kv_token_utilization"},
      // Compared only (compare_kv_peak_ratio reads its ratio): no catalogue id of its own.
      {"", count([](const M& m) { return m.kv_cache.peak_blocks_used; }), "kv_peak_blocks_used"},
      {"kv_fragmentation", real([](const M& m) { return m.kv_cache.fragmentation; })},
      {"preemptions", count([](const M& m) { return m.kv_cache.preemptions; }), "preemptions"},
      {"kv_per_token_KiB", capacity([](const ServingCapacity& c) { return number(c.kv_KiB_per_token); }), "kv_KiB_per_token"},
      {"kv_GiB_per_max_len_request", capacity([](const ServingCapacity& c) { return number(c.kv_GiB_per_max_len_request); })},
      {"kv_reduction_vs_mha", capacity([](const ServingCapacity& c) {
         return c.versus_mha ? number(c.versus_mha->kv_reduction_vs_mha) : ServingFigure{};
       })},
      {"max_concurrent_at_max_len", capacity([](const ServingCapacity& c) { return integer(c.max_concurrent_at_max_len); }), "max_concurrent_at_max_len"},
      {"kv_capacity_tokens", capacity([](const ServingCapacity& c) { return integer(c.kv_tokens_per_replica); }), "kv_tokens_per_replica"},
      {"weights_GiB", [](const ServingFigures& f) { return number(f.details->first_pool_weights_GiB); }},
  };
}

// Prefix cache, sessions, offload tiers, speculative decoding, LoRA, KV transfers, MoE, energy and cost.
std::vector<FigureRow> feature_getters() {
  using S = Summary;
  return {
      {"prefix_hit_rate",
       in_block<M::PrefixCache>(&M::prefix_cache, [](const M::PrefixCache& b) { return number(b.cached_token_fraction); })},
      {"session_ttft_first_mean_ms", in_block<M::Sessions>(&M::sessions, [](const M::Sessions& b) { return statistic(b.ttft_first_turn_ms, &Summary::mean); })},
      {"session_ttft_returning_mean_ms", in_block<M::Sessions>(&M::sessions, [](const M::Sessions& b) { return statistic(b.ttft_returning_turn_ms, &Summary::mean); })},
      {"session_ttft_returning_p99_ms", in_block<M::Sessions>(&M::sessions, [](const M::Sessions& b) { return statistic(b.ttft_returning_turn_ms, &Summary::p99); })},
      {"session_duration_mean_s", in_block<M::Sessions>(&M::sessions, [](const M::Sessions& b) { return statistic(b.session_duration_s, &Summary::mean); })},
      {"session_returning_hit_rate", in_block<M::Sessions>(&M::sessions, [](const M::Sessions& b) { return number(b.returning_cached_token_fraction); })},
      {"offload_hbm_hit_rate", in_block<M::KvOffload>(&M::kv_offload, [](const M::KvOffload& b) { return number(b.hbm_hit_token_fraction); })},
      {"offload_tier1_hit_rate", in_block<M::KvOffload>(&M::kv_offload, [](const M::KvOffload& b) { return tier_hit_rate(b, 0); })},
      {"offload_tier2_hit_rate", in_block<M::KvOffload>(&M::kv_offload, [](const M::KvOffload& b) { return tier_hit_rate(b, 1); })},
      {"offload_exposed_reload_s", in_block<M::KvOffload>(&M::kv_offload, [](const M::KvOffload& b) { return number(b.exposed_reload_time_s); })},
      {"spec_tokens_per_step",
       in_block<M::Speculative>(&M::speculative, [](const M::Speculative& b) { return number(b.tokens_per_verify_step); })},
      {"spec_expected_tokens_per_step", in_block<M::Speculative>(&M::speculative, [](const M::Speculative& b) {
         return number(b.expected_tokens_per_verify_step);
       })},
      {"lora_load_fraction", in_block<M::Lora>(&M::lora, [](const M::Lora& b) { return number(b.load_time_fraction); })},
      {"lora_adapter_loads", in_block<M::Lora>(&M::lora, [](const M::Lora& b) { return integer(b.adapter_loads); })},
      {"lora_gemm_fraction", in_block<M::Lora>(&M::lora, [](const M::Lora& b) { return number(b.lora_gemm_time_fraction); })},
      {"kv_transfer_mean_ms", in_block<M::KvTransfer>(&M::kv_transfer, [](const M::KvTransfer& b) {
         return statistic(b.transfer_ms, &S::mean);
       })},
      {"kv_transfer_p99_ms", in_block<M::KvTransfer>(&M::kv_transfer, [](const M::KvTransfer& b) {
         return statistic(b.transfer_ms, &S::p99);
       })},
      {"moe_expert_time_fraction", in_block<M::Moe>(&M::moe, [](const M::Moe& b) { return number(b.expert_time_fraction); })},
      {"energy_per_output_token_J", real([](const M& m) { return m.energy.per_output_token_J; }), "energy_per_output_token_J"},
      {"usd_per_million_output_tokens",
       in_block<M::Cost>(&M::cost, [](const M::Cost& b) { return number(b.usd_per_million_output_tokens); })},
  };
}

// The quantization comparison and the compare block's ratios and speedups.
std::vector<FigureRow> quantization_and_compare_getters() {
  return {
      {"quant_decode_speedup", quantization([](const QuantizationFigures& q) { return number(q.decode_speedup); })},
      {"quant_weight_reduction", quantization([](const QuantizationFigures& q) { return number(q.weight_reduction); })},
      {"quant_unquantized_fits", quantization([](const QuantizationFigures& q) {
         return ServingFigure{Kind::Bool, q.unquantized_fits ? 1.0 : 0.0, ""};
       })},
      {"quant_decode_step_ms", quantization([](const QuantizationFigures& q) { return number(q.decode_step_ms); })},
      {"quant_decode_step_unquantized_ms",
       quantization([](const QuantizationFigures& q) { return number(q.decode_step_ms_unquantized); })},
      {"quant_prefill_speedup", quantization([](const QuantizationFigures& q) { return number(q.prefill_speedup); })},
      {"quant_weights_GiB", quantization([](const QuantizationFigures& q) { return number(q.weights_GiB); })},
      {"quant_weights_unquantized_GiB",
       quantization([](const QuantizationFigures& q) { return number(q.weights_GiB_unquantized); })},
      {"compare_throughput_ratio", ratio("output_tokens_per_s")},
      {"compare_goodput_ratio", ratio("goodput_requests_per_s")},
      {"compare_ttft_mean_ratio", ratio("ttft_mean_ms")},
      {"compare_ttft_p99_ratio", ratio("ttft_p99_ms")},
      {"compare_ttft_stddev_ratio", ratio("ttft_stddev_ms")},
      {"compare_tpot_mean_ratio", ratio("tpot_mean_ms")},
      {"compare_tpot_p99_ratio", ratio("tpot_p99_ms")},
      {"compare_e2e_p50_ratio", ratio("e2e_p50_s")},
      {"compare_running_mean_ratio", ratio("running_mean")},
      {"compare_running_max_ratio", ratio("running_max")},
      {"compare_kv_capacity_ratio", ratio("kv_tokens_per_replica")},
      {"compare_kv_peak_ratio", ratio("kv_peak_blocks_used")},
      {"compare_throughput_per_gpu_ratio", ratio("output_tokens_per_s_per_gpu")},
      {"compare_decode_speedup", speedup("tpot_mean")},
      {"compare_e2e_speedup", speedup("e2e_mean")},
      {"compare_requests_ratio", ratio("requests_per_s")},
      {"compare_ttft_p50_ratio", ratio("ttft_p50_ms")},
      {"compare_tpot_p50_ratio", ratio("tpot_p50_ms")},
      {"compare_itl_p99_ratio", ratio("itl_p99_ms")},
      {"compare_e2e_mean_ratio", ratio("e2e_mean_s")},
      {"compare_e2e_p99_ratio", ratio("e2e_p99_s")},
      {"compare_kv_token_utilization_ratio", ratio("kv_token_utilization")},
      {"compare_preemptions_ratio", ratio("preemptions")},
      {"compare_energy_ratio", ratio("energy_per_output_token_J")},
      {"compare_kv_per_token_ratio", ratio("kv_KiB_per_token")},
      {"compare_max_concurrent_ratio", ratio("max_concurrent_at_max_len")},
      {"compare_ttft_speedup", speedup("ttft_mean")},
  };
}

// Token and request counts shown beside the headline metrics.
std::vector<FigureRow> count_getters() {
  return {
      {"input_tokens_per_s", real([](const M& m) { return m.throughput.input_tokens_per_s; })},
      {"tokens_per_step_mean", real([](const M& m) { return m.concurrency.tokens_per_step_mean; })},
      {"kv_blocks_total", count([](const M& m) { return m.kv_cache.blocks_total; })},
      {"kv_recomputes", count([](const M& m) { return m.kv_cache.recomputes; })},
      {"kv_swaps_out", count([](const M& m) { return m.kv_cache.swaps_out; })},
      {"requests_total", count([](const M& m) { return m.requests.total; })},
      {"requests_completed", count([](const M& m) { return m.requests.completed; })},
      {"requests_dropped", count([](const M& m) { return m.requests.dropped; })},
      {"requests_unfinished", count([](const M& m) { return m.requests.unfinished; })},
      {"duration_s", real([](const M& m) { return m.duration_s; })},
  };
}

// Every serving figure: one row per serving id of the catalogue (a unit
// test holds the two lists equal), plus the compared figures without an id.
const std::vector<FigureRow>& serving_figure_rows() {
  static const std::vector<FigureRow> rows = [] {
    std::vector<FigureRow> all;
    for (auto part : {latency_getters, gpu_and_kv_getters, feature_getters, quantization_and_compare_getters, count_getters})
      for (FigureRow& row : part()) all.push_back(std::move(row));
    return all;
  }();
  return rows;
}

// The rows by id.
const std::map<std::string, const FigureRow*>& serving_getters() {
  static const std::map<std::string, const FigureRow*> by_id = [] {
    std::map<std::string, const FigureRow*> m;
    for (const FigureRow& row : serving_figure_rows())
      if (!row.id.empty()) m.emplace(row.id, &row);
    return m;
  }();
  return by_id;
}

}  // namespace serving_key_figures

void for_each_compared_figure(const ServingFigures& run, const ServingFigures& baseline,
                              const std::function<void(const char* group, const std::string& name, double num, double den,
                                                       const char* why)>& put) {
  using serving_key_figures::ServingFigure;
  for (const serving_key_figures::FigureRow& row : serving_key_figures::serving_figure_rows()) {
    if (row.ratio.empty() && row.speedup.empty()) continue;
    const ServingFigure a = row.get(run), b = row.get(baseline);
    if (a.kind == KeyMetric::Kind::Missing || b.kind == KeyMetric::Kind::Missing) continue;
    if (!row.ratio.empty()) put("ratio", row.ratio, a.value, b.value, "the baseline's value is 0");
    if (!row.speedup.empty()) put("speedup", row.speedup, b.value, a.value, "this scenario's value is 0");
  }
}

bool serving_metric_has_field(const std::string& id) { return serving_key_figures::serving_getters().count(id) > 0; }

std::vector<std::string> serving_figure_ids() {
  std::vector<std::string> ids;
  for (const auto& [id, row] : serving_key_figures::serving_getters()) ids.push_back(id);
  return ids;
}

KeyMetric serving_key_metric(const std::string& id, const ServingFigures& f) {
  KeyMetric k;
  k.id = id;
  if (const MetricInfo* info = find_metric(MetricKind::kServing, id)) {
    k.label = info->label;
    k.unit = info->unit;
  }
  const auto& getters = serving_key_figures::serving_getters();
  const auto it = getters.find(id);
  if (it == getters.end()) return k;
  const serving_key_figures::ServingFigure v = it->second->get(f);
  k.kind = v.kind;
  k.value = v.value;
  if (v.kind == KeyMetric::Kind::Missing) k.reason = v.reason;
  return k;
}

}  // namespace sightline::serve
