#include "model/param_count.hpp"

namespace sightline {

namespace {

int64_t mlp_params(int64_t h, int64_t inter, bool gated, bool bias) {
  int64_t w = (gated ? 3 : 2) * h * inter;
  if (bias) w += (gated ? 2 : 1) * inter + h;
  return w;
}

int64_t norm_params(const ModelArch& m) { return m.norm == "layernorm" ? 2 * m.hidden_size : m.hidden_size; }

// One attention layer of `kind`: its own head shape when it has one (Gemma-4's
// global layers, MiMo-V2's sliding ones), else the model's.
int64_t attention_params(const ModelArch& m, const ModelLayer& kind) {
  const int64_t h = m.hidden_size;
  if (m.mla.enabled) {
    const auto& a = m.mla;
    const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    const int64_t q = a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank /* q_a norm */ +
                                              a.q_lora_rank * m.num_heads * qk
                                        : h * m.num_heads * qk;
    const int64_t kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank /* kv_a norm */ +
                       a.kv_lora_rank * m.num_heads * (a.qk_nope_head_dim + a.v_head_dim);
    const int64_t o = m.num_heads * a.v_head_dim * h;
    return q + kv + o + (m.attention_sinks ? m.num_heads : 0);
  }
  const AttentionShape a = m.attention_shape(kind);
  const int64_t q_out = static_cast<int64_t>(a.heads) * a.qk_head_dim;
  const int64_t k_out = static_cast<int64_t>(a.kv_heads) * a.qk_head_dim;
  // Values taken from the key projection (k_eq_v) have no weights of their own.
  const int64_t v_out = a.k_eq_v ? 0 : static_cast<int64_t>(a.kv_heads) * a.v_head_dim;
  const int64_t o_in = static_cast<int64_t>(a.heads) * a.v_head_dim;
  // An output gate (Qwen3-Next) doubles the query projection's output.
  const int64_t q_proj = q_out * (m.attention_output_gate ? 2 : 1);
  int64_t p = h * (q_proj + k_out + v_out) + o_in * h;
  if (m.attention_bias || m.qkv_bias) p += q_proj + k_out + v_out;
  if (m.attention_bias) p += h;
  // One norm weight per head dim, or per channel of the whole q and k projections.
  if (m.qk_norm) p += m.qk_norm_per_layer ? q_out + k_out : 2 * a.qk_head_dim;
  if (a.sinks) p += a.heads;
  return p;
}

// Gated DeltaNet (Qwen3-Next): q, k, v, z and the b, a gates in; a causal
// conv over q, k, v; per-head decay and bias; a gated norm; the output.
int64_t linear_attention_params(const ModelArch& m) {
  const auto& l = m.linear_attention;
  const int64_t key_dim = static_cast<int64_t>(l.num_key_heads) * l.key_head_dim;
  const int64_t value_dim = static_cast<int64_t>(l.num_value_heads) * l.value_head_dim;
  const int64_t h = m.hidden_size;
  return h * (2 * key_dim + 2 * value_dim) + h * 2 * l.num_value_heads + (2 * key_dim + value_dim) * l.conv_kernel +
         2 * l.num_value_heads + l.value_head_dim + value_dim * h;
}

int64_t mamba_params(const ModelArch& m) {
  const auto& s = m.ssm;
  const int64_t h = m.hidden_size;
  const int64_t d = s.inner_size;
  if (s.version == 2) {
    const int64_t bc = 2LL * s.n_groups * s.state_size;
    // in_proj to x, z, B, C and dt; depthwise conv (with bias) over x, B, C;
    // dt bias, A and D per head; the gated norm; out_proj.
    return h * (2 * d + bc + s.num_heads) + (d + bc) * (s.conv_kernel + 1) + 3LL * s.num_heads + d + d * h;
  }
  // Mamba-1: in_proj (x, z), conv (with bias), x_proj to dt, B, C, dt_proj
  // (with bias), A (d_inner × d_state), D, out_proj.
  return h * 2 * d + d * (s.conv_kernel + 1) + d * (s.dt_rank + 2 * s.state_size) + s.dt_rank * d + d +
         d * s.state_size + d + d * h;
}

}  // namespace

int64_t indexer_params(const ModelArch& m) {
  const auto& s = m.sparse_index;
  if (!s.enabled()) return 0;
  const int64_t q_in = m.mla.enabled && m.mla.q_lora_rank > 0 ? m.mla.q_lora_rank : m.hidden_size;
  return q_in * s.heads * s.head_dim + m.hidden_size * s.head_dim + 2 * s.head_dim + m.hidden_size * s.heads;
}

LayerParams attention_and_norm_params(const ModelArch& m) {
  LayerParams p;
  p.attention = attention_params(m, ModelLayer{});
  p.norms = m.norms_per_layer * norm_params(m);
  return p;
}

LayerParams layer_params(const ModelArch& m, const ModelLayer& kind) {
  const int64_t h = m.hidden_size;
  LayerParams p;
  int norms = 0;
  switch (kind.mixer) {
    case LayerMixer::Attention:
      p.indexer = kind.indexer ? indexer_params(m) : 0;
      // o_proj: heads x value width -> hidden (MLA: its value heads).
      p.attention_out = (m.mla.enabled ? static_cast<int64_t>(m.num_heads) * m.mla.v_head_dim
                                       : static_cast<int64_t>(m.attention_shape(kind).heads) * m.attention_shape(kind).v_head_dim) * h;
      p.attention = attention_params(m, kind) + p.indexer, norms += 1;
      break;
    case LayerMixer::LinearAttention: p.attention = linear_attention_params(m), norms += 1; break;
    case LayerMixer::Mamba: p.attention = mamba_params(m), norms += 1; break;
    case LayerMixer::None: break;
  }
  switch (kind.ffn) {
    case LayerFfn::Dense:
      p.mlp = mlp_params(h, m.dense_width(kind), m.gated_mlp, m.mlp_bias);
      p.mlp_active = p.mlp;
      norms += 1;
      break;
    case LayerFfn::Moe: {
      const auto& moe = m.moe;
      // Routed experts at the latent width under latent MoE, behind its two projections.
      const int64_t expert = mlp_params(moe.routed_width(h), moe.expert_intermediate_size, m.gated_mlp, moe.expert_bias || m.mlp_bias);
      p.latent_proj = moe.latent_size > 0 ? 2 * h * moe.latent_size + (m.mlp_bias ? moe.latent_size + h : 0) : 0;
      const int64_t shared = moe.shared_intermediate() > 0 ? mlp_params(h, moe.shared_intermediate(), m.gated_mlp, m.mlp_bias) : 0;
      // Router; a shared expert of its own size also has a scalar gate (Qwen-MoE).
      int64_t router = h * moe.num_experts + (moe.expert_bias ? moe.num_experts : 0) + (moe.router_bias ? moe.num_experts : 0);
      if (moe.shared_intermediate_size > 0 && moe.shared_expert_gate) router += h;
      p.mlp = expert * moe.num_experts + shared + router + p.latent_proj;
      p.routed_experts = expert * moe.num_experts;
      p.mlp_active = expert * moe.top_k + shared + router + p.latent_proj;
      norms += 1;
      break;
    }
    case LayerFfn::None: break;
  }
  // norms_per_layer counts a standard layer's norms (2, or 4 with Gemma's
  // post-norms); a hybrid block with a single sub-layer keeps its share.
  const int per_sublayer = m.norms_per_layer >= 2 ? m.norms_per_layer / 2 : 1;
  p.norms = (m.norms_per_layer == 1 ? 1 : norms * per_sublayer) * norm_params(m);
  return p;
}

ParamCounts count_params(const ModelArch& m) {
  const int64_t h = m.hidden_size;
  ParamCounts c;
  c.embedding = m.vocab_size * h + (m.position_embedding == "learned" ? m.max_context * h : 0);
  c.lm_head = m.tied_embeddings ? 0 : m.vocab_size * h;
  c.final_norm = norm_params(m);

  ModelLayer dense_kind;
  c.dense_layer = layer_params(m, dense_kind);
  if (m.is_moe()) {
    ModelLayer moe_kind;
    moe_kind.ffn = LayerFfn::Moe;
    c.moe_layer = layer_params(m, moe_kind);
  }

  int64_t layers_total = 0, layers_active = 0;
  for (const LayerGroup& g : m.layer_groups()) {
    const LayerParams l = layer_params(m, g.kind);
    c.groups.push_back({g, l});
    layers_total += g.count * (l.attention + l.mlp + l.norms);
    layers_active += g.count * (l.attention + l.mlp_active + l.norms);
  }
  c.non_embedding = layers_total + c.final_norm;
  c.total = c.non_embedding + c.embedding + c.lm_head;
  c.active = layers_active + c.final_norm + (m.tied_embeddings ? m.vocab_size * h : c.lm_head);
  if (m.mtp_layers > 0) {
    // A DeepSeek MTP module: one full decoder layer of the model's last kind,
    // an input projection from [embedding; hidden] and two norms; it shares
    // the embedding and the LM head with the main model.
    const ModelLayer last = m.layer_kind(m.num_layers - 1);
    const LayerParams l = layer_params(m, last);
    c.mtp = m.mtp_layers * (l.attention + l.mlp + l.norms + 2 * h * h + 3 * norm_params(m));
  }
  return c;
}

}  // namespace sightline
