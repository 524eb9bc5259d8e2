#pragma once
// Parameter counts derived from the architecture, layer by layer.
#include <cstdint>

#include "model/architecture.hpp"

namespace sightline {

struct LayerParams {
  int64_t attention = 0;  // q, k, v, o (or MLA projections) incl. biases and MLA norms
  int64_t mlp = 0;        // dense MLP, or all experts + shared experts + router
  int64_t mlp_active = 0; // what one token touches: top_k + shared experts + router
  int64_t norms = 0;
};

struct ParamCounts {
  int64_t embedding = 0;      // token (+ learned position) embeddings
  int64_t lm_head = 0;        // 0 when tied to the embedding
  int64_t final_norm = 0;
  LayerParams dense_layer;    // one layer with a dense MLP
  LayerParams moe_layer;      // one MoE layer (zero for dense models)
  int64_t total = 0;
  int64_t active = 0;         // per-token activated parameters (MoE: top_k experts)
  int64_t non_embedding = 0;
};

LayerParams attention_and_norm_params(const ModelArch& m);
ParamCounts count_params(const ModelArch& m);

}  // namespace sightline
