#include "search/search_key_metrics.hpp"

#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "search/search_metric.hpp"

namespace sightline::search {

// Named (not anonymous) so that its short helper names cannot meet another
// file's in a unity build.
namespace search_key_figures {

// How a search metric is written: its kind and id, the ranked candidate of
// its row (null for a figure of the whole search) and the whole search's count
// (deployments simulated, configurations estimated).
template <class Ranked>
using Getter = std::function<json(MetricKind kind, const char* id, const Ranked* r, int64_t total)>;

// A figure of the candidate's outcome, with its 80% interval (the low/high
// cost-bound runs) when it has one.
template <class Ranked, class Outcome>
Getter<Ranked> bounded_figure(double Outcome::*field) {
  return [=](MetricKind kind, const char* id, const Ranked* r, int64_t) {
    const bool has_bounds = r->has_interval && r->low.ok && r->high.ok;
    return search_metric(kind, id, r->central.*field, has_bounds, r->low.*field, r->high.*field);
  };
}
Getter<RankedCandidate> bounded(double CandidateOutcome::*field) { return bounded_figure<RankedCandidate>(field); }
Getter<RankedTrainCandidate> bounded(double TrainOutcome::*field) { return bounded_figure<RankedTrainCandidate>(field); }
// A size the cost bounds do not move (memory): no interval.
Getter<RankedTrainCandidate> size_of(double TrainOutcome::*field) {
  return [=](MetricKind kind, const char* id, const RankedTrainCandidate* r, int64_t) {
    return search_size(kind, id, r->central.*field);
  };
}
Getter<RankedCandidate> deployment_gpus() {
  return [](MetricKind kind, const char* id, const RankedCandidate* r, int64_t) {
    return search_count(kind, id, r->c.gpus());
  };
}
Getter<RankedTrainCandidate> configuration_gpus() {
  return [](MetricKind kind, const char* id, const RankedTrainCandidate* r, int64_t) {
    return search_count(kind, id, r->c.gpus);
  };
}
// The whole search's count, for either search.
auto search_total() {
  return [](MetricKind kind, const char* id, const auto*, int64_t total) { return search_count(kind, id, total); };
}

const std::map<std::string, Getter<RankedCandidate>>& deployment_getters() {
  static const std::map<std::string, Getter<RankedCandidate>> g = {
#define DEPLOYMENT_SEARCH_METRIC(id, label, unit, pointer, needs, description, getter) {id, getter},
#define TRAINING_SEARCH_METRIC(id, label, unit, pointer, needs, description, getter)
#include "scenario/search_metric_table.hpp"
  };
  return g;
}

const std::map<std::string, Getter<RankedTrainCandidate>>& training_getters() {
  static const std::map<std::string, Getter<RankedTrainCandidate>> g = {
#define DEPLOYMENT_SEARCH_METRIC(id, label, unit, pointer, needs, description, getter)
#define TRAINING_SEARCH_METRIC(id, label, unit, pointer, needs, description, getter) {id, getter},
#include "scenario/search_metric_table.hpp"
  };
  return g;
}

// Metric `id` of `getters` written for `r`; an id without a row is a programming error.
template <class Ranked>
json written(const std::map<std::string, Getter<Ranked>>& getters, MetricKind kind, const char* id, const Ranked* r,
             int64_t total) {
  const auto it = getters.find(id);
  if (it == getters.end())
    throw std::logic_error(std::string("search metric '") + id + "' has no row in scenario/search_metric_table.hpp");
  return it->second(kind, id, r, total);
}

}  // namespace search_key_figures

json deployment_search_key_metric(const char* id, const RankedCandidate* r, int64_t simulated) {
  return search_key_figures::written(search_key_figures::deployment_getters(), MetricKind::kDeploymentSearch, id, r,
                                     simulated);
}

json training_search_key_metric(const char* id, const RankedTrainCandidate* r, int64_t estimated) {
  return search_key_figures::written(search_key_figures::training_getters(), MetricKind::kTrainingSearch, id, r,
                                     estimated);
}

}  // namespace sightline::search
