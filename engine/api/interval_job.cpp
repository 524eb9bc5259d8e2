#include "api/interval_job.hpp"

#include "perf/cost_setup.hpp"

namespace sightline {

IntervalJob::IntervalJob(const Scenario& scenario) {
  const CostBound bounds[3] = {CostBound::Central, CostBound::Low, CostBound::High};
  for (int i = 0; i < 3; ++i) {
    runs_[i].scenario = std::make_unique<Scenario>(scenario);
    runs_[i].scenario->cost_model.bound = bounds[i];
    runs_[i].job = make_single_job(*runs_[i].scenario);
  }
  std::string provenance;
  accuracy_ = make_kernel_cost_model(scenario.cost_model.tier, scenario.hardware.gpu, &provenance)->accuracy();
}

bool IntervalJob::step(int64_t max_units) {
  for (Run& r : runs_) {
    if (r.done) continue;
    r.done = r.job->step(max_units);
    return false;
  }
  return true;
}

double IntervalJob::progress() const {
  double p = 0;
  for (const Run& r : runs_) p += r.done ? 1.0 : r.job->progress();
  return p / 3.0;
}

KeyMetrics IntervalJob::key_metrics() const {
  KeyMetrics km = runs_[0].job->key_metrics();
  attach_intervals(km, runs_[1].job->key_metrics(), runs_[2].job->key_metrics());
  return km;
}

// Only the central run writes JSON; the bound runs give their typed key metrics.
json IntervalJob::result() const {
  json r = runs_[0].job->result();
  r["key_metrics"] = key_metrics_to_json(key_metrics());
  r["accuracy"] = accuracy_.to_json();
  return r;
}

}  // namespace sightline
