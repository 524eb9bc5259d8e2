#include "jobs/run_job.hpp"

#include <memory>

#include "jobs/budgeted_job.hpp"
#include "jobs/run_estimate.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_spec.hpp"

namespace sightline {

namespace {
constexpr int64_t kRunAllUnits = int64_t{1} << 62;
}  // namespace

std::unique_ptr<Job> run_job_to_end(json doc, IntervalMode mode, int64_t default_units, int64_t ceiling,
                                    double stop_at_s) {
  const RunLimits limits = take_run_limits(doc, default_units, ceiling);
  Scenario s = read_scenario(doc);
  if (stop_at_s > 0 && s.serving && s.serving->simulation) {
    auto sim = std::make_shared<serve::SimulationSpec>(*s.serving->simulation);
    sim->stop_at_s = stop_at_s;
    s.serving->simulation = std::move(sim);
  }
  check_run_estimate(s, estimate_run(s, mode), limits);  // refused in milliseconds, before any allocation
  auto job = std::make_unique<BudgetedJob>(make_job(s, mode), limits.max_work_units);
  while (!job->step(kRunAllUnits)) {
  }
  return job;
}

}  // namespace sightline
