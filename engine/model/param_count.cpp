#include "model/param_count.hpp"

#include "core/checked_math.hpp"

namespace sightline {

namespace {

// Every product and sum below is checked: an architecture read from input may
// be large enough to overflow (4,096 layers of 1,024 wide experts).
const char* const kWhat = "the model's parameter count";
int64_t mul(int64_t a, int64_t b) { return checked_mul(a, b, "/model", kWhat); }
int64_t add(int64_t a, int64_t b) { return checked_add(a, b, "/model", kWhat); }

}  // namespace

LayerParams attention_and_norm_params(const ModelArch& m) {
  const int64_t h = m.hidden_size;
  LayerParams p;
  if (m.mla.enabled) {
    const auto& a = m.mla;
    const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    const int64_t q = a.q_lora_rank > 0 ? add(add(mul(h, a.q_lora_rank), a.q_lora_rank) /* q_a norm */,
                                              mul(mul(a.q_lora_rank, m.num_heads), qk))
                                        : mul(mul(h, m.num_heads), qk);
    const int64_t kv = add(add(mul(h, a.kv_lora_rank + a.qk_rope_head_dim), a.kv_lora_rank) /* kv_a norm */,
                           mul(mul(a.kv_lora_rank, m.num_heads), a.qk_nope_head_dim + a.v_head_dim));
    const int64_t o = mul(mul(m.num_heads, a.v_head_dim), h);
    p.attention = add(add(q, kv), o);
  } else {
    const int64_t q_out = static_cast<int64_t>(m.num_heads) * m.head_dim;
    const int64_t kv_out = static_cast<int64_t>(m.num_kv_heads) * m.head_dim;
    p.attention = add(mul(h, q_out + 2 * kv_out), mul(q_out, h));
    if (m.attention_bias || m.qkv_bias) p.attention += q_out + 2 * kv_out;
    if (m.attention_bias) p.attention += h;
  }
  const int64_t norm_size = m.norm == "layernorm" ? 2 * h : h;  // layernorm has a bias
  p.norms = 2 * norm_size;
  return p;
}

namespace {

int64_t mlp_params(int64_t h, int64_t inter, bool gated, bool bias) {
  int64_t w = mul(gated ? 3 : 2, mul(h, inter));
  if (bias) w = add(w, add(mul(gated ? 2 : 1, inter), h));
  return w;
}

}  // namespace

ParamCounts count_params(const ModelArch& m) {
  const int64_t h = m.hidden_size;
  ParamCounts c;
  c.embedding = add(mul(m.vocab_size, h), m.position_embedding == "learned" ? mul(m.max_context, h) : 0);
  c.lm_head = m.tied_embeddings ? 0 : mul(m.vocab_size, h);
  c.final_norm = m.norm == "layernorm" ? 2 * h : h;

  c.dense_layer = attention_and_norm_params(m);
  c.dense_layer.mlp = mlp_params(h, m.intermediate_size, m.gated_mlp, m.mlp_bias);
  c.dense_layer.mlp_active = c.dense_layer.mlp;

  if (m.is_moe()) {
    c.moe_layer = attention_and_norm_params(m);
    const int64_t expert = mlp_params(h, m.moe.expert_intermediate_size, m.gated_mlp, m.mlp_bias);
    const int64_t router = mul(h, m.moe.num_experts);
    c.moe_layer.mlp = add(mul(expert, m.moe.num_experts + m.moe.num_shared_experts), router);
    c.moe_layer.mlp_active = add(mul(expert, m.moe.top_k + m.moe.num_shared_experts), router);
  }

  auto layer_total = [](const LayerParams& l) { return add(add(l.attention, l.mlp), l.norms); };
  auto layer_active = [](const LayerParams& l) { return add(add(l.attention, l.mlp_active), l.norms); };
  const int64_t dense_n = m.num_dense_layers();
  const int64_t moe_n = m.num_moe_layers();
  c.non_embedding = add(add(mul(dense_n, layer_total(c.dense_layer)), mul(moe_n, layer_total(c.moe_layer))), c.final_norm);
  c.total = add(add(c.non_embedding, c.embedding), c.lm_head);
  c.active = add(add(add(add(mul(dense_n, layer_active(c.dense_layer)), mul(moe_n, layer_active(c.moe_layer))), c.final_norm),
                     c.embedding), c.lm_head);
  return c;
}

}  // namespace sightline
