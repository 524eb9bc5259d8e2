// Readers of families whose attention layer kinds differ in head shape: the
// per-kind shapes go into the one generic field, ModelLayer::shape
// (model/architecture.hpp AttentionShape); nothing downstream knows the family.
//   - Gemma-4 (gemma4, gemma4_text): sliding layers at the model's heads and
//     head_dim, global layers at global_head_dim with, under attention_k_eq_v,
//     num_global_key_value_heads and values from the key projection; in the MoE
//     models a dense MLP beside the routed experts in every layer.
//   - MiMo-V2 (mimo_v2_flash): full and sliding-window layers each with their own
//     query/KV head counts and key and value widths (swa_*).
// Each is checked against the implementations that define it: vLLM's
// model_executor/models/gemma4.py (Gemma4DecoderLayer, Gemma4Attention) and
// mimo_v2_flash.py (MiMoV2FlashDecoderLayer, MiMoV2Attention).
#include "model/hf_reader.hpp"

namespace sightline::hf {

namespace {

// Gives every layer for which `pick` holds the head shape `a`, unless `a` is the
// model's own (so a model whose kinds share one shape keeps no per-layer shape).
template <typename Pick>
void give_layers_shape(ModelArch& m, const AttentionShape& a, Pick pick) {
  AttentionShape own;
  own.heads = m.num_heads, own.kv_heads = m.num_kv_heads, own.qk_head_dim = m.head_dim, own.v_head_dim = m.head_dim;
  own.sinks = m.attention_sinks;
  if (a == own) return;
  for (size_t i = 0; i < m.layers.size(); ++i)
    if (pick(m.layers[i])) m.layers[i].shape = a;
}

// A per-layer 0/1 list (MiMo-V2's hybrid_layer_pattern), one entry per layer.
std::vector<int> per_layer_flags(const HfReader& r, const char* key, int layers) {
  if (!r.has(key))
    fail(error_code::kMissingKey, r.child(key), std::string("this family lists its layer kinds in '") + key + "' (one 0 or 1 per layer)");
  const json& a = r.at(key);
  if (!a.is_array()) fail(error_code::kType, r.child(key), "expected a list with one 0 or 1 per layer");
  if (static_cast<int>(a.size()) != layers)
    fail(error_code::kConstraint, r.child(key),
         std::string(key) + " lists " + std::to_string(a.size()) + " layers but num_hidden_layers is " + std::to_string(layers));
  std::vector<int> out;
  for (size_t i = 0; i < a.size(); ++i) out.push_back(static_cast<int>(read_integer(a[i], pointer_append(r.child(key), i), 0, 1)));
  return out;
}

// A key that must be absent, null or `neutral_value`; another value is a part the engine does not price.
void refuse_unless(const HfReader& r, const char* key, int64_t neutral_value, const std::string& what) {
  if (r.integer_or({key}, 0, kMaxModelDim, neutral_value) != neutral_value)
    fail(error_code::kNotImplemented, r.child(key), what + " is not priced; reading the model without it would misprice it");
}

// Gemma-4's MoE block (enable_moe_block): the dense MLP of intermediate_size
// runs on every token beside num_experts routed experts (top_k_experts of
// moe_intermediate_size): priced as an ungated shared expert of that size, which
// has the same weights and work. Norms: Gemma's four, plus the block's
// post_feedforward_layernorm_1/_2, pre_feedforward_layernorm_2 and the router's
// per-channel scale (vLLM gemma4.py Gemma4DecoderLayer, Gemma4Router).
void read_gemma4_moe(const HfReader& r, ModelArch& m) {
  const bool moe = r.boolean_or("enable_moe_block", false);
  if (!moe) {
    for (const char* k : {"num_experts", "top_k_experts", "moe_intermediate_size", "expert_intermediate_size"})
      r.neutral(k, "MoE sizes with enable_moe_block false (no MoE block is built)");
    return;
  }
  m.moe.num_experts = static_cast<int>(r.integer({"num_experts"}, 1, 65536));
  m.moe.top_k = static_cast<int>(r.integer({"top_k_experts"}, 1, 65536));
  if (m.moe.top_k > m.moe.num_experts)
    fail(error_code::kConstraint, r.child("top_k_experts"),
         "top_k_experts (" + std::to_string(m.moe.top_k) + ") cannot exceed num_experts (" + std::to_string(m.moe.num_experts) + ")");
  m.moe.expert_intermediate_size = r.integer({"moe_intermediate_size", "expert_intermediate_size"}, 1, kMaxModelDim);
  m.moe.num_shared_experts = 1;
  m.moe.shared_intermediate_size = m.intermediate_size;
  m.moe.shared_expert_gate = false;
  for (ModelLayer& k : m.layers) k.ffn = LayerFfn::Moe;
  m.norms_per_layer = 8;
}

}  // namespace

// Gemma-4 text model (gemma4_text, or gemma4's text_config), after read_llama_like.
void read_gemma4(const HfReader& r, ModelArch& m) {
  m.qk_norm = true;        // q_norm and k_norm weights per head dim; v_norm has none
  m.norms_per_layer = 4;   // input, post-attention, pre- and post-feedforward
  m.tied_embeddings = r.boolean_or("tie_word_embeddings", true);
  refuse_unless(r, "hidden_size_per_layer_input", 0, "Gemma-4's per-layer embeddings (hidden_size_per_layer_input > 0)");
  r.neutral("vocab_size_per_layer_input", "the per-layer embedding table's rows (hidden_size_per_layer_input is 0: no such table)");
  refuse_unless(r, "num_kv_shared_layers", 0, "KV sharing across layers (num_kv_shared_layers > 0: the last layers reuse earlier layers' KV cache)");
  r.neutral("use_double_wide_mlp", "doubles the MLP of KV-shared layers only (num_kv_shared_layers is 0: there are none)");
  if (r.has("use_bidirectional_attention")) {
    // transformers: causal unless "all"; "vision" lets image tokens see each other (text stays causal).
    const json& v = r.at("use_bidirectional_attention");
    if (!(v.is_string() && v.get<std::string>() == "vision") && !(v.is_boolean() && !v.get<bool>()))
      fail(error_code::kNotImplemented, r.child("use_bidirectional_attention"),
           "bidirectional attention over text tokens is not priced (only causal text attention, or \"vision\": image tokens only)");
    r.neutral("use_bidirectional_attention", "bidirectional attention among image tokens only (text generation stays causal)");
  }
  const int64_t window = r.integer_or({"sliding_window"}, 1, kMaxModelContext, 0);
  if (!r.has("layer_types"))
    fail(error_code::kMissingKey, r.child("layer_types"), "Gemma-4 configs list each layer's kind in 'layer_types'; its pattern is not guessed");
  read_layer_types(r, m, window, 0);
  // Global (full-attention) layers: their own head width, and under
  // attention_k_eq_v their own KV head count with values from the keys.
  AttentionShape global;
  global.heads = m.num_heads;
  global.qk_head_dim = global.v_head_dim = r.integer_or({"global_head_dim"}, 1, 4096, m.head_dim);
  global.k_eq_v = r.boolean_or("attention_k_eq_v", false);
  global.kv_heads = m.num_kv_heads;
  if (global.k_eq_v && r.has("num_global_key_value_heads"))
    global.kv_heads = static_cast<int>(r.integer({"num_global_key_value_heads"}, 1, 4096));
  else if (global.k_eq_v)
    m.import.warnings.push_back("attention_k_eq_v without 'num_global_key_value_heads': the global layers keep num_key_value_heads (transformers' and vLLM's rule)");
  else
    r.neutral("num_global_key_value_heads", "read only with attention_k_eq_v (false here: global layers use num_key_value_heads)");
  if (m.num_heads % global.kv_heads != 0)
    fail(error_code::kConstraint, r.child("num_global_key_value_heads"),
         "num_attention_heads (" + std::to_string(m.num_heads) + ") must be a multiple of num_global_key_value_heads (" +
             std::to_string(global.kv_heads) + ")");
  give_layers_shape(m, global, [](const ModelLayer& k) { return k.mixer == LayerMixer::Attention && k.window == 0; });
  read_gemma4_moe(r, m);
}

// vLLM gemma4.py Gemma4DecoderLayer: self.mlp (the dense MLP), self.router, self.moe.
bool moe_layer_mlp_is_dense(const std::string& family) { return family == "gemma4" || family == "gemma4_text"; }

// MiMo-V2-Flash: hybrid_layer_pattern 1 = a sliding-window layer with the swa_*
// shape and sliding_window_size, 0 = full attention with the model's heads;
// values narrower than keys (v_head_dim, swa_v_head_dim) in both; learned sink
// logits where add_*_attention_sink_bias says; routed experts with a score
// correction bias per moe_layer_freq (vLLM mimo_v2_flash.py).
void read_mimo_v2(const HfReader& r, ModelArch& m) {
  const int64_t window = r.integer({"sliding_window_size"}, 1, kMaxModelContext);
  // The same window written under other names: equal, or which one holds is not guessed.
  for (const char* k : {"sliding_window", "attention_chunk_size"}) {
    if (!r.has(k)) continue;
    if (read_integer(r.at(k), r.child(k), 1, kMaxModelContext) != window)
      fail(error_code::kConstraint, r.child(k),
           std::string(k) + " differs from sliding_window_size; vLLM windows the sliding layers by sliding_window_size, and "
                            "what the other would change is not guessed");
    r.neutral(k, "equal to sliding_window_size, the window vLLM applies to the sliding layers");
  }
  AttentionShape full;
  full.heads = m.num_heads, full.kv_heads = m.num_kv_heads, full.qk_head_dim = m.head_dim;
  full.v_head_dim = r.integer_or({"v_head_dim"}, 1, 4096, m.head_dim);
  full.sinks = r.boolean_or("add_full_attention_sink_bias", false);
  AttentionShape swa;
  swa.heads = static_cast<int>(r.integer({"swa_num_attention_heads"}, 1, 4096));
  swa.kv_heads = static_cast<int>(r.integer({"swa_num_key_value_heads"}, 1, 4096));
  swa.qk_head_dim = r.integer({"swa_head_dim"}, 1, 4096);
  swa.v_head_dim = r.integer_or({"swa_v_head_dim"}, 1, 4096, swa.qk_head_dim);
  swa.sinks = r.boolean_or("add_swa_attention_sink_bias", false);
  if (swa.heads % swa.kv_heads != 0)
    fail(error_code::kConstraint, r.child("swa_num_key_value_heads"),
         "swa_num_attention_heads (" + std::to_string(swa.heads) + ") must be a multiple of swa_num_key_value_heads (" +
             std::to_string(swa.kv_heads) + ")");
  const std::vector<int> sliding = per_layer_flags(r, "hybrid_layer_pattern", m.num_layers);
  for (size_t i = 0; i < sliding.size(); ++i)
    if (sliding[i] == 1) m.layers[i].window = window;
  give_layers_shape(m, full, [](const ModelLayer& k) { return k.window == 0; });
  give_layers_shape(m, swa, [](const ModelLayer& k) { return k.window > 0; });
  r.neutral("layernorm_epsilon", "norm epsilon (a constant inside the norm)");
  r.neutral("attention_value_scale", "a constant the values are multiplied by (elementwise, no size change)");
  r.neutral("swa_rope_theta", "the sliding layers' rope frequency (a constant inside rope)");
  read_moe_common(r, m, {"n_routed_experts"});
  m.moe.expert_intermediate_size = r.integer({"moe_intermediate_size"}, 1, kMaxModelDim);
  // vLLM's MiMoV2MoE builds no shared expert: a config that asks for one is not guessed at.
  refuse_unless(r, "n_shared_experts", 0, "a MiMo-V2 shared expert (n_shared_experts > 0; vLLM's MiMoV2MoE builds none)");
  // vLLM's MiMoV2MoE always builds gate.e_score_correction_bias (one number per expert).
  m.moe.router_bias = true;
  place_moe_layers(r, m);
}

}  // namespace sightline::hf
