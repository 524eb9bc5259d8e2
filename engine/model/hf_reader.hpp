#pragma once
// The Hugging Face config.json reader shared by hf_config.cpp (the import:
// model type, keys common to every family, quantization) and hf_families.cpp
// (one reader per model family). Internal to model/.
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "model/architecture.hpp"

namespace sightline::hf {

// Reads keys of one config object and remembers which ones it looked at, so
// the rest can be reported as ignored.
class HfReader {
 public:
  HfReader(const json& config, std::string path) : config_(config), path_(std::move(path)) {
    require_object(config_, path_);
  }

  bool has(const std::string& key) const {
    used_.insert(key);
    return config_.contains(key) && !config_.at(key).is_null();
  }
  const json& at(const std::string& key) const {
    used_.insert(key);
    return config_.at(key);
  }
  std::string child(const std::string& key) const { return pointer_append(path_, key); }

  // First present key among `keys`; fails naming the first if none is present.
  int64_t integer(std::initializer_list<const char*> keys, int64_t min_value, int64_t max_value) const {
    for (const char* k : keys)
      if (has(k)) return read_integer(config_.at(k), child(k), min_value, max_value);
    fail(error_code::kMissingKey, child(*keys.begin()),
         std::string("config.json lacks '") + *keys.begin() + "', which this model family needs; add it from the model's published config");
  }
  int64_t integer_or(std::initializer_list<const char*> keys, int64_t min_value, int64_t max_value,
                     int64_t fallback) const {
    for (const char* k : keys)
      if (has(k)) return read_integer(config_.at(k), child(k), min_value, max_value);
    return fallback;
  }
  double number_or(const char* key, double min_value, double max_value, double fallback) const {
    if (!has(key)) return fallback;
    return read_number(config_.at(key), child(key), min_value, max_value);
  }
  bool boolean_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!config_.at(key).is_boolean()) fail(error_code::kType, child(key), "expected true or false");
    return config_.at(key).get<bool>();
  }
  std::string string_or(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!config_.at(key).is_string()) fail(error_code::kType, child(key), "expected a string");
    return config_.at(key).get<std::string>();
  }
  const std::string& path() const { return path_; }
  const json& config() const { return config_; }

  // Keys present but never read.
  std::vector<std::string> unread(const std::string& prefix) const {
    std::vector<std::string> out;
    for (auto it = config_.begin(); it != config_.end(); ++it)
      if (!used_.count(it.key())) out.push_back(prefix + it.key());
    return out;
  }
  void mark(const std::string& key) const { used_.insert(key); }
  // A key this family's reader understands as not changing performance, with why
  // (reported among the ignored keys; hf_keys.cpp).
  void neutral(const std::string& key, const char* why) const { neutral_[key] = why; }
  const char* neutral_reason(const std::string& key) const {
    const auto it = neutral_.find(key);
    return it == neutral_.end() ? nullptr : it->second;
  }

 private:
  const json& config_;
  std::string path_;
  mutable std::set<std::string> used_;
  mutable std::map<std::string, const char*> neutral_;
};

std::string activation_from_hf(const std::string& act);
std::string lower(std::string s);
// quantization_config (inside config.json) as the checkpoint's weight format,
// unquantized modules and KV dtype (hf_quant.cpp).
void read_quantization_config(const json& q, const std::string& path, ModelArch& m);
// Layer types from a "layer_types" array; false when absent.
bool read_layer_types(const HfReader& r, ModelArch& m, int64_t window, int64_t chunk);
// Common transformer keys (Llama naming).
void read_llama_like(const HfReader& r, ModelArch& m);
// A defaulted key: the value transformers' config class uses when the file omits it (with a warning).
int64_t defaulted(const HfReader& r, ModelArch& m, const char* key, int64_t min_value, int64_t max_value,
                  int64_t fallback);
void read_moe_common(const HfReader& r, ModelArch& m, std::initializer_list<const char*> experts_keys);

// Every unread key of `r` accounted for (hf_keys.cpp): neutral ones into
// m.import.ignored_keys/ignored_why; not-understood structural ones (any, for
// an unknown family) refused with a located error. `prefix` names the object
// in the report ("text_config.").
void account_for_keys(const HfReader& r, const std::string& prefix, bool known_family, ModelArch& m);
// Refuses a config that uses a layer kind the engine does not price (DeepSeek
// sparse attention, latent MoE, per-block configs...), named by its keys or by
// the model_type that defines it, located at the first such key.
void refuse_unpriced_features(const HfReader& r, const std::string& type);
// Whether a key's name suggests it shapes the model (experts, ranks, windows...).
bool name_suggests_structure(const std::string& key);
// Why a key is on the one list of keys that change no performance; null if not.
const char* neutral_key_reason(const std::string& key);

// The family's keys (model_type `type`) into `m` (hf_families.cpp).
void read_family(const HfReader& r, const std::string& type, ModelArch& m);
// Hunyuan (hunyuan, hunyuan_v1_moe) and MiniMax-M2 (hf_moe_families.cpp), after read_llama_like.
void read_hunyuan(const HfReader& r, const std::string& type, ModelArch& m);
void read_minimax_m2(const HfReader& r, ModelArch& m);
// Families whose attention layer kinds differ in head shape (hf_attention_shapes.cpp),
// after read_llama_like: Gemma-4 (gemma4, gemma4_text) and MiMo-V2 (mimo_v2_flash).
void read_gemma4(const HfReader& r, ModelArch& m);
// Whether a checkpoint module named "mlp" in an MoE layer of this family is its dense
// MLP alone, the routed experts living in a sibling module (Gemma-4: "mlp" beside
// "router" and "moe"), rather than the block that holds the experts (Qwen-MoE and
// DeepSeek's "mlp.experts"). Read by the unquantized-module lists (hf_quant.cpp).
bool moe_layer_mlp_is_dense(const std::string& family);
void read_mimo_v2(const HfReader& r, ModelArch& m);
// Nemotron-NAS (nemotron-nas): per-block attention and MLP width from block_configs
// (hf_nemotron_nas.cpp); reads the Llama keys itself.
void read_nemotron_nas(const HfReader& r, ModelArch& m);
// MoE layer placement keys (first_k_dense_replace, moe_layer_freq as a number or
// a per-layer list, decoder_sparse_step, mlp_only_layers) into m.layers (hf_families.cpp).
void place_moe_layers(const HfReader& r, ModelArch& m);
// DeepSeek sparse attention from its keys (index_topk, index_n_heads,
// index_head_dim), whatever the family; a DSA model_type without them is
// refused (hf_sparse_attention.cpp). After the family's reader.
void read_sparse_attention(const HfReader& r, const std::string& type, ModelArch& m);
// The keys of families read by another family's reader (glm4_moe_lite as
// deepseek_v3, mimo as qwen2, bailing_moe as a Llama-style family) that the
// borrowed reader does not know (hf_borrowed_families.cpp). After read_family_keys.
void read_borrowed_family_keys(const HfReader& r, const std::string& family, ModelArch& m);
// An unknown model_type: the standard decoder keys and windows only, so that
// account_for_keys refuses whatever else the config says.
void read_by_structure(const HfReader& r, ModelArch& m);

}  // namespace sightline::hf
