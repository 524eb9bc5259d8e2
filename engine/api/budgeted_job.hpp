#pragma once
// A job inside its work budget: every run, of any kind, stops after
// limits.max_work_units units of work (Job::units_done). A run that reaches
// the budget unfinished ends with a located limit_exceeded error naming the
// limit to raise and how far the run got, never a hang. The check lives here,
// between slices, so no simulator needs to know about it.
#include <memory>

#include "run/job.hpp"
#include "core/json_reader.hpp"

namespace sightline {

// Bounds on the work of one run, whatever its kind: the scenario's top-level
// "limits" section. A unit is one simulated serving event, one priced latency
// step, or one slice of a training schedule. The largest value keeps the
// largest scenario the validator accepts within about 30 s natively (README,
// "Limits").
struct RunLimits {
  static constexpr int64_t kDefaultMaxWorkUnits = 10000000;
  static constexpr int64_t kMaxMaxWorkUnits = 10000000;
  int64_t max_work_units = kDefaultMaxWorkUnits;
  json to_json() const { return {{"max_work_units", max_work_units}}; }
};

// Reads and removes the "limits" section of a scenario document (located
// errors at /limits/...), so the rest reads as before.
RunLimits take_run_limits(json& doc);

class BudgetedJob : public Job {
 public:
  BudgetedJob(std::unique_ptr<Job> inner, int64_t max_work_units);
  bool step(int64_t max_units) override;
  double progress() const override;
  json result() const override;  // throws limit_exceeded when the budget ran out
  int64_t units_done() const override { return inner_->units_done(); }
  KeyMetrics key_metrics() const override;  // throws limit_exceeded, like result()
  std::vector<KeyMetrics> variant_key_metrics() const override;

 private:
  [[noreturn]] void fail_over_budget() const;  // the located limit_exceeded error
  std::unique_ptr<Job> inner_;
  int64_t max_work_units_;
  bool finished_ = false;
  bool stopped_ = false;
  double progress_at_stop_ = 0;
};

}  // namespace sightline
