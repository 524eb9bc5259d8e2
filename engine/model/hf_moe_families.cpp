// Readers of MoE families whose configs carry their own layer lists and
// switches: Hunyuan (model_type hunyuan, hunyuan_v1_moe) and MiniMax-M2
// (minimax_m2). Each switch the engine does not price (cross-layer attention,
// lightning attention, capacity-dropped tokens...) is refused at its key.
#include "model/hf_reader.hpp"

namespace sightline::hf {

namespace {

// A value given either once or once per layer (Hunyuan writes moe_topk,
// moe_intermediate_size, num_shared_expert and num_experts as lists). The
// engine prices one expert shape for all MoE layers, so the entries of the
// layers from `first` on must agree; a list that differs is refused at its
// first differing entry, never averaged.
int64_t uniform_per_layer(const HfReader& r, const char* key, int64_t min_value, int64_t max_value, int layers,
                          int first, int64_t fallback) {
  if (!r.has(key)) return fallback;
  const json& v = r.at(key);
  const std::string p = r.child(key);
  if (!v.is_array()) return read_integer(v, p, min_value, max_value);
  if (static_cast<int>(v.size()) != layers)
    fail(error_code::kConstraint, p,
         std::string(key) + " lists " + std::to_string(v.size()) + " values but num_hidden_layers is " + std::to_string(layers));
  int64_t value = 0;
  for (int i = first; i < layers; ++i) {
    const int64_t x = read_integer(v[static_cast<size_t>(i)], pointer_append(p, static_cast<size_t>(i)), min_value, max_value);
    if (i == first) value = x;
    else if (x != value)
      fail(error_code::kNotImplemented, pointer_append(p, static_cast<size_t>(i)),
           std::string(key) + " differs between layers (layer " + std::to_string(first) + ": " + std::to_string(value) +
               ", layer " + std::to_string(i) + ": " + std::to_string(x) +
               "); the engine prices one expert shape for every MoE layer, so per-layer shapes are not priced");
  }
  return value;
}

// A switch the engine prices only in one position: refused, located, otherwise.
void refuse_if(const HfReader& r, const char* key, bool priced_value, const std::string& what) {
  if (r.boolean_or(key, priced_value) != priced_value)
    fail(error_code::kNotImplemented, r.child(key), what + " is not priced; reading the model without it would misprice it");
}

}  // namespace

// Hunyuan-A13B (model_type "hunyuan", Tencent's remote code) and transformers'
// hunyuan_v1_moe: Llama attention with QK norm, moe_layer_num_skipped dense
// layers, then MoE layers with a shared MLP beside the routed experts.
void read_hunyuan(const HfReader& r, const std::string& type, ModelArch& m) {
  const bool remote_code = type == "hunyuan";
  r.mark("attention_head_dim");  // read as head_dim (read_llama_like_with_defaults)
  const std::string norm = r.string_or("norm_type", "rms");
  if (norm != "rms" && norm != "hf_rms")
    fail(error_code::kInvalidValue, r.child("norm_type"), "norm_type '" + printable(norm) + "' not understood (rms, hf_rms)");
  // transformers' hunyuan_v1_moe always normalises q and k; the remote code only with use_qk_norm.
  m.qk_norm = r.boolean_or("use_qk_norm", !remote_code);
  if (!r.boolean_or("use_rotary_pos_emb", true))
    for (ModelLayer& k : m.layers) k.rope = false;
  refuse_if(r, "use_cla", false, "cross-layer attention (use_cla: layers share one KV cache every cla_share_factor layers)");
  r.mark("cla_share_factor");  // only matters with use_cla
  refuse_if(r, "use_mla", false, "Hunyuan's latent attention (use_mla)");
  refuse_if(r, "add_classification_head", false, "a classification head instead of the LM head (add_classification_head)");
  for (const char* k : {"class_num", "pool_type", "skip_cls_token", "dense_list"})
    r.neutral(k, "classification-head settings (add_classification_head is false: no such head is built)");
  refuse_if(r, "moe_drop_tokens", false, "capacity-limited routing that drops tokens (moe_drop_tokens)");
  r.mark("moe_random_routing_dropped_token");  // only matters with moe_drop_tokens
  for (const char* k : {"eod_token_id", "im_start_id", "im_end_id", "im_newline_id", "mask_init_id", "pad_id",
                        "text_start_id", "text_end_id", "video_start_id", "video_end_id"})
    r.neutral(k, "token ids (tokenizer, not compute)");
  r.neutral("org_vocab_size", "the vocabulary before padding; the embedding and LM head have vocab_size rows");
  r.neutral("group_limited_greedy", "expert routing restriction (group-limited top-k): the experts' work is priced for top-k routing");
  for (const char* k : {"vit_type", "vit_path", "vit_token", "vit_patch", "vit_input_resolution", "vit_mapping_type",
                        "vit_norm_type", "vit_remove_prenorm", "vit_used_rms_norm", "vit_add_patchemb_bias",
                        "anyres_pooling_size", "anyres_vit_max_image_size", "anyres_vit_two_views", "num_media_embeds",
                        "position_embedding_xdrope", "xdrope_section"})
    r.neutral(k, "multimodal glue (vision tower and its position sections: only text generation is priced)");

  const int layers = m.num_layers;
  const int skipped = static_cast<int>(r.integer_or({"moe_layer_num_skipped"}, 0, layers, 0));
  const int64_t experts = uniform_per_layer(r, "num_experts", 1, 65536, layers, skipped, 1);
  if (experts <= 1) {
    for (const char* k : {"moe_topk", "moe_intermediate_size", "num_shared_expert", "use_mixed_mlp_moe"}) r.mark(k);
    return;  // a dense model: every layer the Llama MLP
  }
  if (skipped >= layers)
    fail(error_code::kConstraint, r.child("moe_layer_num_skipped"), "moe_layer_num_skipped leaves no MoE layer");
  m.moe.num_experts = static_cast<int>(experts);
  m.moe.top_k = static_cast<int>(uniform_per_layer(r, "moe_topk", 1, experts, layers, skipped, 0));
  if (m.moe.top_k == 0) fail(error_code::kMissingKey, r.child("moe_topk"), "a Hunyuan MoE config needs 'moe_topk'");
  m.moe.expert_intermediate_size = uniform_per_layer(r, "moe_intermediate_size", 1, kMaxModelDim, layers, skipped, m.intermediate_size);
  const int64_t shared = uniform_per_layer(r, "num_shared_expert", 0, 1024, layers, skipped, 1);
  // The remote code builds the shared MLP only with use_mixed_mlp_moe, at
  // num_shared_expert expert widths; transformers always builds one of intermediate_size.
  const bool mixed = r.boolean_or("use_mixed_mlp_moe", !remote_code);
  const int64_t shared_size = mixed ? shared * m.moe.expert_intermediate_size : 0;
  if (!remote_code && (m.moe.expert_intermediate_size != m.intermediate_size || shared_size != m.intermediate_size))
    fail(error_code::kConstraint, r.child(m.moe.expert_intermediate_size != m.intermediate_size ? "moe_intermediate_size" : "num_shared_expert"),
         "transformers' hunyuan_v1_moe builds every expert and the shared MLP at intermediate_size (" +
             std::to_string(m.intermediate_size) + "), but this config's expert keys describe another shape; the two "
             "readings differ, so neither is guessed");
  // num_shared_expert experts of the expert width, added without a gate of their own.
  m.moe.num_shared_experts = shared_size > 0 ? static_cast<int>(shared) : 0;
  m.moe.first_dense_layers = skipped;
  for (int i = 0; i < layers; ++i) m.layers[static_cast<size_t>(i)].ffn = i >= skipped ? LayerFfn::Moe : LayerFfn::Dense;
}

// MiniMax-M2 (M2, M2.1, M2.5, M2.7): GQA with a QK norm over the whole q and k
// projections, partial rope, and 256 sigmoid-routed experts (with a routing
// bias) in every layer. intermediate_size is the experts' width.
void read_minimax_m2(const HfReader& r, ModelArch& m) {
  read_moe_common(r, m, {"num_local_experts"});
  m.moe.expert_intermediate_size = m.intermediate_size;
  for (ModelLayer& k : m.layers) k.ffn = LayerFfn::Moe;
  if (r.integer_or({"shared_intermediate_size"}, 0, kMaxModelDim, 0) > 0)
    fail(error_code::kNotImplemented, r.child("shared_intermediate_size"),
         "a MiniMax shared expert (shared_intermediate_size > 0, gated by shared_moe_mode) is not priced");
  r.neutral("shared_moe_mode", "the shared expert's gate (shared_intermediate_size is 0: there is no shared expert)");
  m.moe.router_bias = r.boolean_or("use_routing_bias", false);
  m.qk_norm = r.boolean_or("use_qk_norm", false);
  const std::string scope = r.string_or("qk_norm_type", "per_head");
  if (scope != "per_layer" && scope != "per_head")
    fail(error_code::kInvalidValue, r.child("qk_norm_type"), "qk_norm_type '" + printable(scope) + "' not understood (per_layer, per_head)");
  m.qk_norm_per_layer = m.qk_norm && scope == "per_layer";
  r.neutral("rotary_dim", "the rotary width (rope on the first rotary_dim dims of each head: elementwise, priced with attention)");
  // attn_type_list: 1 softmax attention, 0 MiniMax's lightning (linear) attention.
  if (r.has("attn_type_list")) {
    const json& a = r.at("attn_type_list");
    const std::string p = r.child("attn_type_list");
    if (!a.is_array() || static_cast<int>(a.size()) != m.num_layers)
      fail(error_code::kConstraint, p, "attn_type_list needs one entry per layer (1: softmax attention, 0: lightning attention)");
    for (size_t i = 0; i < a.size(); ++i)
      if (read_integer(a[i], pointer_append(p, i), 0, 1) == 0)
        fail(error_code::kNotImplemented, pointer_append(p, i),
             "layer " + std::to_string(i) + " uses MiniMax lightning attention (attn_type_list 0), which is not priced");
  }
  // The MTP modules the config describes are not in the published weights:
  // MiniMax-M2.7's 96,103 checkpoint tensors hold no MTP module.
  for (const char* k : {"use_mtp", "num_mtp_modules", "mtp_transformer_layers"})
    r.neutral(k, "MTP modules named by the config but absent from the released checkpoint (no MTP tensor), so no MTP draft is priced");
}

}  // namespace sightline::hf
