#include "model/architecture.hpp"

#include "core/error.hpp"
#include "model/param_count.hpp"
#include "presets/preset_store.hpp"

namespace sightline {

namespace {

constexpr int64_t kMaxDim = 1 << 20;          // hidden / intermediate sizes
constexpr int64_t kMaxVocab = 4 << 20;
constexpr int64_t kMaxContext = 16 << 20;     // 16M tokens
constexpr int kMaxLayers = 4096;
constexpr int kMaxHeads = 4096;

const std::vector<std::string> kArchKeys = {
    "id", "name", "source", "num_layers", "hidden_size", "num_heads", "num_kv_heads", "head_dim",
    "intermediate_size", "vocab_size", "max_context", "gated_mlp", "activation", "norm",
    "position_embedding", "tied_embeddings", "attention_bias", "qkv_bias", "mlp_bias",
    "parallel_attn_mlp", "moe", "mla"};

MoeSpec read_moe(const json& v, const std::string& path) {
  ObjectReader r(v, path, {"num_experts", "top_k", "num_shared_experts", "expert_intermediate_size",
                           "first_dense_layers"});
  MoeSpec m;
  m.num_experts = static_cast<int>(r.integer("num_experts", 1, 65536));
  m.top_k = static_cast<int>(r.integer("top_k", 1, 65536));
  m.num_shared_experts = static_cast<int>(r.integer("num_shared_experts", 0, 1024, 0));
  m.expert_intermediate_size = r.integer("expert_intermediate_size", 1, kMaxDim);
  m.first_dense_layers = static_cast<int>(r.integer("first_dense_layers", 0, kMaxLayers, 0));
  return m;  // top_k <= num_experts is checked in check_model, for every model form
}

MlaSpec read_mla(const json& v, const std::string& path) {
  ObjectReader r(v, path, {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
  MlaSpec m;
  m.enabled = true;
  m.q_lora_rank = r.integer("q_lora_rank", 0, kMaxDim, 0);
  m.kv_lora_rank = r.integer("kv_lora_rank", 1, kMaxDim);
  m.qk_nope_head_dim = r.integer("qk_nope_head_dim", 1, 4096);
  m.qk_rope_head_dim = r.integer("qk_rope_head_dim", 0, 4096);
  m.v_head_dim = r.integer("v_head_dim", 1, 4096);
  return m;
}

}  // namespace

int64_t ModelArch::kv_elements_per_token_per_layer() const {
  // MLA caches the compressed latent plus the shared rope key, not per-head K/V.
  if (mla.enabled) return mla.kv_lora_rank + mla.qk_rope_head_dim;
  return 2LL * num_kv_heads * head_dim;
}

ModelArch read_model_architecture(const json& value, const std::string& path) {
  ObjectReader r(value, path, kArchKeys);
  ModelArch m;
  m.id = r.string("id", "custom");
  m.name = r.string("name", m.id);
  m.source = r.string("source", "user-supplied architecture");
  m.num_layers = static_cast<int>(r.integer("num_layers", 1, kMaxLayers));
  m.hidden_size = r.integer("hidden_size", 1, kMaxDim);
  m.num_heads = static_cast<int>(r.integer("num_heads", 1, kMaxHeads));
  m.num_kv_heads = static_cast<int>(r.integer("num_kv_heads", 1, kMaxHeads, m.num_heads));
  bool head_dim_given = r.has("head_dim");
  m.head_dim = r.integer("head_dim", 1, 4096, m.hidden_size / m.num_heads);
  m.intermediate_size = r.integer("intermediate_size", 1, kMaxDim);
  m.vocab_size = r.integer("vocab_size", 1, kMaxVocab);
  m.max_context = r.integer("max_context", 1, kMaxContext);
  m.gated_mlp = r.boolean("gated_mlp", true);
  m.activation = r.choice("activation", {"silu", "gelu", "relu"}, m.gated_mlp ? "silu" : "gelu");
  m.norm = r.choice("norm", {"rmsnorm", "layernorm"}, "rmsnorm");
  m.position_embedding = r.choice("position_embedding", {"rope", "learned", "alibi"}, "rope");
  m.tied_embeddings = r.boolean("tied_embeddings", false);
  m.attention_bias = r.boolean("attention_bias", false);
  m.qkv_bias = r.boolean("qkv_bias", false);
  m.mlp_bias = r.boolean("mlp_bias", false);
  m.parallel_attn_mlp = r.boolean("parallel_attn_mlp", false);
  if (const json* moe = r.nullable("moe")) m.moe = read_moe(*moe, r.child_path("moe"));
  if (const json* mla = r.nullable("mla")) m.mla = read_mla(*mla, r.child_path("mla"));
  if (!head_dim_given && m.hidden_size % m.num_heads != 0)
    fail(error_code::kConstraint, r.child_path("num_heads"),
         "hidden_size (" + std::to_string(m.hidden_size) + ") is not divisible by num_heads (" +
             std::to_string(m.num_heads) + "); give head_dim explicitly");
  check_model(m, path);
  return m;
}

// The checks every model form passes (a preset, an inline architecture, a
// pasted Hugging Face config.json): the readers only check each key's range.
void check_model(const ModelArch& m, const std::string& path) {
  if (m.head_dim < 1)
    fail(error_code::kConstraint, pointer_append(path, "head_dim"),
         "head_dim must be at least 1 (hidden_size " + std::to_string(m.hidden_size) + " / num_heads " +
             std::to_string(m.num_heads) + " rounds to 0); give head_dim explicitly");
  if (m.is_moe() && m.moe.top_k > m.moe.num_experts)
    fail(error_code::kConstraint, pointer_append(pointer_append(path, "moe"), "top_k"),
         "top_k (" + std::to_string(m.moe.top_k) + ") cannot exceed num_experts (" + std::to_string(m.moe.num_experts) +
             ")");
  if (m.num_heads % m.num_kv_heads != 0)
    fail(error_code::kConstraint, pointer_append(path, "num_kv_heads"),
         "num_heads (" + std::to_string(m.num_heads) + ") must be a multiple of num_kv_heads (" +
             std::to_string(m.num_kv_heads) + ")");
  if (m.is_moe() && m.moe.first_dense_layers >= m.num_layers)
    fail(error_code::kConstraint, pointer_append(pointer_append(path, "moe"), "first_dense_layers"),
         "first_dense_layers must be smaller than num_layers (" + std::to_string(m.num_layers) + ")");
  // Sizes whose products overflow are refused here, located at the model.
  try {
    (void)count_params(m);
  } catch (const SightlineError& e) {
    fail(e.code().c_str(), path, e.what());
  }
}

ModelArch read_model(const json& value, const std::string& path) {
  if (value.is_string()) {
    return read_model_architecture(require_preset("models", value.get<std::string>(), path), path);
  }
  require_object(value, path);
  if (value.contains("hf_config")) {
    ObjectReader r(value, path, {"hf_config"});
    return read_hf_config(r.required("hf_config"), r.child_path("hf_config"));
  }
  if (value.contains("preset")) {
    const json& preset_id = value.at("preset");
    if (!preset_id.is_string())
      fail(error_code::kType, pointer_append(path, "preset"), "expected a preset id string");
    json merged = require_preset("models", preset_id.get<std::string>(), pointer_append(path, "preset"));
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it.key() == "preset") continue;
      merged[it.key()] = it.value();  // overrides replace the preset's value
    }
    return read_model_architecture(merged, path);
  }
  return read_model_architecture(value, path);
}

}  // namespace sightline

