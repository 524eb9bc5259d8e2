#pragma once
// Runs a scenario three times, at the central cost and at the low and high
// bounds of every kernel's 80% interval (perf/cost_bounds.hpp), and returns the
// central result with `low`/`high` on each key metric and the "accuracy" block
// (or, in central-only mode, once: the central result and its accuracy block).
// Re-running (rather than scaling the answer) lets the bounds pass through
// batching, queueing, SLO attainment and pipeline overlap as the real run does.
#include <memory>

#include "api/make_job.hpp"

namespace sightline {

class IntervalJob : public Job {
 public:
  IntervalJob(const Scenario& scenario, IntervalMode mode);
  bool step(int64_t max_units) override;
  double progress() const override;
  json result() const override;
  int64_t units_done() const override;
  KeyMetrics key_metrics() const override;  // the central run's, with low/high from the bound runs

 private:
  // Each run owns its scenario: jobs keep pointers into it.
  struct Run {
    std::unique_ptr<Scenario> scenario;
    std::unique_ptr<Job> job;
    bool done = false;
  };
  Run runs_[3];  // central, low, high
  int run_count_ = 3;  // 1 in central-only mode
  AccuracySummary accuracy_;
};

}  // namespace sightline
