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

namespace {

const KeyMetric* find_by_id(const KeyMetrics& list, const std::string& id) {
  for (const KeyMetric& k : list)
    if (k.id == id) return &k;
  return nullptr;
}

}  // namespace

void attach_intervals(KeyMetrics& central, const KeyMetrics& low_run, const KeyMetrics& high_run) {
  for (KeyMetric& k : central) {
    if (!k.numeric()) continue;
    double lo = k.value, hi = k.value;
    for (const KeyMetrics* run : {&low_run, &high_run}) {
      const KeyMetric* b = find_by_id(*run, k.id);
      if (!b || !b->numeric()) continue;
      lo = std::min(lo, b->value);
      hi = std::max(hi, b->value);
    }
    // Not moved by the cost bounds: a size or a count (memory, KV capacity,
    // batch, parameters) that the kernel and comm models do not price. It gets
    // no interval rather than a zero-width one.
    k.has_interval = !(lo == k.value && hi == k.value);
    k.low = lo;
    k.high = hi;
  }
}

void attach_paired_intervals(KeyMetrics& central, const KeyMetrics& central_short, const KeyMetrics& low_short,
                             const KeyMetrics& high_short) {
  for (KeyMetric& k : central) {
    if (!k.numeric()) continue;
    const KeyMetric* c = find_by_id(central_short, k.id);
    const bool paired = c && c->numeric();
    double lo = k.value, hi = k.value;
    for (const KeyMetrics* run : {&low_short, &high_short}) {
      const KeyMetric* b = find_by_id(*run, k.id);
      if (!b || !b->numeric()) continue;
      double v = b->value;
      if (paired) v = c->value != 0 ? k.value * (b->value / c->value) : k.value + (b->value - c->value);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    k.has_interval = !(lo == k.value && hi == k.value);
    k.low = lo;
    k.high = hi;
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
