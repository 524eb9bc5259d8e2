#include "api/interval_job.hpp"

#include "perf/cost_setup.hpp"

namespace sightline {

namespace {

// A bound run's copy of a scenario: compare variants and scaling points are
// scenarios of their own and run at the same bound.
std::unique_ptr<Scenario> at_bound(const Scenario& scenario, CostBound bound) {
  auto s = std::make_unique<Scenario>(scenario);
  s->cost_model.bound = bound;
  if (s->training) {
    auto bounded = [&](const std::shared_ptr<const Scenario>& v) {
      auto copy = std::make_shared<Scenario>(*v);
      copy->cost_model.bound = bound;
      return std::shared_ptr<const Scenario>(std::move(copy));
    };
    for (TrainVariant& v : s->training->compare) v.scenario = bounded(v.scenario);
    for (auto& p : s->training->scaling.points) p = bounded(p);
  }
  return s;
}

}  // namespace

IntervalJob::IntervalJob(const Scenario& scenario, IntervalMode mode)
    : run_count_(mode == IntervalMode::CentralOnly ? 1 : 3) {
  const CostBound bounds[3] = {CostBound::Central, CostBound::Low, CostBound::High};
  for (int i = 0; i < run_count_; ++i) {
    runs_[i].scenario = at_bound(scenario, bounds[i]);
  }
  // The bound runs are made when their turn comes: a run's memory (a serving
  // simulation holds every request) is then never needed three times at once.
  runs_[0].job = make_single_job(*runs_[0].scenario);
  std::string provenance;
  accuracy_ = make_kernel_cost_model(scenario.cost_model.tier, scenario.hardware.gpu, &provenance)->accuracy();
}

bool IntervalJob::step(int64_t max_units) {
  for (int i = 0; i < run_count_; ++i) {
    Run& r = runs_[i];
    if (r.done) continue;
    if (!r.job) r.job = make_single_job(*r.scenario);
    r.done = r.job->step(max_units);
    // Done as soon as the last run is: a run that needs exactly its budget fits it.
    return r.done && i == run_count_ - 1;
  }
  return true;
}

double IntervalJob::progress() const {
  double p = 0;
  for (int i = 0; i < run_count_; ++i) p += runs_[i].done ? 1.0 : runs_[i].job ? runs_[i].job->progress() : 0.0;
  return p / run_count_;
}

int64_t IntervalJob::units_done() const {
  int64_t n = 0;
  for (const Run& r : runs_) n += r.job ? r.job->units_done() : 0;
  return n;
}

KeyMetrics IntervalJob::key_metrics() const {
  KeyMetrics km = runs_[0].job->key_metrics();
  if (run_count_ == 3) attach_intervals(km, runs_[1].job->key_metrics(), runs_[2].job->key_metrics());
  return km;
}

// Only the central run writes JSON; the bound runs give their typed key metrics.
json IntervalJob::result() const {
  json r = runs_[0].job->result();
  if (run_count_ == 3) {
    r["key_metrics"] = key_metrics_to_json(key_metrics());
    // Training compare variants carry key metrics of their own.
    std::vector<KeyMetrics> variants = runs_[0].job->variant_key_metrics();
    const std::vector<KeyMetrics> low = runs_[1].job->variant_key_metrics(), high = runs_[2].job->variant_key_metrics();
    for (size_t i = 0; i < variants.size() && i < low.size() && i < high.size(); ++i) {
      attach_intervals(variants[i], low[i], high[i]);
      r["compare"][i]["key_metrics"] = key_metrics_to_json(variants[i]);
    }
  } else {
    r["intervals"] = "central_only";
  }
  r["accuracy"] = accuracy_.to_json();
  return r;
}

}  // namespace sightline
