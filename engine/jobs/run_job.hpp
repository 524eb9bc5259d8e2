#pragma once
// A scenario document run to its end as one job inside its work budget: its
// "limits" section taken, the run refused before it starts when its estimate
// is over the budget, then stepped to the end. The string API's run_scenario
// writes the finished job's result; the fit's replays read its typed figures
// (Job::figure), never its JSON.
#include <memory>

#include "jobs/make_job.hpp"
#include "core/json_reader.hpp"
#include "scenario/run_limits.hpp"

namespace sightline {

// The finished job (a BudgetedJob: its result() and figure() throw the located
// limit_exceeded error when the budget ran out). Throws the located error of
// an invalid document. `stop_at_s` > 0 stops a serving simulation there
// without draining (SimulationSpec::stop_at_s: a fit's replay of a benchmark
// cut in flight; no scenario key sets it).
std::unique_ptr<Job> run_job_to_end(json doc, IntervalMode mode, int64_t default_units = RunLimits::kDefaultMaxWorkUnits,
                                    int64_t ceiling = RunLimits::kApiCeiling, double stop_at_s = 0);

}  // namespace sightline
