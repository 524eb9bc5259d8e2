#pragma once
// A scenario after validation: presets expanded, defaults filled, every
// cross-field constraint checked. Nothing downstream re-validates input.
#include <cstdint>
#include <optional>
#include <string>

#include "core/json_reader.hpp"
#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "model/operators.hpp"
#include "perf/cost_bounds.hpp"
#include "perf/host_overhead.hpp"
#include "scenario/serving_spec.hpp"
#include "scenario/training_spec.hpp"

namespace sightline {

inline constexpr int kScenarioSchemaVersion = 1;

struct HardwareSpec {
  GpuSpec gpu;
  int gpus_per_node = 1;
  int nodes = 1;
  std::optional<InterconnectSpec> intra_node;
  std::optional<InterconnectSpec> inter_node;
  int total_gpus() const { return gpus_per_node * nodes; }
};

// How steps are priced (the "cost_model" section).
struct CostModelSpec {
  std::string tier = "auto";  // auto | target-measured | cross-generation | roofline
  SoftwareStack software_stack;
  double gpu_hour_usd = 0;    // 0: no cost figures
  // Not read from JSON: which bound of the kernels' 80% interval a run prices
  // at (the interval runs of a job set it; see perf/cost_bounds.hpp).
  CostBound bound = CostBound::Central;
};

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
};

// Parses and validates a scenario document (already parsed JSON).
Scenario read_scenario(const json& doc);

// The scenario as the engine understood it, with every default made explicit.
json scenario_to_json(const Scenario& s);

}  // namespace sightline
