#pragma once
// How a serving engine schedules when the user names no policy (a software
// stack's `default_scheduler`): vLLM V1 always chunks prompts into a token
// budget per step with the running requests first, SGLang chunks prompts and
// runs a prompt's chunks in steps of their own; both size the budget from the
// GPU's memory. Without it a stack runs the scenario reader's generic policy
// (continuous, prefill first, vLLM V0's).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline {

struct GpuSpec;

// A token budget by GPU: the value of the first tier whose bound the GPU's
// memory is below, else `otherwise`; a GPU whose architecture is in
// `small_architectures` takes the first tier's value whatever its memory
// (vLLM keeps the A100 at its small budget).
struct MemoryTieredTokens {
  struct Tier {
    double below_GiB = 0;
    int64_t tokens = 0;
  };
  std::vector<Tier> tiers;  // bounds ascending
  int64_t otherwise = 0;
  std::vector<std::string> small_architectures;

  int64_t on(const GpuSpec& gpu) const;
  json to_json() const;
};

// The policy and priority are names of the scenario layer's registries
// (scenario/policy_registry), which this layer cannot see: the scenario
// reader checks them where it applies them, at their keys under `path`.
struct StackScheduler {
  std::string policy;    // a scheduler policy's name
  std::string priority;  // a scheduler priority's name
  // chunked_prefill's token budget per step: required there, refused under
  // continuous, by the scenario layer.
  std::optional<MemoryTieredTokens> chunk_size;
  // continuous's token budget per step: optional there (without it the
  // scenario reader's own), refused under chunked_prefill.
  std::optional<MemoryTieredTokens> max_num_batched_tokens;
  std::string path;  // of the default_scheduler object
  std::string source;
  json to_json() const;
};

StackScheduler read_stack_scheduler(const json& v, const std::string& path);

// How a stack's engine admits a prompt into its KV cache when the scenario
// says nothing (`default_kv_admission`): TensorRT-LLM's default capacity
// scheduler (GUARANTEED_NO_EVICT) admits a request only when the blocks its
// whole prompt and output will need are free; vLLM and SGLang take blocks as
// the sequence grows and preempt when they run out. `admission` is a name of
// the scenario layer's registry (kv_admissions), checked where it is applied.
struct StackKvAdmission {
  std::string admission;
  std::string path;  // of the default_kv_admission object
  std::string source;
  json to_json() const;
};

StackKvAdmission read_stack_kv_admission(const json& v, const std::string& path);

}  // namespace sightline
