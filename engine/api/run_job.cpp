#include "api/run_job.hpp"

#include "api/budgeted_job.hpp"
#include "api/run_estimate.hpp"
#include "scenario/scenario.hpp"

namespace sightline {

namespace {
constexpr int64_t kRunAllUnits = int64_t{1} << 62;
}  // namespace

std::unique_ptr<Job> run_job_to_end(json doc, IntervalMode mode, int64_t default_units, int64_t ceiling) {
  const RunLimits limits = take_run_limits(doc, default_units, ceiling);
  const Scenario s = read_scenario(doc);
  check_run_estimate(s, estimate_run(s, mode), limits);  // refused in milliseconds, before any allocation
  auto job = std::make_unique<BudgetedJob>(make_job(s, mode), limits.max_work_units);
  while (!job->step(kRunAllUnits)) {
  }
  return job;
}

}  // namespace sightline
