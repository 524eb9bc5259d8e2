#pragma once
// Transformer architecture description, read from a preset, an inline
// architecture, or a Hugging Face config.json.
#include <cstdint>
#include <string>

#include "core/json_reader.hpp"

namespace sightline {

struct MoeSpec {
  int num_experts = 0;  // 0: dense model
  int top_k = 0;
  int num_shared_experts = 0;
  int64_t expert_intermediate_size = 0;
  int first_dense_layers = 0;  // leading layers that use the dense MLP
};

struct MlaSpec {
  bool enabled = false;
  int64_t q_lora_rank = 0;  // 0: plain query projection
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

struct ModelArch {
  std::string id;
  std::string name;
  std::string source;
  int num_layers = 0;
  int64_t hidden_size = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t intermediate_size = 0;
  int64_t vocab_size = 0;
  int64_t max_context = 0;
  bool gated_mlp = true;
  std::string activation = "silu";
  std::string norm = "rmsnorm";
  std::string position_embedding = "rope";
  bool tied_embeddings = false;
  bool attention_bias = false;  // bias on q, k, v and output projections
  bool qkv_bias = false;        // bias on q, k, v only (Qwen2)
  bool mlp_bias = false;
  bool parallel_attn_mlp = false;
  MoeSpec moe;
  MlaSpec mla;

  bool is_moe() const { return moe.num_experts > 0; }
  int num_moe_layers() const { return is_moe() ? num_layers - moe.first_dense_layers : 0; }
  int num_dense_layers() const { return num_layers - num_moe_layers(); }
  // Per-head dimensions of queries/keys and of values (differ under MLA).
  int64_t qk_head_dim() const { return mla.enabled ? mla.qk_nope_head_dim + mla.qk_rope_head_dim : head_dim; }
  int64_t v_head_dim() const { return mla.enabled ? mla.v_head_dim : head_dim; }
  // Elements of K plus V stored per token per layer in the KV cache.
  int64_t kv_elements_per_token_per_layer() const;

  json to_json() const;
};

// Reads the "model" member of a scenario (preset id string, {"preset": id, ...overrides},
// {"hf_config": {...}} or a full inline architecture) and checks it.
ModelArch read_model(const json& value, const std::string& path);

// Reads a full architecture object (the preset file format).
ModelArch read_model_architecture(const json& value, const std::string& path);

// Builds an architecture from a Hugging Face config.json (Llama, Mistral, Mixtral,
// Qwen2, Falcon, GPT-2, DeepSeek-V3 key conventions).
ModelArch read_hf_config(const json& config, const std::string& path);

// Cross-field checks shared by every source of architecture.
void check_model(const ModelArch& m, const std::string& path);

}  // namespace sightline
