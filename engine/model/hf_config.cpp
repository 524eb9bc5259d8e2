// Hugging Face config.json import. These files carry many keys that do not
// affect performance (token ids, dropout, init ranges), so unknown keys are
// ignored here, unlike everywhere else; missing required keys are errors.
#include <algorithm>

#include "core/error.hpp"
#include "model/architecture.hpp"

namespace sightline {

namespace {

class HfReader {
 public:
  HfReader(const json& config, std::string path) : config_(config), path_(std::move(path)) {
    require_object(config_, path_);
  }

  bool has(const std::string& key) const { return config_.contains(key) && !config_.at(key).is_null(); }

  // First present key among `keys`; fails naming the first if none is present.
  int64_t integer(std::initializer_list<const char*> keys, int64_t min_value, int64_t max_value) const {
    for (const char* k : keys)
      if (has(k)) return read_integer(config_.at(k), pointer_append(path_, k), min_value, max_value);
    fail(error_code::kMissingKey, pointer_append(path_, *keys.begin()),
         std::string("config.json lacks '") + *keys.begin() + "'");
  }
  int64_t integer_or(std::initializer_list<const char*> keys, int64_t min_value, int64_t max_value,
                     int64_t fallback) const {
    for (const char* k : keys)
      if (has(k)) return read_integer(config_.at(k), pointer_append(path_, k), min_value, max_value);
    return fallback;
  }
  bool boolean_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!config_.at(key).is_boolean())
      fail(error_code::kType, pointer_append(path_, key), "expected true or false");
    return config_.at(key).get<bool>();
  }
  std::string string_or(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!config_.at(key).is_string()) fail(error_code::kType, pointer_append(path_, key), "expected a string");
    return config_.at(key).get<std::string>();
  }
  const std::string& path() const { return path_; }

 private:
  const json& config_;
  std::string path_;
};

std::string activation_from_hf(const std::string& act) {
  if (act.rfind("gelu", 0) == 0) return "gelu";
  if (act == "relu") return "relu";
  return "silu";
}

// model_type, or derived from the first "architectures" entry.
std::string hf_model_type(const json& config, const HfReader& r) {
  std::string type = r.string_or("model_type", "");
  if (!type.empty()) return type;
  if (config.contains("architectures") && config["architectures"].is_array() && !config["architectures"].empty() &&
      config["architectures"][0].is_string()) {
    std::string arch = config["architectures"][0].get<std::string>();
    std::transform(arch.begin(), arch.end(), arch.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const char* known : {"deepseek_v3", "deepseekv3", "mixtral", "mistral", "qwen2", "falcon", "gpt2", "llama"})
      if (arch.find(known) != std::string::npos) return std::string(known) == "deepseekv3" ? "deepseek_v3" : known;
  }
  fail(error_code::kMissingKey, pointer_append(r.path(), "model_type"),
       "config.json has neither 'model_type' nor a recognised 'architectures' entry");
}

}  // namespace

