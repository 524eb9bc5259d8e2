#include "model/param_count.hpp"

namespace sightline {

LayerParams attention_and_norm_params(const ModelArch& m) {
  const int64_t h = m.hidden_size;
  LayerParams p;
  if (m.mla.enabled) {
    const auto& a = m.mla;
    const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    const int64_t q = a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank /* q_a norm */ +
                                              a.q_lora_rank * m.num_heads * qk
                                        : h * m.num_heads * qk;
    const int64_t kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank /* kv_a norm */ +
                       a.kv_lora_rank * m.num_heads * (a.qk_nope_head_dim + a.v_head_dim);
    const int64_t o = m.num_heads * a.v_head_dim * h;
    p.attention = q + kv + o;
  } else {
    const int64_t q_out = static_cast<int64_t>(m.num_heads) * m.head_dim;
    const int64_t kv_out = static_cast<int64_t>(m.num_kv_heads) * m.head_dim;
    p.attention = h * (q_out + 2 * kv_out) + q_out * h;
    if (m.attention_bias || m.qkv_bias) p.attention += q_out + 2 * kv_out;
    if (m.attention_bias) p.attention += h;
  }
  const int64_t norm_size = m.norm == "layernorm" ? 2 * h : h;  // layernorm has a bias
  p.norms = 2 * norm_size;
  return p;
}

namespace {

int64_t mlp_params(int64_t h, int64_t inter, bool gated, bool bias) {
  int64_t w = (gated ? 3 : 2) * h * inter;
  if (bias) w += (gated ? 2 : 1) * inter + h;
  return w;
}

}  // namespace

ParamCounts count_params(const ModelArch& m) {
  const int64_t h = m.hidden_size;
  ParamCounts c;
  c.embedding = m.vocab_size * h + (m.position_embedding == "learned" ? m.max_context * h : 0);
  c.lm_head = m.tied_embeddings ? 0 : m.vocab_size * h;
  c.final_norm = m.norm == "layernorm" ? 2 * h : h;

  c.dense_layer = attention_and_norm_params(m);
  c.dense_layer.mlp = mlp_params(h, m.intermediate_size, m.gated_mlp, m.mlp_bias);
  c.dense_layer.mlp_active = c.dense_layer.mlp;

  if (m.is_moe()) {
    c.moe_layer = attention_and_norm_params(m);
    const int64_t expert = mlp_params(h, m.moe.expert_intermediate_size, m.gated_mlp, m.mlp_bias);
    const int64_t router = h * m.moe.num_experts;
    c.moe_layer.mlp = expert * (m.moe.num_experts + m.moe.num_shared_experts) + router;
    c.moe_layer.mlp_active = expert * (m.moe.top_k + m.moe.num_shared_experts) + router;
  }

  auto layer_total = [](const LayerParams& l) { return l.attention + l.mlp + l.norms; };
  auto layer_active = [](const LayerParams& l) { return l.attention + l.mlp_active + l.norms; };
  const int64_t dense_n = m.num_dense_layers();
  const int64_t moe_n = m.num_moe_layers();
  c.non_embedding = dense_n * layer_total(c.dense_layer) + moe_n * layer_total(c.moe_layer) + c.final_norm;
  c.total = c.non_embedding + c.embedding + c.lm_head;
  c.active = dense_n * layer_active(c.dense_layer) + moe_n * layer_active(c.moe_layer) + c.final_norm +
             c.embedding + c.lm_head;
  return c;
}

}  // namespace sightline
