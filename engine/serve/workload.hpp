#pragma once
// Request generation: arrivals and lengths drawn from named seeded streams
// ("arrivals", "prompt_tokens", "output_tokens", "prefix", "lora",
// "model_mix"), so changing one aspect leaves the others' draws unchanged.
#include <cstdint>
#include <optional>
#include <vector>

#include "serve/event_queue.hpp"
#include "scenario/simulation_spec.hpp"

namespace sightline::serve {

struct RequestSpec {
  TimeNs arrival = 0;
  int64_t prompt = 0;
  int64_t output = 0;
  int32_t prefix_group = -1;
  int64_t prefix_tokens = 0;
  int32_t adapter = -1;
  int8_t model = 0;  // 0: the scenario's model, 1: the co-located model
};

struct GeneratedWorkload {
  std::vector<RequestSpec> requests;
  int64_t truncated_outputs = 0;  // outputs shortened to fit max_model_len
  bool capped = false;            // duration-driven generation hit limits.max_requests
};

struct WorkloadOverride {
  std::optional<double> rate_qps;        // replaces the rate (a trace is time-scaled to it)
  std::optional<int64_t> num_requests;   // replaces the count (duration-driven workloads too)
  std::optional<uint64_t> seed;          // replaces the scenario's seed: an independent replication
};

GeneratedWorkload generate_workload(const SimulationSpec& spec, uint64_t seed, const WorkloadOverride& o = {});

// The order the requests arrive in, ties by index: empty when that is their
// order already (every generator's), else the permutation. The simulator
// feeds arrivals to its event queue one at a time in this order.
std::vector<int32_t> arrival_order(const std::vector<RequestSpec>& requests);

// The workload's natural arrival rate (requests per second); 0 for all_at_once.
double natural_rate_qps(const SimulationSpec& spec);

}  // namespace sightline::serve
