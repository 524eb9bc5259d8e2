#include "search/search_metric.hpp"

#include <string>

#include "run/key_metric.hpp"

namespace sightline::search {

namespace {

// Labelled from the catalogue; a metric missing from it is a programming
// error that the unit tests catch (every search key metric is catalogued).
KeyMetric labelled(MetricKind kind, const char* id) {
  KeyMetric k;
  k.id = id;
  if (const MetricInfo* m = find_metric(kind, id)) {
    k.label = m->label;
    k.unit = m->unit;
    k.description = m->description;
  }
  return k;
}

}  // namespace

json search_metric(MetricKind kind, const char* id, double value, bool has_bounds, double at_low_bound,
                   double at_high_bound) {
  KeyMetric k = labelled(kind, id);
  k.kind = KeyMetric::Kind::Number;
  k.value = value;
  if (has_bounds) {
    const IntervalSpan span = interval_span(value, at_low_bound, at_high_bound);
    k.has_interval = span.has_interval;
    k.low = span.low;
    k.high = span.high;
  }
  return to_json(k);
}

json search_count(MetricKind kind, const char* id, int64_t value) {
  KeyMetric k = labelled(kind, id);
  k.kind = KeyMetric::Kind::Integer;
  k.value = static_cast<double>(value);
  return to_json(k);
}

json search_size(MetricKind kind, const char* id, double value) {
  KeyMetric k = labelled(kind, id);
  k.kind = KeyMetric::Kind::Number;
  k.value = value;
  return to_json(k);
}

}  // namespace sightline::search
