#include "api/interval_job.hpp"

#include <algorithm>

#include "perf/cost_setup.hpp"

namespace sightline {

namespace {

const json* metric_entry(const json& key_metrics, const std::string& id) {
  if (key_metrics.is_object()) return key_metrics.contains(id) ? &key_metrics.at(id) : nullptr;
  if (key_metrics.is_array())
    for (const json& e : key_metrics)
      if (e.is_object() && e.value("id", "") == id) return &e;
  return nullptr;
}

void set_interval(json& entry, const std::string& id, const json& low_km, const json& high_km) {
  if (!entry.is_object() || !entry.contains("value") || !entry["value"].is_number()) return;
  const double v = entry["value"].get<double>();
  double lo = v, hi = v;
  for (const json* km : {&low_km, &high_km}) {
    const json* e = metric_entry(*km, id);
    if (e && e->contains("value") && (*e)["value"].is_number()) {
      lo = std::min(lo, (*e)["value"].get<double>());
      hi = std::max(hi, (*e)["value"].get<double>());
    }
  }
  if (lo == v && hi == v) {
    // Not moved by the cost bounds: a size or a count (memory, KV capacity,
    // batch, parameters) that the kernel and comm models do not price. It gets
    // no interval rather than a zero-width one.
    entry.erase("low");
    entry.erase("high");
    return;
  }
  entry["low"] = lo;
  entry["high"] = hi;
}

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

void attach_key_metric_intervals(json& central, const json& low_run, const json& high_run) {
  // Training compare variants carry key metrics of their own.
  if (central.contains("compare") && central["compare"].is_array() && low_run.contains("compare") &&
      high_run.contains("compare")) {
    json& variants = central["compare"];
    for (size_t i = 0; i < variants.size(); ++i)
      if (i < low_run["compare"].size() && i < high_run["compare"].size())
        attach_key_metric_intervals(variants[i], low_run["compare"][i], high_run["compare"][i]);
  }
  if (!central.contains("key_metrics")) return;
  json& km = central["key_metrics"];
  const json empty = json::object();
  const json& low_km = low_run.contains("key_metrics") ? low_run["key_metrics"] : empty;
  const json& high_km = high_run.contains("key_metrics") ? high_run["key_metrics"] : empty;
  if (km.is_object())
    for (auto it = km.begin(); it != km.end(); ++it) set_interval(it.value(), it.key(), low_km, high_km);
  else if (km.is_array())
    for (json& e : km) set_interval(e, e.value("id", ""), low_km, high_km);
}

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
    return false;
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

json IntervalJob::result() const {
  json r = runs_[0].job->result();
  if (run_count_ == 3) attach_key_metric_intervals(r, runs_[1].job->result(), runs_[2].job->result());
  else r["intervals"] = "central_only";
  r["accuracy"] = accuracy_.to_json();
  return r;
}

}  // namespace sightline
