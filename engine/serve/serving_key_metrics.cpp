#include "serve/serving_key_metrics.hpp"

#include <functional>

#include "scenario/metric_catalogue.hpp"

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
FigureGetter real(std::function<double(const M&)> get) {
  return [=](const ServingFigures& f) { return number(get(*f.metrics)); };
}
FigureGetter count(std::function<int64_t(const M&)> get) {
  return [=](const ServingFigures& f) { return integer(get(*f.metrics)); };
}
// A figure of an optional block of the metrics: missing without the block.
template <class Block>
FigureGetter in_block(std::optional<Block> M::*block, std::function<ServingFigure(const Block&)> get) {
  return [=](const ServingFigures& f) { return (f.metrics->*block) ? get(*(f.metrics->*block)) : ServingFigure{}; };
}
FigureGetter capacity(std::function<ServingFigure(const ServingCapacity&)> get) {
  return [=](const ServingFigures& f) { return get(f.details->capacity); };
}
FigureGetter quantization(std::function<ServingFigure(const QuantizationFigures&)> get) {
  return [=](const ServingFigures& f) { return f.quantization ? get(*f.quantization) : ServingFigure{}; };
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

// Every serving id of the catalogue (a unit test holds the two lists equal).
const std::map<std::string, FigureGetter>& serving_getters() {
  using S = Summary;
  static const std::map<std::string, FigureGetter> g = {
      {"e2e_p50_s", dist(&M::e2e_s, &S::p50)},
      {"e2e_p99_s", dist(&M::e2e_s, &S::p99)},
      {"e2e_mean_s", dist(&M::e2e_s, &S::mean)},
      {"ttft_p50_ms", dist(&M::ttft_ms, &S::p50)},
      {"ttft_p99_ms", dist(&M::ttft_ms, &S::p99)},
      {"ttft_mean_ms", dist(&M::ttft_ms, &S::mean)},
      {"ttft_stddev_ms", dist(&M::ttft_ms, &S::stddev)},
      {"tpot_p50_ms", dist(&M::tpot_ms, &S::p50)},
      {"tpot_p99_ms", dist(&M::tpot_ms, &S::p99)},
      {"tpot_mean_ms", dist(&M::tpot_ms, &S::mean)},
      {"itl_p99_ms", dist(&M::itl_ms, &S::p99)},
      {"itl_max_ms", dist(&M::itl_ms, &S::max)},
      {"decode_tokens_per_s",
       [](const ServingFigures& f) { return figure_or_missing(f.metrics->decode_tokens_per_s_per_request); }},
      {"output_tokens_per_s", real([](const M& m) { return m.throughput.output_tokens_per_s; })},
      {"total_tokens_per_s", real([](const M& m) { return m.throughput.total_tokens_per_s; })},
      {"requests_per_s", real([](const M& m) { return m.throughput.requests_per_s; })},
      {"output_tokens_per_s_per_gpu", real([](const M& m) { return m.throughput.output_tokens_per_s_per_gpu; })},
      {"goodput_requests_per_s", in_block<M::Goodput>(&M::goodput, [](const M::Goodput& b) { return number(b.requests_per_s); })},
      {"slo_attainment", in_block<M::Goodput>(&M::goodput, [](const M::Goodput& b) { return number(b.slo_attainment); })},
      {"max_qps", [](const ServingFigures& f) { return figure_or_missing(f.max_qps); }},
      {"queue_depth_max", count([](const M& m) { return m.concurrency.waiting_max; })},
      {"queue_depth_mean", real([](const M& m) { return m.concurrency.waiting_mean; })},
      {"queueing_p99_ms", dist(&M::queueing_ms, &S::p99)},
      {"running_max", count([](const M& m) { return m.concurrency.running_max; })},
      {"running_mean", real([](const M& m) { return m.concurrency.running_mean; })},
      {"batch_size_mean", real([](const M& m) { return m.concurrency.batch_size_mean; })},
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
      {"kv_memory_utilization", real([](const M& m) { return m.kv_cache.token_utilization; })},
      {"kv_fragmentation", real([](const M& m) { return m.kv_cache.fragmentation; })},
      {"preemptions", count([](const M& m) { return m.kv_cache.preemptions; })},
      {"kv_per_token_KiB", capacity([](const ServingCapacity& c) { return number(c.kv_KiB_per_token); })},
      {"kv_GiB_per_max_len_request", capacity([](const ServingCapacity& c) { return number(c.kv_GiB_per_max_len_request); })},
      {"kv_reduction_vs_mha", capacity([](const ServingCapacity& c) {
         return c.versus_mha ? number(c.versus_mha->kv_reduction_vs_mha) : ServingFigure{};
       })},
      {"max_concurrent_at_max_len", capacity([](const ServingCapacity& c) { return integer(c.max_concurrent_at_max_len); })},
      {"kv_capacity_tokens", capacity([](const ServingCapacity& c) { return integer(c.kv_tokens_per_replica); })},
      {"weights_GiB", [](const ServingFigures& f) { return number(f.details->first_pool_weights_GiB); }},
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
      {"energy_per_output_token_J", real([](const M& m) { return m.energy.per_output_token_J; })},
      {"usd_per_million_output_tokens",
       in_block<M::Cost>(&M::cost, [](const M::Cost& b) { return number(b.usd_per_million_output_tokens); })},
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
  return g;
}

}  // namespace serving_key_figures

bool serving_metric_has_field(const std::string& id) { return serving_key_figures::serving_getters().count(id) > 0; }

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
  const serving_key_figures::ServingFigure v = it->second(f);
  k.kind = v.kind;
  k.value = v.value;
  if (v.kind == KeyMetric::Kind::Missing) k.reason = v.reason;
  return k;
}

}  // namespace sightline::serve
