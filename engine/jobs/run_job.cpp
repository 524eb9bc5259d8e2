#include "jobs/run_job.hpp"

#include <memory>

#include "core/error.hpp"
#include "jobs/budgeted_job.hpp"
#include "jobs/run_estimate.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_spec.hpp"

namespace sightline {

namespace {
constexpr int64_t kRunAllUnits = int64_t{1} << 62;
}  // namespace

std::unique_ptr<BudgetedJob> start_budgeted_job(json doc, IntervalMode mode, int64_t default_units, int64_t ceiling,
                                                double stop_at_s) {
  const RunLimits limits = take_run_limits(doc, default_units, ceiling);
  Scenario s = read_scenario(doc);
  if (stop_at_s > 0 && s.serving && s.serving->simulation) {
    auto sim = std::make_shared<serve::SimulationSpec>(*s.serving->simulation);
    sim->stop_at_s = stop_at_s;
    s.serving->simulation = std::move(sim);
  }
  check_run_estimate(s, estimate_run(s, mode), limits);  // refused in milliseconds, before any allocation
  return std::make_unique<BudgetedJob>(make_job(s, mode), limits.max_work_units);
}

std::unique_ptr<Job> run_job_to_end(json doc, IntervalMode mode, int64_t default_units, int64_t ceiling,
                                    double stop_at_s) {
  std::unique_ptr<BudgetedJob> job = start_budgeted_job(std::move(doc), mode, default_units, ceiling, stop_at_s);
  while (!job->step(kRunAllUnits)) {
  }
  return job;
}

SingleRun start_single_run(json doc, CostBound bound, bool candidate) {
  const RunLimits limits = take_run_limits(doc);
  SingleRun run;
  run.scenario = read_scenario(doc);
  run.scenario.cost_model.bound = bound;
  check_run_estimate(run.scenario, estimate_run(run.scenario, IntervalMode::CentralOnly), limits);
  std::unique_ptr<Job> job = make_single_job(run.scenario, &run.serving);
  if (candidate && !run.serving) fail(error_code::kInvalidValue, "/serving/mode", "a search candidate is a serving simulation");
  run.job = std::make_unique<BudgetedJob>(std::move(job), limits.max_work_units);
  return run;
}

}  // namespace sightline
