#pragma once
// A job inside its work budget: every run, of any kind, stops after
// limits.max_work_units units of work (Job::units_done). A run that reaches
// the budget unfinished ends with a located limit_exceeded error naming the
// limit to raise and how far the run got, never a hang. The check lives here,
// between slices, so no simulator needs to know about it.
#include <memory>

#include "run/job.hpp"
#include "core/json_reader.hpp"
#include "scenario/run_limits.hpp"

namespace sightline {

// RunLimits (the budget's default and ceilings) lives with the scenario's
// reader of the section: scenario/run_limits.hpp.

// Reads and removes the "limits" section of a scenario document (located
// errors at /limits/...), so the rest reads as before. `default_units` is the
// budget when the scenario gives none; `ceiling` the most it may ask for.
RunLimits take_run_limits(json& doc, int64_t default_units = RunLimits::kDefaultMaxWorkUnits,
                          int64_t ceiling = RunLimits::kApiCeiling);

class BudgetedJob : public Job {
 public:
  BudgetedJob(std::unique_ptr<Job> inner, int64_t max_work_units);
  bool step(int64_t max_units) override;
  double progress() const override;
  json result() const override;  // throws limit_exceeded when the budget ran out
  int64_t units_done() const override { return inner_->units_done(); }
  KeyMetrics key_metrics() const override;  // throws limit_exceeded, like result()
  std::vector<KeyMetrics> variant_key_metrics() const override;
  KeyMetric figure(const std::string& id) const override;  // throws limit_exceeded, like result()
  // Throws the located limit_exceeded error when the budget ran out, for a
  // caller that reads the finished run's typed figures rather than result().
  void check_within_budget() const;

 private:
  [[noreturn]] void fail_over_budget() const;  // the located limit_exceeded error
  std::unique_ptr<Job> inner_;
  int64_t max_work_units_;
  bool finished_ = false;
  bool stopped_ = false;
  double progress_at_stop_ = 0;
};

}  // namespace sightline
