#pragma once
// A search's key metric, written by the one key-metric writer
// (run/key_metric.hpp) with its label, unit and description from the metric
// catalogue (scenario/metric_catalogue.hpp), so a search's headline reads the
// same words and units in the CLI and the page as a run's does.
#include "core/json_reader.hpp"
#include "scenario/metric_catalogue.hpp"

namespace sightline::search {

// A figure the cost bounds move, with no bound runs (has_bounds false) or
// with its values at the low and high cost bounds: its interval is the one
// rule's (run/key_metric.hpp interval_span), as a run's key metrics are.
json search_metric(MetricKind kind, const char* id, double value, bool has_bounds = false, double at_low_bound = 0,
                   double at_high_bound = 0);
// A count (GPUs, configurations): a whole number, no interval.
json search_count(MetricKind kind, const char* id, int64_t value);
// A size the cost bounds do not move (memory): no interval.
json search_size(MetricKind kind, const char* id, double value);

}  // namespace sightline::search
