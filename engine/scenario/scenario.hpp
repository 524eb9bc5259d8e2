#pragma once
// A scenario after validation: presets expanded, defaults filled, every
// cross-field constraint checked. Nothing downstream re-validates input.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "model/operators.hpp"
#include "perf/cost_setup.hpp"
#include "scenario/serving_spec.hpp"
#include "scenario/training_spec.hpp"

namespace sightline {

inline constexpr int kScenarioSchemaVersion = 1;

struct Scenario {
  std::string id;
  std::string title;
  std::string source;
  uint64_t seed = 0;
  ModelArch model;
  HardwareSpec hardware;
  Precision precision;
  CostModelSpec cost_model;
  std::optional<ServingSpec> serving;
  std::optional<TrainingSpec> training;
  // What the run should say about how it reads the scenario (e.g. FP4
  // weights priced weight-only on a GPU without FP4 tensor cores).
  std::vector<std::string> warnings;
};

// Parses and validates a scenario document (already parsed JSON).
Scenario read_scenario(const json& doc);

// What a GPU must support of a precision (bf16 / fp8 tensor cores, fp8
// weights), for the scenario's GPU and every pool's alike; a refusal is
// located at where(field) ("activations" or "weights").
void check_precision_on_gpu(const Precision& p, const GpuSpec& gpu,
                            const std::function<std::string(const char*)>& where);

// The scenario as the engine understood it, with every default made explicit.
json scenario_to_json(const Scenario& s);

}  // namespace sightline
