#pragma once
// The "training" section of a scenario.
#include <string>

#include "core/json_reader.hpp"

namespace sightline {

struct Scenario;

struct TrainingSpec {};

// Reads and validates the section; `s` has model, hardware and precision already.
TrainingSpec read_training(const json& v, const std::string& path, const Scenario& s);
json training_to_json(const TrainingSpec& t);

}  // namespace sightline
