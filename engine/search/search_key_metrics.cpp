#include "search/search_key_metrics.hpp"

#include <map>
#include <stdexcept>
#include <string>

#include "search/search_metric.hpp"

namespace sightline::search {

// Named (not anonymous) so that its short helper names cannot meet another
// file's in a unity build.
namespace search_key_figures {

// How a search metric is written from the ranked candidate of its row: a
// field of its outcome with its 80% interval (the low/high cost-bound runs)
// when it has one, a size the cost bounds do not move (no interval), the
// candidate's GPUs, or the whole search's count (deployments simulated,
// configurations estimated). Plain data, not a function per row: this is in
// the page's wasm, whose first load is within a few KB of its budget.
enum class Form { Bounded, Size, CandidateGpus, SearchTotal };
struct CandidateGpus {};
struct SearchTotal {};
template <class Outcome>
struct Getter {
  Form form;
  double Outcome::*field = nullptr;
  Getter(Form f, double Outcome::*fl) : form(f), field(fl) {}
  Getter(CandidateGpus) : form(Form::CandidateGpus) {}
  Getter(SearchTotal) : form(Form::SearchTotal) {}
};
template <class Outcome>
Getter<Outcome> bounded(double Outcome::*field) {
  return {Form::Bounded, field};
}
template <class Outcome>
Getter<Outcome> size_of(double Outcome::*field) {
  return {Form::Size, field};
}
CandidateGpus candidate_gpus() { return {}; }
SearchTotal search_total() { return {}; }

int64_t gpus_of(const RankedCandidate& r) { return r.c.gpus(); }
int64_t gpus_of(const RankedTrainCandidate& r) { return r.c.gpus; }

const std::map<std::string, Getter<CandidateOutcome>>& deployment_getters() {
  static const std::map<std::string, Getter<CandidateOutcome>> g = {
#define DEPLOYMENT_SEARCH_METRIC(id, label, unit, pointer, needs, description, getter) {id, getter},
#define TRAINING_SEARCH_METRIC(id, label, unit, pointer, needs, description, getter)
#include "scenario/search_metric_table.hpp"
  };
  return g;
}

const std::map<std::string, Getter<TrainOutcome>>& training_getters() {
  static const std::map<std::string, Getter<TrainOutcome>> g = {
#define DEPLOYMENT_SEARCH_METRIC(id, label, unit, pointer, needs, description, getter)
#define TRAINING_SEARCH_METRIC(id, label, unit, pointer, needs, description, getter) {id, getter},
#include "scenario/search_metric_table.hpp"
  };
  return g;
}

// Metric `id` of `getters` written for `r` (null only for the whole search's
// count); an id without a row is a programming error.
template <class Outcome, class Ranked>
json written(const std::map<std::string, Getter<Outcome>>& getters, MetricKind kind, const char* id, const Ranked* r,
             int64_t total) {
  const auto it = getters.find(id);
  if (it == getters.end())
    throw std::logic_error(std::string("search metric '") + id + "' has no row in scenario/search_metric_table.hpp");
  const Getter<Outcome>& g = it->second;
  switch (g.form) {
    case Form::Bounded: {
      const bool has_bounds = r->has_interval && r->low.ok && r->high.ok;
      return search_metric(kind, id, r->central.*g.field, has_bounds, r->low.*g.field, r->high.*g.field);
    }
    case Form::Size: return search_size(kind, id, r->central.*g.field);
    case Form::CandidateGpus: return search_count(kind, id, gpus_of(*r));
    case Form::SearchTotal: break;
  }
  return search_count(kind, id, total);
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
