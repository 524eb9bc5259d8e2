#pragma once
// Whether a scenario lies within what its cluster calibration was fitted on
// (fit.fitted_on, written by `sightline fit`: models, GPU, software stack,
// open-loop rates, closed-loop concurrencies, prompt and output lengths). A
// calibration is a few factors fitted to some runs; outside them it is an
// extrapolation, and the run says so: one located warning per quantity
// ("calibration_out_of_range at /serving/...: ..."), in the result's warnings
// (the envelope and the CLI table show them).
#include <string>
#include <vector>

#include "scenario/scenario.hpp"

namespace sightline {

// Nothing when the scenario has no cluster calibration or it records no fitted_on.
std::vector<std::string> calibration_range_warnings(const Scenario& scenario);

}  // namespace sightline
