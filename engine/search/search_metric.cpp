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

json search_metric(MetricKind kind, const char* id, double value, bool has_interval, double low, double high) {
  KeyMetric k = labelled(kind, id);
  k.kind = KeyMetric::Kind::Number;
  k.value = value;
  k.has_interval = has_interval;
  k.low = low;
  k.high = high;
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
