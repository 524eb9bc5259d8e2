#pragma once
// Per-GPU memory of an inference deployment: weights, KV cache, transient
// activations and the runtime's own reservation. Reported in GiB.
#include <cstdint>

#include "core/json_reader.hpp"
#include "model/architecture.hpp"
#include "model/operators.hpp"

namespace sightline {

inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// Weight bytes held by the most loaded GPU (the pipeline stage with the
// embedding or the LM head). Linear layers use the weight dtype; embeddings,
// LM head and norms stay in the activation dtype, as quantized checkpoints keep them.
double weight_bytes_per_gpu(const ModelArch& m, const Precision& p, const ParallelLayout& layout);

// Weight bytes per GPU of `modules` multi-token-prediction modules of `m`
// (model/mtp.hpp) loaded beside it on a tensor-parallel group of `tp`: each
// one decoder layer (sharded like the model's), eh_proj (replicated) and its
// three norms; the embedding and LM head are the main model's.
double mtp_weight_bytes_per_gpu(const ModelArch& m, const Precision& p, int tp, int modules);

// Peak transient activation bytes of one step of `tokens` new tokens sampling
// `logit_rows` rows, as an engine profiles it at start-up (vLLM V1's
// profile_run: a forward of the full token budget, then the sampler on its
// output): the larger of the forward's peak (the live tensors at the MLP or
// attention peak) and the sampler's, `bytes_per_logit` per row x vocabulary
// entry (the stack's sampler_bytes_per_logit) while the step's output hidden
// states are still live.
double activation_peak_bytes(const ModelArch& m, const Precision& p, int tp, int64_t tokens, int64_t logit_rows,
                             double bytes_per_logit);

struct InferenceMemory {
  double capacity_GiB = 0;
  double weights_GiB = 0;
  double kv_cache_GiB = 0;
  double activations_GiB = 0;
  double runtime_overhead_GiB = 0;
  double free_GiB = 0;
  json to_json() const;
};

}  // namespace sightline