namespace sightline {

json ModelArch::to_json() const {
  json j = {{"id", id}, {"name", name}, {"source", source}, {"num_layers", num_layers},
            {"hidden_size", hidden_size}, {"num_heads", num_heads}, {"num_kv_heads", num_kv_heads},
            {"head_dim", head_dim}, {"intermediate_size", intermediate_size}, {"vocab_size", vocab_size},
            {"max_context", max_context}, {"gated_mlp", gated_mlp}, {"activation", activation},
            {"norm", norm}, {"position_embedding", position_embedding}, {"tied_embeddings", tied_embeddings},
            {"attention_bias", attention_bias}, {"qkv_bias", qkv_bias}, {"mlp_bias", mlp_bias},
            {"parallel_attn_mlp", parallel_attn_mlp}};
  j["moe"] = is_moe() ? json{{"num_experts", moe.num_experts}, {"top_k", moe.top_k},
                             {"num_shared_experts", moe.num_shared_experts},
                             {"expert_intermediate_size", moe.expert_intermediate_size},
                             {"first_dense_layers", moe.first_dense_layers}}
                      : json(nullptr);
  j["mla"] = mla.enabled ? json{{"q_lora_rank", mla.q_lora_rank}, {"kv_lora_rank", mla.kv_lora_rank},
                                {"qk_nope_head_dim", mla.qk_nope_head_dim},
                                {"qk_rope_head_dim", mla.qk_rope_head_dim}, {"v_head_dim", mla.v_head_dim}}
                         : json(nullptr);
  return j;
}

}  // namespace sightline
