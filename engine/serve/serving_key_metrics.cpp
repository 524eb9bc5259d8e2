#include "serve/serving_key_metrics.hpp"

#include <algorithm>
#include <functional>

#include "core/error.hpp"
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

// The names a figure goes by in a compare block (compare.ratio: this /
// baseline; compare.speedup: baseline / this), "" where it is not compared:
// the comparison column of scenario/serving_metric_table.hpp.
struct Comparison {
  const char* ratio = "";
  const char* speedup = "";
};
constexpr Comparison not_compared{};
constexpr Comparison compared(const char* ratio, const char* speedup = "") { return {ratio, speedup}; }

// One row of scenario/serving_metric_table.hpp as this layer reads it: the
// catalogue id ("" for a figure that is only compared), the compare names and
// how the figure is read from the typed figures; a compare block's figure
// (SERVING_COMPARE_RESULT) also says which of its groups and names it reads.
struct FigureRow {
  std::string id;
  Comparison comparison;
  FigureGetter get;
  const char* reads_group = "";  // "ratio" or "speedup"; "" for any other figure
  const char* reads_name = "";
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
// A figure of the steady window the verdict judges: missing without a judged
// window, or (`needs_slo`: goodput, attainment) without an SLO.
FigureGetter steady(double (*get)(const ServingHeadline&), bool needs_slo = true) {
  return [=](const ServingFigures& f) {
    const bool judged = f.headline && f.headline->judged && (f.headline->has_slo || !needs_slo);
    return judged ? number(get(*f.headline)) : ServingFigure{};
  };
}
// compare.ratio / compare.speedup by name: missing without one baseline, without the pair, or over a zero.
FigureGetter compare_figure(std::map<std::string, std::optional<double>> CompareFigures::*which, std::string name) {
  return [=](const ServingFigures& f) {
    if (!f.compare) return ServingFigure{};
    const auto& m = f.compare->*which;
    const auto it = m.find(name);
    return it == m.end() ? ServingFigure{} : figure_or_missing(it->second);
  };
}

// The hit rate of the offload tier `i`; missing with fewer tiers.
ServingFigure tier_hit_rate(const M::KvOffload& b, size_t i) {
  return i < b.tiers.size() ? number(b.tiers[i].hit_token_fraction) : ServingFigure{};
}

// A compare block's figure must read a name some row compares: one that no
// row writes would be missing from every result, silently.
void check_compare_reads(const std::vector<FigureRow>& rows) {
  for (const FigureRow& reader : rows) {
    if (!*reader.reads_name) continue;
    const bool ratio = std::string(reader.reads_group) == "ratio";
    const bool written = std::any_of(rows.begin(), rows.end(), [&](const FigureRow& row) {
      return std::string(ratio ? row.comparison.ratio : row.comparison.speedup) == reader.reads_name;
    });
    if (!written)
      fail(error_code::kInternal, "/compare",
           "serving metric " + reader.id + " reads compare." + reader.reads_group + "." + reader.reads_name +
               ", which no row of scenario/serving_metric_table.hpp compares");
  }
}

// Every serving figure: the rows of the one serving metric table, in its order.
const std::vector<FigureRow>& serving_figure_rows() {
  using S = Summary;
  static const std::vector<FigureRow> rows = [] {
    std::vector<FigureRow> table = {
#define SERVING_METRIC(id, label, unit, pointer, needs, description, speed, comparison, getter) {id, comparison, getter},
#define SERVING_COMPARED_FIGURE(comparison, getter) {"", comparison, getter},
#define SERVING_COMPARE_RESULT(id, label, group, name) \
  {id, not_compared, compare_figure(&CompareFigures::group, name), #group, name},
#include "scenario/serving_metric_table.hpp"
    };
    check_compare_reads(table);
    return table;
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
    const std::string ratio = row.comparison.ratio, speedup = row.comparison.speedup;
    if (ratio.empty() && speedup.empty()) continue;
    const ServingFigure a = row.get(run), b = row.get(baseline);
    if (a.kind == KeyMetric::Kind::Missing || b.kind == KeyMetric::Kind::Missing) continue;
    if (!ratio.empty()) put("ratio", ratio, a.value, b.value, "the baseline's value is 0");
    if (!speedup.empty()) put("speedup", speedup, b.value, a.value, "this scenario's value is 0");
  }
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
