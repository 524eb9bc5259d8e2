#include "scenario/training_spec.hpp"

#include "core/error.hpp"
#include "scenario/scenario.hpp"

namespace sightline {

TrainingSpec read_training(const json&, const std::string& path, const Scenario&) {
  fail(error_code::kNotImplemented, path, "the training estimator is not in this engine version yet");
}

json training_to_json(const TrainingSpec&) { return json::object(); }

}  // namespace sightline