ModelArch read_hf_config(const json& config, const std::string& path) {
  HfReader r(config, path);
  const std::string type = hf_model_type(config, r);
  ModelArch m;
  m.id = "hf-" + type;
  m.name = r.string_or("_name_or_path", "Hugging Face " + type + " model");
  m.source = "Hugging Face config.json (" + type + ")";

  if (type == "gpt2") {
    m.hidden_size = r.integer({"n_embd", "hidden_size"}, 1, 1 << 20);
    m.num_layers = static_cast<int>(r.integer({"n_layer", "num_hidden_layers"}, 1, 4096));
    m.num_heads = static_cast<int>(r.integer({"n_head", "num_attention_heads"}, 1, 4096));
    m.num_kv_heads = m.num_heads;
    m.intermediate_size = r.integer_or({"n_inner"}, 1, 1 << 20, 4 * m.hidden_size);
    m.vocab_size = r.integer({"vocab_size"}, 1, 4 << 20);
    m.max_context = r.integer({"n_positions", "n_ctx"}, 1, 16 << 20);
    m.gated_mlp = false;
    m.activation = activation_from_hf(r.string_or("activation_function", "gelu_new"));
    m.norm = "layernorm";
    m.position_embedding = "learned";
    m.tied_embeddings = r.boolean_or("tie_word_embeddings", true);
    m.attention_bias = true;
    m.mlp_bias = true;
  } else if (type == "falcon" || type == "RefinedWeb" || type == "RefinedWebModel") {
    m.hidden_size = r.integer({"hidden_size", "n_embed"}, 1, 1 << 20);
    m.num_layers = static_cast<int>(r.integer({"num_hidden_layers", "n_layer"}, 1, 4096));
    m.num_heads = static_cast<int>(r.integer({"num_attention_heads", "n_head"}, 1, 4096));
    bool new_arch = r.boolean_or("new_decoder_architecture", false);
    bool multi_query = r.boolean_or("multi_query", true);
    if (new_arch) m.num_kv_heads = static_cast<int>(r.integer({"num_kv_heads", "n_head_kv"}, 1, 4096));
    else m.num_kv_heads = multi_query ? 1 : m.num_heads;
    m.intermediate_size = r.integer_or({"ffn_hidden_size"}, 1, 1 << 20, 4 * m.hidden_size);
    m.vocab_size = r.integer({"vocab_size"}, 1, 4 << 20);
    m.max_context = r.integer_or({"max_position_embeddings"}, 1, 16 << 20, 2048);
    m.gated_mlp = false;
    m.activation = "gelu";
    m.norm = "layernorm";
    m.position_embedding = r.boolean_or("alibi", false) ? "alibi" : "rope";
    m.tied_embeddings = r.boolean_or("tie_word_embeddings", true);
    m.attention_bias = r.boolean_or("bias", false);
    m.mlp_bias = m.attention_bias;
    m.parallel_attn_mlp = new_arch || r.boolean_or("parallel_attn", true);
  } else if (type == "llama" || type == "mistral" || type == "mixtral" || type == "qwen2" || type == "deepseek_v3") {
    m.hidden_size = r.integer({"hidden_size"}, 1, 1 << 20);
    m.num_layers = static_cast<int>(r.integer({"num_hidden_layers"}, 1, 4096));
    m.num_heads = static_cast<int>(r.integer({"num_attention_heads"}, 1, 4096));
    m.num_kv_heads = static_cast<int>(r.integer_or({"num_key_value_heads"}, 1, 4096, m.num_heads));
    m.head_dim = r.integer_or({"head_dim"}, 1, 4096, m.hidden_size / m.num_heads);
    m.intermediate_size = r.integer({"intermediate_size"}, 1, 1 << 20);
    m.vocab_size = r.integer({"vocab_size"}, 1, 4 << 20);
    m.max_context = r.integer({"max_position_embeddings"}, 1, 16 << 20);
    m.gated_mlp = true;
    m.activation = activation_from_hf(r.string_or("hidden_act", "silu"));
    m.norm = "rmsnorm";
    m.position_embedding = "rope";
    m.tied_embeddings = r.boolean_or("tie_word_embeddings", false);
    m.attention_bias = r.boolean_or("attention_bias", false);
    m.mlp_bias = r.boolean_or("mlp_bias", false);
    m.qkv_bias = type == "qwen2";  // Qwen2 always has q/k/v biases
    if (type == "mixtral") {
      m.moe.num_experts = static_cast<int>(r.integer({"num_local_experts"}, 1, 65536));
      m.moe.top_k = static_cast<int>(r.integer({"num_experts_per_tok"}, 1, 65536));
      m.moe.expert_intermediate_size = m.intermediate_size;
    }
    if (type == "deepseek_v3") {
      m.moe.num_experts = static_cast<int>(r.integer({"n_routed_experts"}, 1, 65536));
      m.moe.top_k = static_cast<int>(r.integer({"num_experts_per_tok"}, 1, 65536));
      m.moe.num_shared_experts = static_cast<int>(r.integer_or({"n_shared_experts"}, 0, 1024, 0));
      m.moe.expert_intermediate_size = r.integer({"moe_intermediate_size"}, 1, 1 << 20);
      m.moe.first_dense_layers = static_cast<int>(r.integer_or({"first_k_dense_replace"}, 0, 4096, 0));
      m.mla.enabled = true;
      m.mla.q_lora_rank = r.integer_or({"q_lora_rank"}, 0, 1 << 20, 0);
      m.mla.kv_lora_rank = r.integer({"kv_lora_rank"}, 1, 1 << 20);
      m.mla.qk_nope_head_dim = r.integer({"qk_nope_head_dim"}, 1, 4096);
      m.mla.qk_rope_head_dim = r.integer({"qk_rope_head_dim"}, 0, 4096);
      m.mla.v_head_dim = r.integer({"v_head_dim"}, 1, 4096);
      m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
    }
  } else {
    fail(error_code::kInvalidValue, pointer_append(path, "model_type"),
         "unsupported model_type '" + type + "'; supported: llama, mistral, mixtral, qwen2, falcon, gpt2, deepseek_v3");
  }
  if (m.head_dim == 0) m.head_dim = m.hidden_size / m.num_heads;
  // Located at config.json's own keys; check_model then applies every other model form's checks.
  if (m.is_moe() && m.moe.top_k > m.moe.num_experts)
    fail(error_code::kConstraint, pointer_append(path, "num_experts_per_tok"),
         "num_experts_per_tok (" + std::to_string(m.moe.top_k) + ") cannot exceed the number of experts (" +
             std::to_string(m.moe.num_experts) + ")");
  if (m.head_dim < 1)
    fail(error_code::kConstraint, pointer_append(path, "num_attention_heads"),
         "hidden_size (" + std::to_string(m.hidden_size) + ") / num_attention_heads (" + std::to_string(m.num_heads) +
             ") gives a head_dim of 0; give head_dim");
  check_model(m, path);
  return m;
}

}  // namespace sightline
