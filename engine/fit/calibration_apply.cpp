#include "fit/calibration_apply.hpp"

#include "core/error.hpp"

namespace sightline::fit {

json& cost_model_section(json& scenario, const std::string& scenario_name) {
  if (!scenario.is_object()) fail(error_code::kType, "", scenario_name + ": a scenario is a JSON object");
  if (!scenario.contains("cost_model")) scenario["cost_model"] = json::object();
  json& cost_model = scenario["cost_model"];
  if (!cost_model.is_object())
    fail(error_code::kType, "/cost_model", scenario_name + ": expected an object, got " + json_type_name(cost_model));
  return cost_model;
}

json with_calibration(json scenario, const json& calibration, const std::string& scenario_name) {
  json& cost_model = cost_model_section(scenario, scenario_name);
  if (calibration.is_null()) cost_model.erase("calibration");
  else cost_model["calibration"] = calibration;
  return scenario;
}

}  // namespace sightline::fit
