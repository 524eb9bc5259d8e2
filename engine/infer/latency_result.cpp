#include "infer/latency_result.hpp"

#include <map>
#include <optional>

#include "scenario/metric_catalogue.hpp"

namespace sightline {

// Named (not anonymous) so that its short helper names cannot meet another
// file's in a unity build.
namespace latency_key_figures {

// How a latency figure is read from the typed result: a field of its
// metrics, one of its floors, or the cost (none without a GPU price). Plain
// data, not a function per row: this is in the page's wasm, whose first load
// is within a few KB of its budget.
struct Getter {
  double LatencyResult::Metrics::*metric = nullptr;
  double LatencyResult::*floor = nullptr;  // else the cost
};
Getter metric(double LatencyResult::Metrics::*field) { return {field, nullptr}; }
Getter floor_ms(double LatencyResult::*field) { return {nullptr, field}; }
Getter cost_figure() { return {}; }

std::optional<double> value(const Getter& g, const LatencyResult& r) {
  if (g.metric) return r.metrics.*g.metric;
  if (g.floor) return r.*g.floor;
  if (!r.metrics.has_cost) return std::nullopt;
  return r.metrics.usd_per_million_output_tokens;
}

// Every latency metric's getter, by id: the getter column of the one latency
// metric table (scenario/latency_metric_table.hpp), whose other columns are
// the catalogue's words.
const std::map<std::string, Getter>& getters() {
  using R = LatencyResult;
  static const std::map<std::string, Getter> g = {
#define LATENCY_METRIC(id, label, unit, pointer, needs, description, speed, getter) {id, getter},
#include "scenario/latency_metric_table.hpp"
  };
  return g;
}

// Latency metric `id`, labelled from the catalogue and valued from the typed result.
KeyMetric latency_metric(const std::string& id, const LatencyResult& r) {
  KeyMetric k;
  k.id = id;
  if (const MetricInfo* info = find_metric(MetricKind::kLatency, id)) {
    k.label = info->label;
    k.unit = info->unit;
  }
  const auto it = getters().find(id);
  if (it == getters().end()) return k;
  if (const std::optional<double> v = value(it->second, r)) {
    k.kind = KeyMetric::Kind::Number;
    k.value = *v;
  }
  return k;
}

}  // namespace latency_key_figures

// The catalogue's default latency key metrics (a latency scenario names none),
// labelled from the catalogue and valued from the typed fields.
KeyMetrics key_metrics(const LatencyResult& r) {
  KeyMetrics out;
  for (const std::string& id : default_key_metrics(MetricKind::kLatency)) out.push_back(latency_key_figures::latency_metric(id, r));
  return out;
}

json to_json(const LatencyResult& x) {
  json r = to_json(x.header);
  r["deployment"] = {{"gpu", x.gpu},
                     {"gpus", x.tp * x.pp},
                     {"tp", x.tp},
                     {"pp", x.pp},
                     {"weights", dtype_name(x.weights)},
                     {"kv_cache", dtype_name(x.kv_cache)}};
  r["workload"] = {{"prompt_tokens", x.prompt_tokens},
                   {"output_tokens", x.output_tokens},
                   {"batch_size", x.batch_size}};
  const LatencyResult::Metrics& m = x.metrics;
  r["metrics"] = {{"ttft_ms", m.ttft_ms},
                  {"tpot_ms", m.tpot_ms},
                  {"e2e_ms", m.e2e_ms},
                  {"output_tokens_per_s", m.output_tokens_per_s},
                  {"output_tokens_per_s_per_gpu", m.output_tokens_per_s_per_gpu},
                  {"decode_tokens_per_s", m.decode_tokens_per_s},
                  {"prefill_tokens_per_s", m.prefill_tokens_per_s},
                  {"energy_J_per_output_token", m.energy_J_per_output_token},
                  {"prefill_mfu", m.prefill_mfu},
                  {"prefill_mbu", m.prefill_mbu},
                  {"decode_mfu", m.decode_mfu},
                  {"decode_mbu", m.decode_mbu}};
  if (m.has_cost) r["metrics"]["usd_per_million_output_tokens"] = m.usd_per_million_output_tokens;
  r["key_metrics"] = key_metrics_to_json(key_metrics(x));
  r["headline_metrics"] = headline_metrics_json(MetricKind::kLatency, [](const std::string&) { return true; });
  r["intervals_80"] = {{"ttft_ms", {x.ttft_interval.low_ms, x.ttft_interval.high_ms}},
                       {"tpot_ms", {x.tpot_interval.low_ms, x.tpot_interval.high_ms}},
                       {"e2e_ms", {x.e2e_interval.low_ms, x.e2e_interval.high_ms}}};
  r["cost_model"] = {{"tier", x.cost_tier}, {"provenance", x.provenance}, {"software_stack", x.software_stack}};
  r["roofline"] = {{"peak_tflops", x.peak_tflops}, {"hbm_bandwidth_GBps", x.hbm_bandwidth_GBps}};
  r["floors"] = {{"decode_weight_read_ms", x.decode_weight_read_floor_ms},
                 {"prefill_compute_ms", x.prefill_compute_floor_ms}};
  r["memory_per_gpu"] = x.memory.to_json();
  r["breakdown"] = {{"prefill", x.prefill_breakdown.to_json(1)},
                    {"decode_per_step", x.decode_breakdown.to_json(x.decode_steps)},
                    {"prefill_families", x.prefill_breakdown.families_json(1)},
                    {"decode_families_per_step", x.decode_breakdown.families_json(x.decode_steps)}};
  return r;
}

}  // namespace sightline
