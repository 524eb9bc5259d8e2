#pragma once
// A result's headline numbers, typed: every result kind (latency, serving,
// training, search) carries them as one ordered array of
// {id, label, unit, value, low, high} (plus a description where the metric has
// one). Jobs compute them from their typed results; the interval runs
// (jobs/interval_job) combine the central run's with the bound runs' by id, and
// key_metrics_to_json is the one writer.
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline {

struct KeyMetric {
  // Integer: a count, written without a fraction; Missing: the run has no such
  // figure (written as null).
  enum class Kind { Number, Integer, Bool, Missing };
  std::string id, label, unit, description;
  Kind kind = Kind::Missing;
  double value = 0;  // the number, or 1/0 for a Bool
  bool numeric() const { return kind == Kind::Number || kind == Kind::Integer; }
  bool has_interval = false;
  double low = 0, high = 0;  // 80% interval, set by the interval runs
  std::string reason;        // Missing: why the run has no such figure (written as "reason")

  static KeyMetric number(std::string id, std::string label, std::string unit, double value,
                          std::string description = "");
};

using KeyMetrics = std::vector<KeyMetric>;

// The one interval rule, for runs and searches alike: the 80% interval of a
// figure spans its central value and its values at the low and high cost
// bounds (all three: a bound run has its own sampling noise, so a figure the
// bound barely moves can land on either side of the central value). A figure
// no bound moves (low == high == central: a size, a count) has no interval,
// never a zero-width one.
struct IntervalSpan {
  double low = 0, high = 0;
  bool has_interval = false;
};
IntervalSpan interval_span(double central, double at_low_bound, double at_high_bound);
// The same where a bound run may lack the figure: only the present values count.
IntervalSpan interval_span(double central, const double* at_low_bound, const double* at_high_bound);

// The value of metric `id` in `run`, or null when the run lacks a number for it.
const double* numeric_value(const KeyMetrics& run, const std::string& id);
// The metric `id` of `list`, or null.
const KeyMetric* find_by_id(const KeyMetrics& list, const std::string& id);

// Sets low/high on every numeric metric of `central` from the same id in the
// runs at the low and high cost bounds, by interval_span.
// A metric no bound moves (a size or a count) gets no interval, unless the
// central run gave it a sampling interval of its own (has_interval already
// set: the headline's goodput), which it then keeps.
void attach_intervals(KeyMetrics& central, const KeyMetrics& low_run, const KeyMetrics& high_run);

// The same from short bound runs (jobs/interval_job.hpp): `low_short` and
// `high_short` ran the first requests of the workload at the bounds, and
// `central_short` the same requests at the central cost. Each bound's value at
// full length is the central value times the bound's ratio to the central
// value on the short runs (their difference where that central value is 0);
// a figure the short central run lacks (the max-QPS search, which does not
// depend on the workload's length) takes the bound run's own value.
void attach_paired_intervals(KeyMetrics& central, const KeyMetrics& central_short, const KeyMetrics& low_short,
                             const KeyMetrics& high_short);

json to_json(const KeyMetric& k);
// The kind a JSON scalar has as a key metric value (for figures still kept as JSON).
KeyMetric::Kind key_metric_kind(const json& value);
json key_metrics_to_json(const KeyMetrics& list);

}  // namespace sightline
