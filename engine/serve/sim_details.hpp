#pragma once
// A serving run's details beside its metrics (SimReport::details). The parts
// the engine uses again (the first replica's KV capacity, the first pool's
// weights, the limits, the warnings) are typed; the parts that are only
// written out (deployment, memory per pool, token accounting, the detailed
// records) are built as JSON once by their one writer in sim_details.cpp and
// copied into the result as they are, never read back.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline::serve {

// One replica of the first pool: what its KV cache holds.
struct ServingCapacity {
  double kv_bytes_per_token_per_gpu = 0, kv_KiB_per_token = 0, kv_GiB_per_max_len_request = 0;
  int64_t kv_tokens_per_replica = 0, kv_blocks_per_replica = 0, max_model_len = 0, max_concurrent_at_max_len = 0;
  // Against multi-head attention with the same heads (none for MLA, whose
  // cache is not a per-head K/V pair).
  struct VersusMha {
    double kv_KiB_per_token_if_mha = 0, kv_reduction_vs_mha = 0;
    int num_heads = 0, num_kv_heads = 0;
  };
  std::optional<VersusMha> versus_mha;
  json to_json() const;
};

// Where the run stopped, against serving.limits.
struct ServingLimits {
  int64_t events = 0, max_events = 0;
  double simulated_s = 0, max_sim_time_s = 0;
  std::string limit_hit;  // empty: no limit was hit
  json to_json() const;
};

struct SimDetails {
  json deployment, memory_per_gpu, tokens;  // written once, copied into the result
  double first_pool_weights_GiB = 0;        // memory_per_gpu[0].weights_GiB
  ServingCapacity capacity;
  std::vector<std::string> warnings;
  ServingLimits limits;
  json time_series, requests, trace;  // a detailed run's records (null otherwise)
};

}  // namespace sightline::serve
