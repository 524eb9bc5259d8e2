#include "jobs/kind_error_band.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "jobs/error_interval.hpp"
#include "core/det_math.hpp"
#include "core/error.hpp"
#include "presets/preset_store.hpp"
#include "scenario/metric_catalogue.hpp"

namespace sightline::jobs {

namespace {

struct Shipped {
  std::map<std::string, KindErrorBand> bands;
  std::string source, rule;
};

const Shipped& shipped() {
  static const Shipped s = [] {
    Shipped out;
    const json* p = find_preset("transfer_errors", "end_to_end");
    if (!p) return out;
    ObjectReader r(*p, "/transfer_errors/end_to_end", {"id", "name", "source", "command", "commit", "level", "rule", "kinds"});
    out.source = r.string("source") + " (command: " + r.string("command") + "; commit " + r.string("commit") + ")";
    out.rule = r.string("rule");
    const double level = r.number("level", 0.5, 0.99);
    const json& kinds = r.required("kinds");
    require_object(kinds, r.child_path("kinds"));
    for (const auto& [kind, k] : kinds.items()) {
      ObjectReader kr(k, pointer_append(r.child_path("kinds"), kind),
                      {"rows", "order", "log_low", "log_high", "low_signed_error_pct", "high_signed_error_pct",
                       "reaches_level", "expected_coverage"});
      KindErrorBand b;
      b.kind = kind;
      b.level = level;
      b.rows = static_cast<int>(kr.integer("rows", 1, 100000));
      kr.integer("order", 1, 100000);
      b.log_low = kr.number("log_low", -10, 10);
      b.log_high = kr.number("log_high", b.log_low, 10);
      // The percentages are for readers; they must say what the logs say.
      for (const auto& [key, log] : {std::pair<const char*, double>{"low_signed_error_pct", b.log_low}, {"high_signed_error_pct", b.log_high}})
        if (std::fabs(kr.number(key, -100, 1e6) - signed_error_pct_of_log(log)) > 1e-6)
          throw SightlineError("invalid_value", kr.child_path(key), "does not match the band's log bound");
      b.reaches_level = kr.boolean("reaches_level");
      b.expected_coverage = kr.number("expected_coverage", 0, 1);
      out.bands.emplace(kind, b);
    }
    return out;
  }();
  return s;
}

// A signed percentage as the tables print it: one decimal, its sign always.
std::string signed_pct(double x) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%.1f", std::fabs(x));
  return (x < 0 ? "-" : "+") + std::string(digits) + "%";
}

}  // namespace

const KindErrorBand* kind_error_band(const std::string& kind) {
  const auto& bands = shipped().bands;
  auto it = bands.find(kind);
  return it == bands.end() ? nullptr : &it->second;
}

const std::string& kind_error_band_source() { return shipped().source; }

bool band_describes(const std::string& kind, const std::string& id, bool& time_like) {
  const MetricKind* metric_kind = metric_kind_of_result(kind);
  if (!metric_kind) return false;
  // A catalogue id, or the JSON pointer of an interval figure (serve/serving_job.cpp's).
  const MetricInfo* m = id.rfind('/', 0) == 0 ? find_metric_at(*metric_kind, id) : find_metric(*metric_kind, id);
  if (!m || m->speed == EndToEndSpeed::kNone) return false;
  time_like = m->speed == EndToEndSpeed::kTime;
  return true;
}

bool moved_by_bounds(double central, const double* at_low, const double* at_high) {
  const double limit = kMovedByBoundsFraction * std::fabs(central);
  return (at_low && std::fabs(*at_low - central) > limit) || (at_high && std::fabs(*at_high - central) > limit);
}

IntervalSpan combined_interval(double central, double kernel_low, double kernel_high, double log_low, double log_high,
                               bool time_like) {
  // Signed error e is optimism: a time's true value is central × (1 + e), a rate's central / (1 + e).
  const double band_low = central * det_exp(time_like ? log_low : -log_high);
  const double band_high = central * det_exp(time_like ? log_high : -log_low);
  IntervalSpan s;
  s.low = std::min({kernel_low, band_low, central});
  s.high = std::max({kernel_high, band_high, central});
  s.has_interval = s.low < s.high;
  return s;
}

void widen_to_kind_band(KeyMetrics& metrics, const std::string& kind, const std::vector<std::string>& moved_by_bounds,
                        std::vector<WidenedFigure>* widened) {
  const KindErrorBand* band = kind_error_band(kind);
  if (!band) return;
  for (KeyMetric& k : metrics) {
    bool time_like = false;
    if (!k.has_interval || !k.numeric() || k.value <= 0 || !band_describes(kind, k.id, time_like)) continue;
    if (std::find(moved_by_bounds.begin(), moved_by_bounds.end(), k.id) == moved_by_bounds.end()) continue;
    const WidenedFigure before{k.id, k.low, k.high};
    const IntervalSpan s = combined_interval(k.value, k.low, k.high, band->log_low, band->log_high, time_like);
    k.low = s.low;
    k.high = s.high;
    if (!widened) continue;
    const bool listed = std::any_of(widened->begin(), widened->end(), [&](const WidenedFigure& w) { return w.id == k.id; });
    if (!listed) widened->push_back(before);
  }
}

json interval_band_json(const std::string& kind, const std::vector<WidenedFigure>& widened) {
  const KindErrorBand* band = kind_error_band(kind);
  if (!band) return {{"kind", kind}, {"applied", false}, {"meaning", "no measured end-to-end band for this kind: the intervals are the kernels' alone"}};
  json kernels = json::object();
  for (const WidenedFigure& w : widened) kernels[w.id] = json::array({w.kernel_low, w.kernel_high});
  const double low_pct = signed_error_pct_of_log(band->log_low), high_pct = signed_error_pct_of_log(band->log_high);
  const MetricKind* metric_kind = metric_kind_of_result(kind);
  // The one sentence the CLI's table and the page's tooltips show after the kernels' interval.
  const std::string note = "widened to the end-to-end error measured on " + std::to_string(band->rows) + " published " +
                           (metric_kind ? metric_kind_name(*metric_kind) : kind.c_str()) + " runs, " +
                           signed_pct(low_pct) + " .. " + signed_pct(high_pct) + " optimistic: sightline report-e2e";
  return {{"kind", kind},
          {"applied", true},
          {"rows", band->rows},
          {"level", band->level},
          {"band_signed_error_pct", json::array({low_pct, high_pct})},
          {"note", note},
          {"reaches_level", band->reaches_level},
          {"expected_coverage", band->expected_coverage},
          {"rule", shipped().rule},
          {"combination",
           "the wider of the kernels' interval and the kind's measured band, on each side: the band is an end-to-end "
           "error of runs priced by the same kernels, so it already holds their error at the development rows' "
           "conditions; where the kernels are less known than there, their interval is the wider"},
          {"source", kind_error_band_source()},
          {"kernel_intervals", kernels}};
}

}  // namespace sightline::jobs
