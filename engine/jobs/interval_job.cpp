#include "jobs/interval_job.hpp"

#include <algorithm>

#include "jobs/kind_error_band.hpp"
#include "perf/cost_setup.hpp"
#include "scenario/simulation_spec.hpp"

namespace sightline {

namespace {

// The paired short runs' share of the workload, and their fewest requests
// (below a few hundred requests a run's percentiles are mostly its warm-up).
constexpr int64_t kShortRunPercent = 5;
constexpr int64_t kShortRunMinRequests = 400;

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

// The first `n` requests of a serving scenario's workload (and of each
// compare variant's), never grown by the steady-state check: the paired runs
// are the same n requests at every bound (grown, each to what its own judge
// asked, they paired runs of different lengths, and on a pool of 72 replicas
// the short central run grew from 400 requests to 3,270 and 12,332, more than
// the full run did). `search`: keep the max-QPS search (the bound runs do;
// it does not depend on the workload's length, so the short central run,
// which only pairs with them, leaves it out).
std::unique_ptr<Scenario> shortened(std::unique_ptr<Scenario> s, int64_t n, bool search) {
  auto sp = std::make_shared<serve::SimulationSpec>(*s->serving->simulation);
  sp->workload.num_requests = std::min(sp->workload.num_requests, n);
  sp->steady_state.max_requests = std::min(sp->steady_state.max_requests, sp->workload.num_requests);
  if (!search) sp->search.enabled = false;
  for (auto& v : sp->compares) {
    if (!v.scenario || !v.scenario->serving || !v.scenario->serving->simulation) continue;
    auto vs = std::make_shared<Scenario>(*v.scenario);
    auto vsp = std::make_shared<serve::SimulationSpec>(*vs->serving->simulation);
    if (vsp->workload.num_requests > 0) vsp->workload.num_requests = std::min(vsp->workload.num_requests, n);
    vs->serving->simulation = vsp;
    v.scenario = vs;
  }
  s->serving->simulation = sp;
  return s;
}

// Why a headline figure has no 80% interval, in words (the page shows it on
// the figure's card): the runs at the low and high cost bounds gave the same
// figure (memory, which no kernel's time moves; an overloaded run's goodput,
// 0 at every bound), or one of them gave none.
std::string no_interval_reason(const KeyMetric& k, const KeyMetrics& low_run, const KeyMetrics& high_run) {
  const double* lo = numeric_value(low_run, k.id);
  const double* hi = numeric_value(high_run, k.id);
  if (lo && hi && *lo == *hi)
    return "no interval: the runs at the cost model's low and high bounds give the same figure";
  return "no interval: the runs at the cost model's low and high bounds did not give this figure";
}

}  // namespace

std::unique_ptr<Scenario> short_bound_scenario(const Scenario& scenario, CostBound bound, int64_t n) {
  return shortened(at_bound(scenario, bound), n, bound != CostBound::Central);
}

int64_t short_bound_requests(const Scenario& s, IntervalMode mode) {
  if (mode != IntervalMode::Bounds || s.cost_model.intervals == "full") return 0;
  if (!s.serving || s.serving->mode != "simulate" || !s.serving->simulation) return 0;
  const int64_t total = s.serving->simulation->workload.num_requests;  // 0: driven by duration
  if (total <= 0) return 0;
  const int64_t n = std::max((total * kShortRunPercent + 99) / 100, std::min(total, kShortRunMinRequests));
  if (s.cost_model.intervals == "reduced") return n < total ? n : 0;
  return 3 * n <= total ? n : 0;
}

IntervalJob::IntervalJob(const Scenario& scenario, IntervalMode mode)
    : scenario_(scenario), mode_(mode), short_requests_(short_bound_requests(scenario, mode)) {
  runs_.emplace_back();
  runs_[0].scenario = at_bound(scenario, CostBound::Central);
  if (mode == IntervalMode::Bounds) {
    if (paired()) {
      const double w = static_cast<double>(short_requests_) / static_cast<double>(scenario.serving->simulation->workload.num_requests);
      const CostBound bounds[3] = {CostBound::Central, CostBound::Low, CostBound::High};
      for (CostBound b : bounds) {
        Run r;
        r.scenario = short_bound_scenario(scenario, b, short_requests_);
        r.weight = w;
        runs_.push_back(std::move(r));
      }
    } else {
      for (CostBound b : {CostBound::Low, CostBound::High}) {
        Run r;
        r.scenario = at_bound(scenario, b);
        runs_.push_back(std::move(r));
      }
    }
  }
  // Each run is made when its turn comes, and a bound run freed when done: a
  // run's memory (a serving simulation holds every request) is then never
  // needed twice at once. The first to run is made here, so that a scenario
  // its job cannot run fails at once, as the central run's did.
  for (size_t i = 1; i < runs_.size(); ++i) order_.push_back(i);
  order_.push_back(0);
  Run& first = runs_[order_.front()];
  first.job = make_single_job(*first.scenario);
  std::string provenance;
  accuracy_ = make_kernel_cost_model(scenario.cost_model.tier, scenario.hardware.gpu, &provenance)->accuracy();
}

void IntervalJob::finish_run(size_t i) {
  runs_[i].done = true;
  if (i != 0) keep_bound_figures(i);  // the central run writes the result
  if (paired() && !fallback_ && runs_.size() == 4 && runs_[0].done && runs_[1].done && runs_[2].done && runs_[3].done)
    judge_paired_runs();
}

void IntervalJob::keep_bound_figures(size_t i) {
  Run& r = runs_[i];
  r.units = r.job->units_done();
  r.key_metrics = r.job->key_metrics();
  r.figures = r.job->interval_figures();
  r.headline = r.job->headline_figures();
  r.variants = r.job->variant_key_metrics();
  r.overloaded = r.job->overloaded();
  r.job.reset();
  r.scenario.reset();
  if (fallback_ && i >= 4) {
    // A full bound run after the short ones: the figures it left out (the
    // max-QPS search) come from the short run at the same bound.
    const Run& lane = runs_[i - 2];
    for (KeyMetric& k : r.key_metrics)
      if (!k.numeric())
        for (const KeyMetric& l : lane.key_metrics)
          if (l.id == k.id && l.numeric()) k = l;
    for (const KeyMetric& l : lane.figures) {
      bool have = false;
      for (const KeyMetric& k : r.figures) have = have || k.id == l.id;
      if (!have) r.figures.push_back(l);
    }
  }
}

// The paired short runs and the central run are done: an overloaded run (or
// central run) means a short run says little about a long one, and so does a
// short run that could not give a figure the full run gives (a steady window
// too short to judge, across many replicas): both bounds run in full.
void IntervalJob::judge_paired_runs() {
  const bool overloaded = runs_[0].job->overloaded() || runs_[1].overloaded || runs_[2].overloaded || runs_[3].overloaded;
  // Only the bound runs count: a figure the short central run lacks (the
  // max-QPS search) takes the bound run's own value (attach_paired_intervals).
  bool short_runs_lack_a_figure = false;
  for (const KeyMetric& k : runs_[0].job->interval_figures())
    for (size_t j = 2; j <= 3; ++j)
      short_runs_lack_a_figure = short_runs_lack_a_figure || (k.numeric() && !numeric_value(runs_[j].figures, k.id));
  if (!overloaded && !short_runs_lack_a_figure) return;
  fallback_ = true;
  fallback_lacked_figure_ = !overloaded;
  // The full bound runs take the central run's length as it last ran: the
  // steady-state check grew it to what its verdict needed, and grown again at
  // each bound they repeated its growth from the workload's count and paired
  // runs of other lengths (on a pool of 72 replicas, 2,000 requests, then
  // 9,443, at each bound).
  const int64_t central_requests = runs_[0].job->requests_run();
  fallback_requests_ = std::max(central_requests, scenario_.serving->simulation->workload.num_requests);
  for (CostBound b : {CostBound::Low, CostBound::High}) {
    // The short runs' max-QPS searches already ran at full length: not again.
    Run full;
    full.scenario = at_bound(scenario_, b);
    auto sp = std::make_shared<serve::SimulationSpec>(*full.scenario->serving->simulation);
    sp->search.enabled = false;
    if (fallback_requests_ > sp->workload.num_requests) {
      sp->workload.num_requests = fallback_requests_;
      sp->steady_state.max_requests = std::min(sp->steady_state.max_requests, fallback_requests_);
    }
    full.scenario->serving->simulation = sp;
    order_.push_back(runs_.size());
    runs_.push_back(std::move(full));
  }
}

// The runs run one after another, so each may do what the earlier ones left
// of the budget (the central run, whose search replicates, comes last but for
// a fallback's full bound runs, which leave the search out).
void IntervalJob::limit_work(int64_t units) {
  work_limit_ = units;
  if (next_ < order_.size() && runs_[order_[next_]].job) runs_[order_[next_]].job->limit_work(work_limit_ - units_done());
}

bool IntervalJob::step(int64_t max_units) {
  while (next_ < order_.size()) {
    Run& r = runs_[order_[next_]];
    if (!r.job) {
      r.job = make_single_job(*r.scenario);
      r.job->limit_work(work_limit_ - units_done());
    }
    const bool done = r.job->step(max_units);
    if (!done) return false;
    finish_run(order_[next_]);
    ++next_;
    // Done as soon as the last run is: a run that needs exactly its budget fits it.
    return next_ >= order_.size();
  }
  return true;
}

double IntervalJob::progress() const {
  double p = 0, total = 0;
  for (const Run& r : runs_) {
    total += r.weight;
    p += r.weight * (r.done ? 1.0 : r.job ? r.job->progress() : 0.0);
  }
  return total > 0 ? std::min(next_ >= order_.size() ? 1.0 : 0.999, p / total) : 1.0;
}

int64_t IntervalJob::units_done() const {
  int64_t n = 0;
  for (const Run& r : runs_) n += r.job ? r.job->units_done() : r.units;
  return n;
}

// The kernels' interval from the bound runs, widened to the kind's measured
// end-to-end band (jobs/kind_error_band.hpp) where the band describes the figure.
void IntervalJob::attach(KeyMetrics& central, const KeyMetrics Run::*list,
                         std::vector<jobs::WidenedFigure>* widened) const {
  if (mode_ == IntervalMode::CentralOnly) return;
  const bool pair = paired() && !fallback_;
  // The figures the bounds moved: against the central run they pair with.
  const KeyMetrics& reference = pair ? runs_[1].*list : central;
  std::vector<std::string> moved;
  for (const KeyMetric& k : central) {
    const double* c = numeric_value(reference, k.id);
    if (c && jobs::moved_by_bounds(*c, numeric_value(low().*list, k.id), numeric_value(high().*list, k.id)))
      moved.push_back(k.id);
  }
  if (pair)
    attach_paired_intervals(central, runs_[1].*list, low().*list, high().*list);
  else
    attach_intervals(central, low().*list, high().*list);
  jobs::widen_to_kind_band(central, result_kind(scenario_), moved, widened);
}

KeyMetrics IntervalJob::with_intervals(KeyMetrics (Job::*central)() const, const KeyMetrics Run::*list) const {
  KeyMetrics f = (*runs_[0].job.*central)();
  attach(f, list, nullptr);
  return f;
}

KeyMetrics IntervalJob::key_metrics() const { return with_intervals(&Job::key_metrics, &Run::key_metrics); }
KeyMetrics IntervalJob::interval_figures() const { return with_intervals(&Job::interval_figures, &Run::figures); }
KeyMetrics IntervalJob::headline_figures() const { return with_intervals(&Job::headline_figures, &Run::headline); }

// Only the central run writes JSON; the bound runs give their typed figures.
json IntervalJob::result() const {
  json r = runs_[0].job->result();
  if (mode_ == IntervalMode::CentralOnly) {
    r["intervals"] = "central_only";
    r["accuracy"] = accuracy_.to_json();
    return r;
  }
  // Every widened figure's kernels' interval, for "interval_band".
  std::vector<jobs::WidenedFigure> widened;
  KeyMetrics km = runs_[0].job->key_metrics();
  attach(km, &Run::key_metrics, &widened);
  r["key_metrics"] = key_metrics_to_json(km);
  // Key metrics are shown too (on a card, as training's memory per GPU, or
  // in the key-metrics table): one without an interval says why, as the
  // other headline cards do below.
  for (const KeyMetric& k : km)
    if (!k.has_interval && k.numeric()) r["no_interval"][k.id] = no_interval_reason(k, low().key_metrics, high().key_metrics);
  // Training compare variants carry key metrics of their own (their bounds run in full).
  std::vector<KeyMetrics> variants = runs_[0].job->variant_key_metrics();
  for (size_t i = 0; i < variants.size() && i < low().variants.size() && i < high().variants.size(); ++i) {
    std::vector<std::string> moved;  // compare variants' bounds run in full
    for (const KeyMetric& k : variants[i]) {
      if (k.numeric() && jobs::moved_by_bounds(k.value, numeric_value(low().variants[i], k.id),
                                              numeric_value(high().variants[i], k.id)))
        moved.push_back(k.id);
    }
    attach_intervals(variants[i], low().variants[i], high().variants[i]);
    jobs::widen_to_kind_band(variants[i], result_kind(scenario_), moved, nullptr);
    r["compare"][i]["key_metrics"] = key_metrics_to_json(variants[i]);
  }
  // The other headline cards: their intervals by catalogue id.
  KeyMetrics headline = runs_[0].job->headline_figures();
  attach(headline, &Run::headline, &widened);
  for (const KeyMetric& k : headline) {
    if (k.has_interval) r["intervals_80"][k.id] = json::array({k.low, k.high});
    // A figure the run does not have (goodput without an SLO) is no number: it needs no reason.
    else if (k.numeric()) r["no_interval"][k.id] = no_interval_reason(k, low().headline, high().headline);
  }
  // The headline's and the max-QPS answer's figures: low/high beside each, and
  // the tier their interval comes from.
  KeyMetrics figures = runs_[0].job->interval_figures();
  attach(figures, &Run::figures, &widened);
  r["interval_band"] = jobs::interval_band_json(result_kind(scenario_), widened);
  for (const KeyMetric& k : figures) {
    const json::json_pointer ptr(k.id);
    const json::json_pointer parent = ptr.parent_pointer();
    if (!r.contains(parent) || !r.at(parent).is_object()) continue;
    json& obj = r.at(parent);
    const std::string name = ptr.back();
    obj[name + "_low"] = k.has_interval ? json(k.low) : json(nullptr);
    obj[name + "_high"] = k.has_interval ? json(k.high) : json(nullptr);
    obj["interval_tier"] = r["cost_tier"];
  }
  if (paired()) {
    const int64_t total = scenario_.serving->simulation->workload.num_requests;
    json runs = {{"method", fallback_ ? "full" : "paired_short_runs"},
                 {"requests", total},
                 {"short_run_requests", short_requests_}};
    if (fallback_) runs["bound_run_requests"] = fallback_requests_;
    runs["meaning"] =
        fallback_ ? (fallback_lacked_figure_
                         ? "the paired short bound runs were too short to give every headline figure, so both bounds ran in "
                           "full, each on bound_run_requests requests (the central run's as it last ran)"
                         : "the paired short bound runs found the system overloaded (latencies grow with the run's length), "
                           "so both bounds ran in full, each on bound_run_requests requests (the central run's as it last ran)")
                  : "the bounds ran on the first short_run_requests requests of the same workload, beside a central "
                    "run of the same requests; each bound's value is the full central value times its ratio to the "
                    "short central run (docs/cost-model.md gives the measured agreement with full bound runs)";
    r["interval_runs"] = runs;
  } else if (scenario_.serving && scenario_.serving->mode == "simulate") {
    r["interval_runs"] = {{"method", "full"}, {"meaning", "the central run and full runs at both cost bounds"}};
  }
  r["accuracy"] = accuracy_.to_json();
  return r;
}

}  // namespace sightline
