// Families whose layers are an existing family's, read by that family's reader
// (reader_for in hf_families.cpp), plus the keys they name differently or add:
//   - glm4_moe_lite (GLM-4.7-Flash): DeepSeek-V2/V3's MLA attention and
//     DeepSeek-style MoE (vLLM glm4_moe_lite.py: Glm4MoeLiteMLAAttention is
//     DeepseekV2MLAAttention, the MoE is Glm4MoE), read as deepseek_v3;
//   - mimo (MiMo-7B): Qwen2 layers plus MTP layers (vLLM mimo.py: MiMoModel is
//     Qwen2Model; its mtp_layers are the draft), read as qwen2;
//   - bailing_moe (Ling-lite / Ling-plus): Llama-shaped GQA attention with one
//     fused QKV projection, routed experts and num_shared_experts shared experts
//     as one MLP, read as a Llama-style family (vLLM bailing_moe.py).
//   - olmo2, olmo3 (OLMo 2 and 3): Llama layers (OLMo-3's sliding layers from
//     layer_types) whose q and k are RMS-normed over the whole projection
//     (transformers Olmo2Attention: q_norm over num_attention_heads x head_dim,
//     k_norm over num_key_value_heads x head_dim; vLLM olmo2.py), with the two
//     norms after attention and MLP instead of before: the same count. Read by
//     structure alone they would lose the q/k norms.
// Each reads only the keys whose meaning those implementations give; a value
// they would read otherwise is refused at its key.
#include <string>

#include "model/hf_reader.hpp"

namespace sightline::hf {

namespace {

// transformers' Glm4MoeLiteConfig maps head_dim onto qk_rope_head_dim
// (attribute_map); the MLA widths themselves come from the qk_*/v_head_dim keys.
// A head_dim that says anything else is a config that disagrees with itself.
void read_glm4_moe_lite(const HfReader& r, ModelArch& m) {
  if (r.has("head_dim") && read_integer(r.at("head_dim"), r.child("head_dim"), 1, 4096) != m.mla.qk_rope_head_dim)
    fail(error_code::kConstraint, r.child("head_dim"),
         "head_dim is transformers' name for qk_rope_head_dim in glm4_moe_lite (" + std::to_string(m.mla.qk_rope_head_dim) +
             " here); another value is not guessed at");
  r.neutral("rope_interleave", "how rope pairs channels (elementwise, the same work)");
  // transformers' per-layer list of "dense" / "sparse" MLPs; vLLM places MoE layers by
  // first_k_dense_replace. Both are read: they must describe the same layers.
  if (!r.has("mlp_layer_types")) return;
  const json& a = r.at("mlp_layer_types");
  const std::string p = r.child("mlp_layer_types");
  if (!a.is_array() || static_cast<int>(a.size()) != m.num_layers)
    fail(error_code::kConstraint, p, "mlp_layer_types needs one entry (\"dense\" or \"sparse\") per layer");
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string at = pointer_append(p, i);
    const std::string t = a[i].is_string() ? a[i].get<std::string>() : "";
    if (t != "dense" && t != "sparse") fail(error_code::kInvalidValue, at, "expected \"dense\" or \"sparse\"");
    if ((t == "sparse") != (m.layers[i].ffn == LayerFfn::Moe))
      fail(error_code::kConstraint, at,
           "mlp_layer_types disagrees with first_k_dense_replace at layer " + std::to_string(i) +
               " (vLLM places experts by first_k_dense_replace); which one the checkpoint follows is not guessed");
  }
}

// MiMo's attention is Qwen2's: q/k/v biases and no output bias, whatever
// attention_bias says (vLLM builds Qwen2 layers; transformers' Qwen2Attention
// hard-codes the biases). The config writes attention_bias true for that.
void read_mimo(const HfReader& r, ModelArch& m) {
  if (!r.boolean_or("attention_bias", true))
    fail(error_code::kNotImplemented, r.child("attention_bias"),
         "attention_bias false: MiMo's layers are Qwen2's, which have q/k/v biases whatever this key says; attention "
         "without them is not guessed at");
  m.attention_bias = false;  // q/k/v biases: the Qwen2 reader's rule (no output bias)
  // The MTP layers (model.mtp_layers.N: two norms, an input projection from [hidden; embedding], one
  // Qwen2 decoder layer, a final norm) are DeepSeek's MTP module in shape, shared head included.
  m.mtp_layers = static_cast<int>(r.integer_or({"num_nextn_predict_layers"}, 0, 64, 0));
  r.neutral("use_mrope", "multimodal rotary position sections (rope is elementwise; text positions cost the same)");
}

// Bailing-MoE (vLLM bailing_moe.py): use_qkv_bias biases the fused QKV
// projection; use_bias biases every linear layer but the routed experts (FusedMoE
// has none), a split the engine's one MLP-bias flag cannot express.
void read_bailing_moe(const HfReader& r, ModelArch& m) {
  if (r.boolean_or("use_bias", false))
    fail(error_code::kNotImplemented, r.child("use_bias"),
         "use_bias true biases attention, dense and shared-expert MLPs but not the routed experts; that split is not priced");
  m.qkv_bias = r.boolean_or("use_qkv_bias", false);
  read_moe_common(r, m, {"num_experts"});
  m.moe.expert_intermediate_size = r.integer({"moe_intermediate_size"}, 1, kMaxModelDim);
  // One shared MLP of num_shared_experts x moe_intermediate_size, added without a gate.
  m.moe.num_shared_experts = static_cast<int>(r.integer_or({"num_shared_experts"}, 0, 1024, 0));
  m.moe.first_dense_layers = static_cast<int>(r.integer_or({"first_k_dense_replace"}, 0, m.num_layers - 1, 0));
  for (int i = 0; i < m.num_layers; ++i)
    m.layers[static_cast<size_t>(i)].ffn = i < m.moe.first_dense_layers ? LayerFfn::Dense : LayerFfn::Moe;
  r.neutral("norm_head", "the LM head's rows L2-normalised when loaded (the same weights and work)");
  if (r.boolean_or("norm_softmax", false))
    fail(error_code::kNotImplemented, r.child("norm_softmax"), "norm_softmax true is not a step the engine knows; not guessed at");
  for (const char* k : {"embedding_dropout", "output_dropout"}) r.neutral(k, "dropout (training only)");
}

void read_olmo(ModelArch& m) {
  m.qk_norm = true;
  m.qk_norm_per_layer = true;
}

}  // namespace

void read_borrowed_family_keys(const HfReader& r, const std::string& family, ModelArch& m) {
  if (family == "glm4_moe_lite") read_glm4_moe_lite(r, m);
  else if (family == "mimo") read_mimo(r, m);
  else if (family == "bailing_moe") read_bailing_moe(r, m);
  else if (family == "olmo2" || family == "olmo3") read_olmo(m);
}

}  // namespace sightline::hf
