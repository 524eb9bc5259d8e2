#pragma once
// Parameter counts derived from the architecture, layer by layer.
#include <cstdint>
#include <vector>

#include "model/architecture.hpp"

namespace sightline {

struct LayerParams {
  int64_t attention = 0;  // the mixer: q, k, v, o (or MLA / linear-attention / Mamba projections), biases, its norms
  int64_t mlp = 0;        // dense MLP, or all experts + shared experts + router
  int64_t mlp_active = 0; // what one token touches: top_k + shared experts + router
  int64_t norms = 0;
  int64_t routed_experts = 0;  // the routed experts alone (part of mlp): what expert parallelism spreads
  // Latent MoE's hidden <-> latent projections (part of mlp and mlp_active):
  // replicated on every tensor-parallel rank, not sharded.
  int64_t latent_proj = 0;
  // DSA's indexer (part of attention): replicated on every tensor-parallel rank.
  int64_t indexer = 0;
  // The attention's output projection weights (part of attention), which a checkpoint
  // may store in another format than the rest (CheckpointQuant::attention_out_quantized).
  int64_t attention_out = 0;
};

// Parameters of one group of identical layers (per layer).
struct GroupParams {
  LayerGroup group;
  LayerParams layer;
};

struct ParamCounts {
  int64_t embedding = 0;      // token (+ learned position) embeddings
  int64_t lm_head = 0;        // 0 when tied to the embedding
  int64_t final_norm = 0;
  LayerParams dense_layer;    // one full-attention layer with a dense MLP
  LayerParams moe_layer;      // one full-attention MoE layer (zero for dense models)
  std::vector<GroupParams> groups;  // every layer kind of the model, with its count
  int64_t total = 0;          // everything in the main model (embedding included, MTP layers not)
  // Per-token activated parameters (MoE: top_k experts), without the input
  // embedding, which is a lookup rather than compute (vendors count it so);
  // the LM head is included.
  int64_t active = 0;
  int64_t non_embedding = 0;  // total minus embedding and LM head
  int64_t mtp = 0;            // multi-token-prediction layers shipped beside the model
};

LayerParams attention_and_norm_params(const ModelArch& m);
// DSA's lightning indexer in one layer: wq_b (from the query's low-rank latent,
// or the hidden state without one), wk, the LayerNorm k_norm (weight and bias)
// and weights_proj (DeepSeek-V3.2-Exp inference/model.py, class Indexer).
int64_t indexer_params(const ModelArch& m);
// Parameters of one layer of `kind`.
LayerParams layer_params(const ModelArch& m, const ModelLayer& kind);
ParamCounts count_params(const ModelArch& m);

}  // namespace sightline
