#pragma once
// The 80% band of end-to-end error each kind of run (serving_latency,
// serving_simulation, training) shows on the development rows
// (presets/transfer_errors/end_to_end.json, written by `node
// web/measured-errors.mjs` from `sightline report-e2e --check metric`; a test
// fails when it no longer matches the engine), and how a run's interval takes
// it in. A run's own interval is priced from the kernels' residuals alone, so
// it carries neither the stack's nor the workload's error: on the development
// rows it covered 71-74% of the measured figures, not 80%.
//
// Combination: the wider of the two on each side (their envelope). The
// kind's band is an end-to-end error of runs priced by the same kernels, so
// it already holds the kernels' error at the development rows' conditions:
// adding the two (in log space, or in quadrature) would count that error
// twice. The kernels' interval is the wider one where a run's kernels are
// less known than the development rows' were (a tier without measurements of
// its own, a GPU priced across generations): there it stands. No central value
// moves.
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "run/key_metric.hpp"

namespace sightline::jobs {

struct KindErrorBand {
  std::string kind;
  int rows = 0;
  double level = 0.8;
  double log_low = 0, log_high = 0;  // of 1 + signed error (optimism: + is faster than measured)
  bool reaches_level = false;        // false: too few rows for an order statistic at the level
  double expected_coverage = 0;      // for exchangeable rows (jobs/error_interval.hpp)
};

// The shipped band of `kind`, or null where the kind has none.
const KindErrorBand* kind_error_band(const std::string& kind);
// Where the shipped bands come from (the preset's `source`).
const std::string& kind_error_band_source();

// Whether `kind`'s band describes figure `id` (a catalogue id, or the JSON
// pointer of a catalogue figure): one whose catalogue row says the run's
// end-to-end speed reaches it (MetricInfo::speed, scenario/metric_catalogue.hpp).
// `time_like`: the figure grows when the run is slower (EndToEndSpeed::kTime).
bool band_describes(const std::string& kind, const std::string& id, bool& time_like);

// The interval of a figure of central value `central` (> 0) whose kernels'
// interval is [kernel_low, kernel_high], with the band [log_low, log_high] of
// log(1 + signed error): the envelope of the two. A time's true value is
// predicted × (1 + error); a rate's is predicted / (1 + error).
IntervalSpan combined_interval(double central, double kernel_low, double kernel_high, double log_low, double log_high,
                               bool time_like);

// Whether the cost bounds moved a figure of central value `central` (its
// values at the low and high bounds; null where a bound run lacks it) by more
// than kMovedByBoundsFraction of its value. Every kernel's interval is at
// least ±2% (docs/cost-model.md), so a figure the run's speed sets moves by a
// few percent; one that moves by less (a throughput the arrival rate sets,
// where only the last requests' drain changes) is not the run's speed.
constexpr double kMovedByBoundsFraction = 0.005;
bool moved_by_bounds(double central, const double* at_low, const double* at_high);

// A figure the band widened, with the kernels' own interval.
struct WidenedFigure {
  std::string id;
  double kernel_low = 0, kernel_high = 0;
};

// Widens, by combined_interval, every figure of `metrics` that has an
// interval, that `kind`'s band describes and that the cost bounds moved
// (`moved_by_bounds`: ids); appends what it widened to `widened` (once per
// id). A figure the bounds leave where it is (a throughput the arrival rate
// sets) does not depend on the run's speed, so the speed's error does not
// reach it: it keeps its own (sampling) interval.
void widen_to_kind_band(KeyMetrics& metrics, const std::string& kind, const std::vector<std::string>& moved_by_bounds,
                        std::vector<WidenedFigure>* widened);

// The result's "interval_band" block: the kind, its rows, the band, the rule,
// the source, the kernels' own interval of each widened figure, and `note`:
// the one sentence that says so (the CLI's interval table and the page's
// tooltips show it, composing none of their own).
json interval_band_json(const std::string& kind, const std::vector<WidenedFigure>& widened);

}  // namespace sightline::jobs
