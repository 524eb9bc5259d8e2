#pragma once
// A scenario document run to its end as one job inside its work budget: its
// "limits" section taken, the run refused before it starts when its estimate
// is over the budget, then stepped to the end. The string API's run_scenario
// writes the finished job's result; the fit's replays read its typed figures
// (Job::figure), never its JSON.
#include <memory>

#include "jobs/budgeted_job.hpp"
#include "jobs/make_job.hpp"
#include "core/json_reader.hpp"
#include "scenario/run_limits.hpp"

namespace sightline {

// The job of a scenario document, not yet stepped, inside its work budget
// (a BudgetedJob: its result() and figure() throw the located limit_exceeded
// error when the budget ran out): its limits taken, its estimate checked
// (refused in milliseconds, before any allocation). Throws the located error
// of an invalid document. `stop_at_s` > 0 stops a serving simulation there
// without draining (SimulationSpec::stop_at_s: a fit's replay of a benchmark
// cut in flight; no scenario key sets it). The page's sliced runs start here
// (api Engine::start_job).
std::unique_ptr<BudgetedJob> start_budgeted_job(json doc, IntervalMode mode,
                                                int64_t default_units = RunLimits::kDefaultMaxWorkUnits,
                                                int64_t ceiling = RunLimits::kApiCeiling, double stop_at_s = 0);

// The same job stepped to its end.
std::unique_ptr<Job> run_job_to_end(json doc, IntervalMode mode, int64_t default_units = RunLimits::kDefaultMaxWorkUnits,
                                    int64_t ceiling = RunLimits::kApiCeiling, double stop_at_s = 0);

// One run of a scenario document at a cost bound, without intervals, as a
// search runs a candidate or an interval point: its "limits" section taken,
// refused before it starts when its estimate is over the budget, a cluster
// calibration applied (make_single_job), inside its work budget. The page's
// sliced runs (api Engine::start_single) and the native search's candidates
// (search run_candidate) both start here, so a candidate is run and budgeted
// the same way in both. `candidate`: the scenario must be a serving
// simulation (a located error otherwise).
struct SingleRun {
  Scenario scenario;                           // as read, at the bound
  std::unique_ptr<BudgetedJob> job;
  const serve::ServingJob* serving = nullptr;  // the job's serving simulation (null: another kind)
};
SingleRun start_single_run(json doc, CostBound bound, bool candidate);

}  // namespace sightline
