#pragma once
// Chooses the job a validated scenario runs as: latency, serving simulation or
// training. It sits in `api` because it is the one place that knows every
// simulator; the simulators themselves only know the `run` layer below them.
#include <memory>

#include "run/job.hpp"
#include "scenario/scenario.hpp"

namespace sightline {

std::unique_ptr<Job> make_job(const Scenario& scenario);

}  // namespace sightline
