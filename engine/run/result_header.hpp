#pragma once
// The fields every run result starts with: versions, seed, kind, cost tier,
// the scenario's id and title, and the model's size.
#include <string>

#include "core/json_reader.hpp"
#include "scenario/scenario.hpp"

namespace sightline {

json result_header(const Scenario& s, const std::string& kind, const std::string& cost_tier);

}  // namespace sightline
