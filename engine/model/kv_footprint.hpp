#pragma once
// What one sequence keeps between steps, layer kind by layer kind: full
// attention grows with the context; a sliding window or a chunk caps the
// cached tokens; linear-attention and Mamba layers keep a fixed state.
#include <cstdint>
#include <vector>

#include "model/architecture.hpp"
#include "model/operators.hpp"

namespace sightline {

struct CappedKv {
  int64_t cap_tokens = 0;       // at most this many tokens are kept
  double bytes_per_token = 0;   // over all layers with this cap
};

struct KvFootprint {
  double unbounded_bytes_per_token = 0;  // full-attention layers (and MLA)
  std::vector<CappedKv> capped;          // windowed / chunked layers, by cap
  double state_bytes_per_seq = 0;        // linear-attention and SSM state
  // Bytes per token while the context is shorter than every cap.
  double bytes_per_token_uncapped() const;
  // Bytes one sequence of `tokens` tokens keeps.
  double bytes_for_tokens(int64_t tokens) const;
};

// Per GPU under tensor parallelism `tp`, for the share `layer_fraction` of the
// model's layers (1/pp per pipeline stage). The state of linear-attention and
// SSM layers is kept in recurrent_state_bytes (inference engines keep it there
// even with an fp8 KV cache); attention KV in the KV-cache dtype.
KvFootprint kv_footprint_per_gpu(const ModelArch& m, const Precision& p, int tp, double layer_fraction);

// Bytes per element of a linear-attention / SSM state: the config's state
// dtype when it names one (Nemotron-3 and Qwen3.5 keep it in float32), else
// the activation dtype (bf16 under fp8 activations).
double recurrent_state_bytes(const ModelArch& m, const Precision& p);

// Attention KV elements per token of one attention layer of `kind` on one GPU:
// its K and V heads at their own widths (the layer's head shape when it has one).
double attention_kv_elements_per_token(const ModelArch& m, int tp, const ModelLayer& kind = ModelLayer{});

}  // namespace sightline
