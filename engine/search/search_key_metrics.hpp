#pragma once
// A search's key metrics by catalogue id: each written by the getter column of
// its row in scenario/search_metric_table.hpp, the row that also gives the
// catalogue the metric's id, words and where the search writes it. A search
// chooses which of its metrics it writes, and in which order; how each is
// read from the ranked candidate is defined once, in its row.
#include "core/json_reader.hpp"
#include "search/deployment_search.hpp"
#include "search/training_search.hpp"

namespace sightline::search {

// Deployment search metric `id` of the ranked deployment `r` (null for a
// figure of the whole search), in a search that simulated `simulated` deployments.
json deployment_search_key_metric(const char* id, const RankedCandidate* r, int64_t simulated = 0);
// Training search metric `id` of the ranked configuration `r` (null for a
// figure of the whole search), in a search that estimated `estimated` configurations.
json training_search_key_metric(const char* id, const RankedTrainCandidate* r, int64_t estimated = 0);

}  // namespace sightline::search
