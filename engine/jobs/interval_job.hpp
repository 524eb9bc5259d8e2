#pragma once
// A result's 80% interval: the scenario runs at the central cost and at the
// low and high bounds of every kernel's 80% interval (perf/cost_bounds.hpp),
// and the central result gets `low`/`high` on each key metric (and on the
// serving headline's throughput and goodput and the max-QPS answer), plus the
// "accuracy" block. Re-running (rather than scaling the answer) lets the
// bounds pass through batching, queueing, SLO attainment and pipeline overlap
// as the real run does.
//
// Two ways to run the bounds (cost_model.intervals):
//   full: the central run plus full runs at both bounds (the reference; three
//     times the work).
//   paired short runs (serving simulations with a request count): the bound
//     runs simulate only the first n requests of the same workload (same
//     arrivals, lengths and other draws: every stream is drawn in request
//     order), and a central run of the same n requests pairs with them. Each
//     bound's full-length value is the full central value times the bound's
//     ratio to the central value on the short runs: what the short runs share
//     (warm-up, the drain at their end, the sampling of their n requests)
//     cancels in the ratio. n = max(5% of the requests, 400), so a default
//     10,000-request run simulates 1.15 central runs of requests instead of 3.
//     Where the central run or any short run is overloaded (arrivals outrun
//     the service rate, so latencies grow with the run's length) a short run
//     says little about a long one: both bounds then run in full.
//   "auto" (the default) takes the paired short runs when the three are at most
//   the full run's length (3n <= N, N >= 1,200), "reduced" whenever n < N.
// The paired estimate is checked against the full runs on the shipped serving
// presets (tests/unit/test_interval_runs.cpp; tolerance in docs/cost-model.md).
#include <cstdint>
#include <memory>
#include <vector>

#include "jobs/kind_error_band.hpp"
#include "jobs/make_job.hpp"

namespace sightline {

// The paired short runs' request count for this scenario and mode, or 0 when
// the bounds run in full (or not at all).
int64_t short_bound_requests(const Scenario& scenario, IntervalMode mode);

// A paired short run's scenario: the first n requests of the workload (and of
// each compare variant's) at cost bound `bound`. The low and high bound runs
// keep the max-QPS search; the central one, which only pairs with them, leaves
// it out.
std::unique_ptr<Scenario> short_bound_scenario(const Scenario& scenario, CostBound bound, int64_t n);

class IntervalJob : public Job {
 public:
  IntervalJob(const Scenario& scenario, IntervalMode mode);
  bool step(int64_t max_units) override;
  double progress() const override;
  json result() const override;
  int64_t units_done() const override;
  void limit_work(int64_t units) override;  // each run gets what the runs before it left
  KeyMetrics key_metrics() const override;  // the central run's, with low/high from the bound runs
  KeyMetrics interval_figures() const override;
  KeyMetrics headline_figures() const override;
  KeyMetric figure(const std::string& id) const override { return runs_.front().job->figure(id); }  // central
  bool overloaded() const override { return runs_.front().job->overloaded(); }

 private:
  // Each run owns its scenario: jobs keep pointers into it. A finished bound
  // run keeps only what the interval needs, and frees its simulation.
  struct Run {
    std::unique_ptr<Scenario> scenario;
    std::unique_ptr<Job> job;
    bool done = false;
    int64_t units = 0;
    double weight = 1;  // its share of the work, for progress()
    bool overloaded = false;
    KeyMetrics key_metrics, figures, headline;
    std::vector<KeyMetrics> variants;
  };
  void finish_run(size_t i);
  void keep_bound_figures(size_t i);  // a finished bound run: its figures kept, its simulation freed
  void judge_paired_runs();           // the paired runs and the central one are done: full bounds needed?
  // The bound runs whose figures make the interval: (low, high), and for the
  // paired method the short central run too.
  const Run* central_short() const { return paired() ? &runs_[1] : nullptr; }
  const Run& low() const { return runs_[fallback_ ? 4 : paired() ? 2 : 1]; }
  const Run& high() const { return runs_[fallback_ ? 5 : paired() ? 3 : 2]; }
  bool paired() const { return short_requests_ > 0; }
  void attach(KeyMetrics& central, const KeyMetrics Run::*list, std::vector<jobs::WidenedFigure>* widened) const;
  // The central run's figures of one kind (`central`), with their intervals from the runs' `list`.
  KeyMetrics with_intervals(KeyMetrics (Job::*central)() const, const KeyMetrics Run::*list) const;

  Scenario scenario_;
  IntervalMode mode_;
  int64_t short_requests_ = 0;  // > 0: the paired short runs
  bool fallback_ = false;       // the paired runs were overloaded: full bound runs follow
  bool fallback_lacked_figure_ = false;  // ... or lacked a figure of the full run
  int64_t fallback_requests_ = 0;        // the full bound runs' requests: the central run's as it last ran
  std::vector<Run> runs_;       // central first, then the bound runs in order
  // The order the runs run in: the bound runs first, the central run last
  // (then the full bound runs of a fallback). A finished central run is kept
  // whole to the end (its result is written from it), so a bound run after it
  // would add its own simulation to the central run's memory at its peak;
  // before it, a bound run's memory is freed before the central run needs any.
  std::vector<size_t> order_;
  size_t next_ = 0;             // into order_
  int64_t work_limit_ = INT64_MAX;  // limit_work(): the whole run's
  AccuracySummary accuracy_;
};

}  // namespace sightline
