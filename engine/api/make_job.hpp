#pragma once
// Chooses the job a validated scenario runs as: latency, serving simulation or
// training, wrapped in the interval runs. It sits in `api` because it is the one place that knows every
// simulator; the simulators themselves only know the `run` layer below them.
#include <memory>

#include "run/job.hpp"
#include "scenario/scenario.hpp"

namespace sightline {

// The job of a scenario, with intervals on its key metrics (an IntervalJob).
std::unique_ptr<Job> make_job(const Scenario& scenario);

// One run of the scenario at its cost bound, without intervals.
std::unique_ptr<Job> make_single_job(const Scenario& scenario);

}  // namespace sightline
