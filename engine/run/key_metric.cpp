#include "run/key_metric.hpp"

#include <algorithm>

namespace sightline {

KeyMetric KeyMetric::number(std::string id, std::string label, std::string unit, double value,
                            std::string description) {
  KeyMetric k;
  k.id = std::move(id);
  k.label = std::move(label);
  k.unit = std::move(unit);
  k.description = std::move(description);
  k.kind = Kind::Number;
  k.value = value;
  return k;
}

const KeyMetric* find_by_id(const KeyMetrics& list, const std::string& id) {
  for (const KeyMetric& k : list)
    if (k.id == id) return &k;
  return nullptr;
}

IntervalSpan interval_span(double central, const double* at_low_bound, const double* at_high_bound) {
  IntervalSpan s{central, central, false};
  for (const double* v : {at_low_bound, at_high_bound}) {
    if (!v) continue;
    s.low = std::min(s.low, *v);
    s.high = std::max(s.high, *v);
  }
  s.has_interval = !(s.low == central && s.high == central);
  return s;
}

IntervalSpan interval_span(double central, double at_low_bound, double at_high_bound) {
  return interval_span(central, &at_low_bound, &at_high_bound);
}

namespace {

void set_interval(KeyMetric& k, const IntervalSpan& s) {
  if (!s.has_interval && k.has_interval) return;  // the run's own sampling interval stands
  k.has_interval = s.has_interval;
  k.low = s.low;
  k.high = s.high;
  // A share cannot leave [0, 1], whatever the paired runs' ratio scaling says.
  if (k.unit == "fraction") {
    k.low = std::clamp(k.low, 0.0, 1.0);
    k.high = std::clamp(k.high, 0.0, 1.0);
  }
}

}  // namespace

const double* numeric_value(const KeyMetrics& run, const std::string& id) {
  const KeyMetric* b = find_by_id(run, id);
  return b && b->numeric() ? &b->value : nullptr;
}

void attach_intervals(KeyMetrics& central, const KeyMetrics& low_run, const KeyMetrics& high_run) {
  for (KeyMetric& k : central) {
    if (!k.numeric()) continue;
    set_interval(k, interval_span(k.value, numeric_value(low_run, k.id), numeric_value(high_run, k.id)));
  }
}

void attach_paired_intervals(KeyMetrics& central, const KeyMetrics& central_short, const KeyMetrics& low_short,
                             const KeyMetrics& high_short) {
  for (KeyMetric& k : central) {
    if (!k.numeric()) continue;
    const double* c = numeric_value(central_short, k.id);
    // Each bound's value at full length: the central value times the bound's
    // ratio to the central value on the short runs (their difference where
    // that central value is 0); unpaired, the bound run's own value.
    double scaled[2];
    const double* at[2] = {numeric_value(low_short, k.id), numeric_value(high_short, k.id)};
    for (int i = 0; i < 2; ++i) {
      if (!at[i] || !c) continue;
      scaled[i] = *c != 0 ? k.value * (*at[i] / *c) : k.value + (*at[i] - *c);
      at[i] = &scaled[i];
    }
    set_interval(k, interval_span(k.value, at[0], at[1]));
  }
}

json to_json(const KeyMetric& k) {
  json j = {{"id", k.id}, {"label", k.label}, {"unit", k.unit}};
  switch (k.kind) {
    case KeyMetric::Kind::Number: j["value"] = k.value; break;
    case KeyMetric::Kind::Integer: j["value"] = static_cast<int64_t>(k.value); break;
    case KeyMetric::Kind::Bool: j["value"] = k.value != 0; break;
    case KeyMetric::Kind::Missing: j["value"] = nullptr; break;
  }
  if (k.kind == KeyMetric::Kind::Missing && !k.reason.empty()) j["reason"] = k.reason;
  if (k.has_interval) {
    j["low"] = k.low;
    j["high"] = k.high;
  }
  if (!k.description.empty()) j["description"] = k.description;
  return j;
}

KeyMetric::Kind key_metric_kind(const json& value) {
  if (value.is_number_integer()) return KeyMetric::Kind::Integer;
  if (value.is_number()) return KeyMetric::Kind::Number;
  if (value.is_boolean()) return KeyMetric::Kind::Bool;
  return KeyMetric::Kind::Missing;
}

json key_metrics_to_json(const KeyMetrics& list) {
  json a = json::array();
  for (const KeyMetric& k : list) a.push_back(to_json(k));
  return a;
}

}  // namespace sightline
