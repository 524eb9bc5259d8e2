#pragma once
// How a cluster calibration (`sightline fit`'s file, perf/cluster_calibration.hpp)
// is applied to a scenario: it goes into the scenario's cost_model as
// "calibration". The one implementation behind `sightline run --calibration`,
// the fit's replays and the page's runs (api::apply_calibration).
#include <string>

#include "core/json_reader.hpp"

namespace sightline::fit {

// `scenario` with `calibration` at /cost_model/calibration (a null calibration
// removes one). A located error (in `scenario_name`) when the scenario is not
// an object or its cost_model is not one.
json with_calibration(json scenario, const json& calibration, const std::string& scenario_name);

// The scenario's cost_model object, created when absent; a located error when
// it is there and not an object.
json& cost_model_section(json& scenario, const std::string& scenario_name);

}  // namespace sightline::fit
