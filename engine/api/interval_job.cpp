#include "api/interval_job.hpp"

#include "perf/cost_setup.hpp"

namespace sightline {

IntervalJob::IntervalJob(const Scenario& scenario, IntervalMode mode)
    : run_count_(mode == IntervalMode::CentralOnly ? 1 : 3) {
  const CostBound bounds[3] = {CostBound::Central, CostBound::Low, CostBound::High};
  for (int i = 0; i < run_count_; ++i) {
    runs_[i].scenario = std::make_unique<Scenario>(scenario);
    runs_[i].scenario->cost_model.bound = bounds[i];
    runs_[i].job = make_single_job(*runs_[i].scenario);
  }
  std::string provenance;
  accuracy_ = make_kernel_cost_model(scenario.cost_model.tier, scenario.hardware.gpu, &provenance)->accuracy();
}

bool IntervalJob::step(int64_t max_units) {
  for (int i = 0; i < run_count_; ++i) {
    Run& r = runs_[i];
    if (r.done) continue;
    r.done = r.job->step(max_units);
    return false;
  }
  return true;
}

double IntervalJob::progress() const {
  double p = 0;
  for (int i = 0; i < run_count_; ++i) p += runs_[i].done ? 1.0 : runs_[i].job->progress();
  return p / run_count_;
}

KeyMetrics IntervalJob::key_metrics() const {
  KeyMetrics km = runs_[0].job->key_metrics();
  if (run_count_ == 3) attach_intervals(km, runs_[1].job->key_metrics(), runs_[2].job->key_metrics());
  return km;
}

// Only the central run writes JSON; the bound runs give their typed key metrics.
json IntervalJob::result() const {
  json r = runs_[0].job->result();
  if (run_count_ == 3) r["key_metrics"] = key_metrics_to_json(key_metrics());
  else r["intervals"] = "central_only";
  r["accuracy"] = accuracy_.to_json();
  return r;
}

}  // namespace sightline
