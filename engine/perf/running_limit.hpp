#pragma once
// How a serving engine sizes its running batch when the user sets no limit
// (a software stack's `default_max_num_seqs`): the requests one replica runs
// at once, vLLM's max_num_seqs, SGLang's max_running_requests. Engines do not
// share vLLM V0's 256: vLLM V1 takes 1024 on large-memory GPUs, SGLang sizes
// it from its KV pool, TensorRT-LLM's LLM API takes 2048, so a batch that 256
// would cap runs wider there.
#include <cstdint>
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline {

struct GpuSpec;

struct RunningLimitRule {
  enum class Kind {
    // `large` on GPUs with at least `min_memory_GiB` of memory whose
    // architecture is not in `except_architectures`, else `small`.
    GpuMemory,
    // min(KV tokens / tokens_per_request, clamp(int(KV tokens / max_model_len
    // x requests_per_context), min_requests, max_requests)): the request
    // pool SGLang sizes from its KV pool and context length.
    KvPool,
    // `requests` on every GPU (TensorRT-LLM's max_batch_size).
    Fixed,
  };
  Kind kind = Kind::GpuMemory;
  double min_memory_GiB = 0;
  std::vector<std::string> except_architectures;
  int64_t large = 0, small = 0;
  double requests_per_context = 0;
  int64_t min_requests = 0, max_requests = 0, tokens_per_request = 0;
  int64_t requests = 0;  // Fixed
  std::string source;

  bool needs_kv_pool() const { return kind == Kind::KvPool; }
  json to_json() const;
};

RunningLimitRule read_running_limit_rule(const json& v, const std::string& path);

// The limit the rule gives on `gpu`; `kv_tokens` (the replica's KV pool, in
// tokens) and `max_model_len` are read by the KvPool rule only.
int64_t running_limit(const RunningLimitRule& rule, const GpuSpec& gpu, int64_t kv_tokens, int64_t max_model_len);

}  // namespace sightline
