#pragma once
// The "serving" section of a scenario, typed; read and written by
// read_serving.cpp.
#include <cstdint>
#include <memory>
#include <string>

#include "core/json_reader.hpp"
#include "model/operators.hpp"

namespace sightline {
namespace serve {
struct SimulationSpec;
}

struct Scenario;

struct LatencyWorkload {
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  int64_t batch_size = 1;
};

// mode "latency": one batch of identical requests, no queue (workload).
// mode "simulate": the discrete-event serving simulator (simulation); then
// `parallelism` is the first pool's layout.
struct ServingSpec {
  std::string mode = "latency";
  ParallelLayout parallelism;
  LatencyWorkload workload;
  std::shared_ptr<const serve::SimulationSpec> simulation;
  AttentionImpl attention = AttentionImpl::Flash;
  double runtime_overhead_GiB = 1.0;
};

// Reads and validates the section; `s` has model, hardware and precision already.
ServingSpec read_serving(const json& v, const std::string& path, const Scenario& s);
json serving_to_json(const ServingSpec& sv);

}  // namespace sightline
