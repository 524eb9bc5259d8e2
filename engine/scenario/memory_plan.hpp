#pragma once
// Per-GPU memory of one serving replica, vLLM-style: the KV cache gets what
// remains of gpu_memory_utilization x capacity after weights (every hosted
// model, a draft model, LoRA adapter slots), the activation peak of the
// largest step and the runtime's reservation. Used by validation (does it
// fit?) and by the simulator (how many KV blocks).
#include <cstdint>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "model/kv_footprint.hpp"
#include "model/operators.hpp"

namespace sightline::serve {

struct SimulationSpec;

// Windowed (sliding-window or chunked) attention layers as engines page them
// (vLLM's hybrid KV cache manager, SGLang's SWA pool): a sequence holds pages
// for at most `cap_tokens` tokens of these layers (plus the page being
// filled), and pages that slide out of the window go back to the pool. Counted
// in blocks of the full-attention layers: `blocks_per_block` is these layers'
// KV bytes per token over the full-attention layers'.
struct WindowedKv {
  int64_t cap_tokens = 0;
  double blocks_per_block = 0;
};

// The windowed layers of a model whose full-attention layers keep
// `kv_bytes_per_token`, in blocks of those layers.
std::vector<WindowedKv> windowed_pages(double kv_bytes_per_token, const std::vector<CappedKv>& windowed);

// Blocks of `block_size` tokens a sequence of `tokens` tokens holds: its
// full-attention blocks plus its windowed layers' pages (never past the cap).
int64_t kv_blocks_for(const std::vector<WindowedKv>& windowed, int64_t block_size, int64_t tokens);

struct EngineMemory {
  double kv_bytes_per_token = 0;  // per GPU, this model (plus its draft model)
  double kv_budget_GiB = 0;
  int64_t blocks = 0;             // KV blocks of block_size tokens
  double fixed_GiB = 0;           // per-slot state: linear-attention/SSM state
  // Windowed / chunked attention layers: KV bytes per token (per GPU) by cap,
  // paged from the same blocks (serve/kv_manager.hpp WindowedKv).
  std::vector<CappedKv> windowed;
};

struct ReplicaMemoryPlan {
  double capacity_GiB = 0;
  double usable_GiB = 0;          // capacity x gpu_memory_utilization
  double weights_GiB = 0;         // every hosted model
  double draft_weights_GiB = 0;
  double lora_GiB = 0;
  double activations_GiB = 0;
  double runtime_GiB = 0;
  double kv_cache_GiB = 0;        // all engines (blocks and fixed per-sequence state)
  double kv_fixed_GiB = 0;        // of which reserved per sequence slot
  std::vector<EngineMemory> engines;  // primary, then the co-located model
  json to_json() const;
};

// Bytes of one LoRA adapter on one GPU of a tp x pp replica.
double lora_adapter_bytes_per_gpu(const ModelArch& m, const Precision& p, const ParallelLayout& layout, int rank,
                                  bool all_linear);

// Largest number of new tokens (and logit rows) one step can carry.
int64_t max_step_tokens(const SimulationSpec& spec);

ReplicaMemoryPlan plan_replica_memory(const ModelArch& primary, const Precision& p, const ParallelLayout& layout,
                                      const GpuSpec& gpu, double runtime_overhead_GiB, double sampler_bytes_per_logit,
                                      const SimulationSpec& spec);

}  // namespace sightline::serve
