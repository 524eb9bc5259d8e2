#pragma once
// Chooses the job a validated scenario runs as: latency, serving simulation or
// training, wrapped in the interval runs. It sits in `jobs`, the layer above the
// simulators, because it is the one place that knows every simulator; the
// simulators themselves only know the `run` layer below them.
#include <memory>

#include "run/job.hpp"
#include "scenario/scenario.hpp"

namespace sightline {

// How much of a result's uncertainty a run computes.
//   Bounds: the central run plus the runs at the low and high cost bounds, so
//     key metrics carry their 80% interval (three simulations).
//   CentralOnly: the central run alone; key metrics carry no low/high and the
//     result says `"intervals": "central_only"` (for ranking many points).
enum class IntervalMode { Bounds, CentralOnly };

// The job of a scenario, wrapped in its interval runs (an IntervalJob).
std::unique_ptr<Job> make_job(const Scenario& scenario, IntervalMode mode = IntervalMode::Bounds);

namespace serve {
class ServingJob;
}

// One run of the scenario at its cost bound, without intervals. `serving`
// (may be null) is set to the run's serving simulation when it is one (null
// otherwise), for what its typed figures say beyond the result (a search
// candidate's limit facts); it lives as long as the job.
std::unique_ptr<Job> make_single_job(const Scenario& scenario, const serve::ServingJob** serving = nullptr);

// The kind of result the scenario's job writes (its "kind"): training,
// serving_simulation or serving_latency, as the job chosen above.
const char* result_kind(const Scenario& scenario);

}  // namespace sightline
