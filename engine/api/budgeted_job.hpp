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
// step, or one slice of a training schedule. The default keeps a run within
// about 30 s natively; the API's ceiling, twice that, within the 60 s of CPU
// promised for any command at its defaults (about 3 us per unit, docs/limits.md,
// "Limits"). A scenario asks for more than the default in its own
// limits.max_work_units: a capacity search with a compare variant, whose
// answer is replicated over a run 20x the search's (I5.5: about 1.65e7 units).
// The budget is a default, not a ceiling for everyone: the page, the fuzzer
// and the API keep kApiCeiling; the native CLI may raise a run's budget (its
// --max-work-units flag, or the scenario's own limit) up to kNativeCeiling.
// Memory is bounded for every caller by an estimate made before the run
// starts (api/run_estimate.hpp).
struct RunLimits {
  static constexpr int64_t kDefaultMaxWorkUnits = 10000000;
  static constexpr int64_t kApiCeiling = 20000000;
  static constexpr int64_t kNativeCeiling = 10000000000;
  static constexpr int64_t kMaxMaxWorkUnits = kApiCeiling;
  static constexpr int64_t kMaxMemoryBytes = int64_t{3} << 29;  // 1.5 GiB: the 2 GB promise with a margin
  int64_t max_work_units = kDefaultMaxWorkUnits;
  int64_t ceiling = kApiCeiling;  // the most max_work_units may be for this caller
  json to_json() const { return {{"max_work_units", max_work_units}}; }
};

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

 private:
  [[noreturn]] void fail_over_budget() const;  // the located limit_exceeded error
  std::unique_ptr<Job> inner_;
  int64_t max_work_units_;
  bool finished_ = false;
  bool stopped_ = false;
  double progress_at_stop_ = 0;
};

}  // namespace sightline
