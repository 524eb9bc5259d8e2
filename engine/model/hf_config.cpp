// Hugging Face config.json import, by family and by keys. These files carry
// many keys that do not affect performance (token ids, dropout, init ranges):
// they are accepted and listed in the import report; missing required keys
// are located errors. Multimodal configs are read through their text_config.
#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "model/architecture.hpp"

namespace sightline {

namespace {

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

 private:
  const json& config_;
  std::string path_;
  mutable std::set<std::string> used_;
};

std::string activation_from_hf(const std::string& act) {
  if (act.rfind("gelu", 0) == 0) return "gelu";
  if (act == "relu" || act == "relu2") return "relu";
  return "silu";
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

const std::vector<std::string>& known_types() {
  static const std::vector<std::string> types = {
      "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen3_next", "deepseek_v2",
      "deepseek_v3", "kimi_k2", "glm4", "glm4_moe", "gpt_oss", "gemma2", "gemma3", "gemma3_text", "llama4",
      "llama4_text", "mistral3", "phi3", "nemotron_h", "jamba", "falcon", "gpt2"};
  return types;
}

bool is_known(const std::string& t) {
  const auto& k = known_types();
  return std::find(k.begin(), k.end(), t) != k.end() || t == "RefinedWeb" || t == "RefinedWebModel";
}

// model_type from the first "architectures" entry ("Qwen3MoeForCausalLM" -> "qwen3_moe").
std::string type_from_architectures(const HfReader& r) {
  if (!r.has("architectures") || !r.at("architectures").is_array() || r.at("architectures").empty() ||
      !r.at("architectures")[0].is_string())
    return "";
  const std::string arch = lower(r.at("architectures")[0].get<std::string>());
  // Longest names first so "qwen3moe" wins over "qwen3".
  const std::vector<std::pair<const char*, const char*>> table = {
      {"qwen3next", "qwen3_next"}, {"qwen3moe", "qwen3_moe"}, {"qwen2moe", "qwen2_moe"}, {"qwen3", "qwen3"},
      {"qwen2", "qwen2"},          {"deepseekv3", "deepseek_v3"}, {"deepseekv2", "deepseek_v2"},
      {"kimik2", "kimi_k2"},       {"glm4moe", "glm4_moe"},   {"glm4", "glm4"},   {"gptoss", "gpt_oss"},
      {"gemma3", "gemma3"},        {"gemma2", "gemma2"},      {"llama4", "llama4"}, {"mistral3", "mistral3"},
      {"mixtral", "mixtral"},      {"mistral", "mistral"},    {"phi3", "phi3"},   {"nemotronh", "nemotron_h"},
      {"jamba", "jamba"},          {"falcon", "falcon"},      {"gpt2", "gpt2"},   {"llama", "llama"}};
  for (const auto& [needle, type] : table)
    if (arch.find(needle) != std::string::npos) return type;
  return "";
}

// Layer types from a "layer_types" array ("full_attention", "sliding_attention",
// "chunked_attention", "linear_attention", "mamba"); false when absent.
bool read_layer_types(const HfReader& r, ModelArch& m, int64_t window, int64_t chunk) {
  if (!r.has("layer_types")) return false;
  const json& lt = r.at("layer_types");
  const std::string p = r.child("layer_types");
  if (!lt.is_array()) fail(error_code::kType, p, "expected an array of layer type names");
  if (static_cast<int>(lt.size()) != m.num_layers)
    fail(error_code::kConstraint, p,
         "layer_types lists " + std::to_string(lt.size()) + " layers but num_hidden_layers is " +
             std::to_string(m.num_layers));
  for (size_t i = 0; i < lt.size(); ++i) {
    const std::string ip = pointer_append(p, i);
    if (!lt[i].is_string()) fail(error_code::kType, ip, "expected a layer type name");
    const std::string t = lt[i].get<std::string>();
    ModelLayer& k = m.layers[i];
    if (t == "full_attention" || t == "attention") k.mixer = LayerMixer::Attention;
    else if (t == "sliding_attention") {
      if (window <= 0) fail(error_code::kMissingKey, r.child("sliding_window"), "sliding_attention layers need 'sliding_window'");
      k.window = window;
    } else if (t == "chunked_attention") {
      if (chunk <= 0) fail(error_code::kMissingKey, r.child("attention_chunk_size"), "chunked_attention layers need 'attention_chunk_size'");
      k.chunk = chunk;
    } else if (t == "linear_attention") k.mixer = LayerMixer::LinearAttention;
    else if (t == "mamba") k.mixer = LayerMixer::Mamba;
    else
      fail(error_code::kInvalidValue, ip,
           "unknown layer type '" + printable(t) +
               "'; known: full_attention, sliding_attention, chunked_attention, linear_attention, mamba");
  }
  return true;
}

// Common transformer keys (Llama naming).
void read_llama_like(const HfReader& r, ModelArch& m) {
  m.hidden_size = r.integer({"hidden_size"}, 1, kMaxModelDim);
  m.num_layers = static_cast<int>(r.integer({"num_hidden_layers"}, 1, 4096));
  m.num_heads = static_cast<int>(r.integer({"num_attention_heads"}, 1, 4096));
  m.num_kv_heads = static_cast<int>(r.integer_or({"num_key_value_heads"}, 1, 4096, m.num_heads));
  if (!r.has("head_dim") && m.hidden_size % m.num_heads != 0)
    fail(error_code::kConstraint, r.child("num_attention_heads"),
         "hidden_size is not divisible by num_attention_heads and config.json has no 'head_dim'; add head_dim");
  m.head_dim = r.integer_or({"head_dim"}, 1, 4096, m.hidden_size / m.num_heads);
  m.intermediate_size = r.integer({"intermediate_size"}, 1, kMaxModelDim);
  m.vocab_size = r.integer({"vocab_size"}, 1, 4 << 20);
  m.max_context = r.integer({"max_position_embeddings"}, 1, kMaxModelContext);
  m.gated_mlp = true;
  m.activation = activation_from_hf(r.string_or("hidden_act", r.string_or("hidden_activation", "silu")));
  m.norm = "rmsnorm";
  m.position_embedding = "rope";
  m.tied_embeddings = r.boolean_or("tie_word_embeddings", false);
  m.attention_bias = r.boolean_or("attention_bias", false);
  m.mlp_bias = r.boolean_or("mlp_bias", false);
  m.layers.assign(static_cast<size_t>(m.num_layers), ModelLayer{});
}

// A defaulted key: the value transformers' config class uses when the file omits it.
int64_t defaulted(const HfReader& r, ModelArch& m, const char* key, int64_t min_value, int64_t max_value,
                  int64_t fallback) {
  if (r.has(key)) return read_integer(r.at(key), r.child(key), min_value, max_value);
  m.import.warnings.push_back(std::string("'") + key + "' absent: transformers' " + m.import.family +
                              " default " + std::to_string(fallback) + " used");
  return fallback;
}

void read_moe_common(const HfReader& r, ModelArch& m, std::initializer_list<const char*> experts_keys) {
  m.moe.num_experts = static_cast<int>(r.integer(experts_keys, 1, 65536));
  m.moe.top_k = static_cast<int>(r.integer({"num_experts_per_tok", "experts_per_token", "moe_topk"}, 1, 65536));
  // Located at config.json's own key (check_model would name /moe/top_k, which the pasted file lacks).
  if (m.moe.top_k > m.moe.num_experts) {
    const char* key = r.has("num_experts_per_tok") ? "num_experts_per_tok" : r.has("experts_per_token") ? "experts_per_token" : "moe_topk";
    fail(error_code::kConstraint, r.child(key),
         std::string(key) + " (" + std::to_string(m.moe.top_k) + ") cannot exceed the number of experts (" +
             std::to_string(m.moe.num_experts) + ")");
  }
}

// MoE layer placement: first_k_dense_replace / moe_layer_freq (DeepSeek, GLM),
// decoder_sparse_step / mlp_only_layers (Qwen-MoE).
void place_moe_layers(const HfReader& r, ModelArch& m) {
  m.moe.first_dense_layers = static_cast<int>(r.integer_or({"first_k_dense_replace"}, 0, 4096, 0));
  m.moe.layer_step = static_cast<int>(r.integer_or({"moe_layer_freq", "decoder_sparse_step"}, 1, 4096, 1));
  std::set<int64_t> mlp_only;
  if (r.has("mlp_only_layers")) {
    const json& a = r.at("mlp_only_layers");
    if (!a.is_array()) fail(error_code::kType, r.child("mlp_only_layers"), "expected an array of layer indices");
    for (size_t i = 0; i < a.size(); ++i)
      mlp_only.insert(read_integer(a[i], pointer_append(r.child("mlp_only_layers"), i), 0, m.num_layers - 1));
  }
  for (int i = 0; i < m.num_layers; ++i) {
    const bool moe = i >= m.moe.first_dense_layers && (i + 1) % m.moe.layer_step == 0 && !mlp_only.count(i);
    m.layers[static_cast<size_t>(i)].ffn = moe ? LayerFfn::Moe : LayerFfn::Dense;
  }
}

void read_mla(const HfReader& r, ModelArch& m) {
  m.mla.enabled = true;
  m.mla.q_lora_rank = r.integer_or({"q_lora_rank"}, 0, kMaxModelDim, 0);
  m.mla.kv_lora_rank = r.integer({"kv_lora_rank"}, 1, kMaxModelDim);
  m.mla.qk_nope_head_dim = r.integer({"qk_nope_head_dim"}, 1, 4096);
  m.mla.qk_rope_head_dim = r.integer({"qk_rope_head_dim"}, 0, 4096);
  m.mla.v_head_dim = r.integer({"v_head_dim"}, 1, 4096);
  m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
}

// Sliding window applied to every layer (Mistral, Phi-3, Mixtral) unless the
// family switches it off (Qwen's use_sliding_window).
void uniform_window(const HfReader& r, ModelArch& m) {
  if (!r.has("sliding_window")) return;
  if (r.has("use_sliding_window") && !r.boolean_or("use_sliding_window", false)) return;
  const int64_t w = read_integer(r.at("sliding_window"), r.child("sliding_window"), 1, kMaxModelContext);
  if (w >= m.max_context) return;  // a window as long as the context caps nothing
  for (ModelLayer& k : m.layers) k.window = w;
}

void read_family(const HfReader& r, const std::string& type, ModelArch& m) {
  if (type == "gpt2") {
    m.hidden_size = r.integer({"n_embd", "hidden_size"}, 1, kMaxModelDim);
    m.num_layers = static_cast<int>(r.integer({"n_layer", "num_hidden_layers"}, 1, 4096));
    m.num_heads = static_cast<int>(r.integer({"n_head", "num_attention_heads"}, 1, 4096));
    m.num_kv_heads = m.num_heads;
    m.intermediate_size = r.integer_or({"n_inner"}, 1, kMaxModelDim, 4 * m.hidden_size);
    m.vocab_size = r.integer({"vocab_size"}, 1, 4 << 20);
    m.max_context = r.integer({"n_positions", "n_ctx"}, 1, kMaxModelContext);
    r.mark("n_ctx");
    m.gated_mlp = false;
    m.activation = activation_from_hf(r.string_or("activation_function", "gelu_new"));
    m.norm = "layernorm";
    m.position_embedding = "learned";
    m.tied_embeddings = r.boolean_or("tie_word_embeddings", true);
    m.attention_bias = true;
    m.mlp_bias = true;
    m.layers.assign(static_cast<size_t>(m.num_layers), ModelLayer{});
    for (ModelLayer& k : m.layers) k.rope = false;
    return;
  }
  if (type == "falcon" || type == "RefinedWeb" || type == "RefinedWebModel") {
    m.hidden_size = r.integer({"hidden_size", "n_embed"}, 1, kMaxModelDim);
    m.num_layers = static_cast<int>(r.integer({"num_hidden_layers", "n_layer"}, 1, 4096));
    m.num_heads = static_cast<int>(r.integer({"num_attention_heads", "n_head"}, 1, 4096));
    const bool new_arch = r.boolean_or("new_decoder_architecture", false);
    const bool multi_query = r.boolean_or("multi_query", true);
    if (new_arch) m.num_kv_heads = static_cast<int>(r.integer({"num_kv_heads", "n_head_kv"}, 1, 4096));
    else m.num_kv_heads = multi_query ? 1 : m.num_heads;
    m.intermediate_size = r.integer_or({"ffn_hidden_size"}, 1, kMaxModelDim, 4 * m.hidden_size);
    m.vocab_size = r.integer({"vocab_size"}, 1, 4 << 20);
    m.max_context = r.integer_or({"max_position_embeddings"}, 1, kMaxModelContext, 2048);
    m.gated_mlp = false;
    m.activation = "gelu";
    m.norm = "layernorm";
    m.position_embedding = r.boolean_or("alibi", false) ? "alibi" : "rope";
    m.tied_embeddings = r.boolean_or("tie_word_embeddings", true);
    m.attention_bias = r.boolean_or("bias", false);
    m.mlp_bias = m.attention_bias;
    m.parallel_attn_mlp = new_arch || r.boolean_or("parallel_attn", true);
    m.layers.assign(static_cast<size_t>(m.num_layers), ModelLayer{});
    return;
  }
  if (type == "nemotron_h") {
    // Hybrid: one character per block; M Mamba-2, * attention, - MLP, E MoE.
    m.hidden_size = r.integer({"hidden_size"}, 1, kMaxModelDim);
    m.num_layers = static_cast<int>(r.integer({"num_hidden_layers"}, 1, 4096));
    m.num_heads = static_cast<int>(r.integer({"num_attention_heads"}, 1, 4096));
    m.num_kv_heads = static_cast<int>(r.integer_or({"num_key_value_heads"}, 1, 4096, m.num_heads));
    m.head_dim = r.integer_or({"attention_head_dim", "head_dim"}, 1, 4096, m.hidden_size / m.num_heads);
    m.intermediate_size = r.integer({"intermediate_size"}, 1, kMaxModelDim);
    m.vocab_size = r.integer({"vocab_size"}, 1, 4 << 20);
    m.max_context = r.integer({"max_position_embeddings"}, 1, kMaxModelContext);
    m.gated_mlp = false;  // squared-ReLU MLP: up and down only
    m.activation = activation_from_hf(r.string_or("mlp_hidden_act", "relu2"));
    m.tied_embeddings = r.boolean_or("tie_word_embeddings", false);
    m.attention_bias = r.boolean_or("attention_bias", false);
    m.mlp_bias = r.boolean_or("mlp_bias", false);
    m.norms_per_layer = 1;  // one pre-norm per block
    m.ssm.version = 2;
    m.ssm.num_heads = static_cast<int>(r.integer({"mamba_num_heads"}, 1, 65536));
    m.ssm.head_dim = r.integer({"mamba_head_dim"}, 1, 4096);
    m.ssm.inner_size = static_cast<int64_t>(m.ssm.num_heads) * m.ssm.head_dim;
    m.ssm.state_size = r.integer({"ssm_state_size"}, 1, 65536);
    m.ssm.n_groups = static_cast<int>(r.integer_or({"n_groups"}, 1, 4096, 1));
    m.ssm.conv_kernel = static_cast<int>(r.integer_or({"conv_kernel"}, 1, 64, 4));
    r.mark("expand");
    const std::string pattern = r.string_or("hybrid_override_pattern", "");
    if (pattern.empty())
      fail(error_code::kMissingKey, r.child("hybrid_override_pattern"),
           "nemotron_h needs 'hybrid_override_pattern' (one character per layer: M Mamba-2, * attention, - MLP, E MoE)");
    if (static_cast<int>(pattern.size()) != m.num_layers)
      fail(error_code::kConstraint, r.child("hybrid_override_pattern"),
           "hybrid_override_pattern has " + std::to_string(pattern.size()) + " characters but num_hidden_layers is " +
               std::to_string(m.num_layers));
    m.layers.assign(static_cast<size_t>(m.num_layers), ModelLayer{});
    for (size_t i = 0; i < pattern.size(); ++i) {
      ModelLayer& k = m.layers[i];
      k.rope = false;  // Nemotron-H attention uses no positional embedding
      switch (pattern[i]) {
        case 'M': k.mixer = LayerMixer::Mamba, k.ffn = LayerFfn::None; break;
        case '*': k.mixer = LayerMixer::Attention, k.ffn = LayerFfn::None; break;
        case '-': k.mixer = LayerMixer::None, k.ffn = LayerFfn::Dense; break;
        case 'E': k.mixer = LayerMixer::None, k.ffn = LayerFfn::Moe; break;
        default:
          fail(error_code::kInvalidValue, r.child("hybrid_override_pattern"),
               std::string("unknown block character '") + printable(std::string(1, pattern[i])) + "' at " +
                   std::to_string(i) + "; known: M (Mamba-2), * (attention), - (MLP), E (MoE)");
      }
    }
    if (pattern.find('E') != std::string::npos) {
      read_moe_common(r, m, {"n_routed_experts", "num_experts"});
      m.moe.expert_intermediate_size = r.integer({"moe_intermediate_size"}, 1, kMaxModelDim);
      m.moe.shared_intermediate_size = r.integer_or({"moe_shared_expert_intermediate_size"}, 0, kMaxModelDim, 0);
      m.moe.num_shared_experts = m.moe.shared_intermediate_size > 0 ? 1 : 0;
    }
    m.position_embedding = "rope";  // unused: every attention layer has rope = false
    return;
  }
  if (type == "jamba") {
    read_llama_like(r, m);
    const int attn_period = static_cast<int>(r.integer_or({"attn_layer_period"}, 1, 4096, 8));
    const int attn_offset = static_cast<int>(r.integer_or({"attn_layer_offset"}, 0, 4096, 4));
    const int exp_period = static_cast<int>(r.integer_or({"expert_layer_period"}, 1, 4096, 2));
    const int exp_offset = static_cast<int>(r.integer_or({"expert_layer_offset"}, 0, 4096, 1));
    read_moe_common(r, m, {"num_experts"});
    m.moe.expert_intermediate_size = m.intermediate_size;
    m.ssm.version = 1;
    m.ssm.state_size = r.integer_or({"mamba_d_state"}, 1, 65536, 16);
    m.ssm.conv_kernel = static_cast<int>(r.integer_or({"mamba_d_conv"}, 1, 64, 4));
    m.ssm.inner_size = r.integer_or({"mamba_expand"}, 1, 64, 2) * m.hidden_size;
    if (r.has("mamba_dt_rank") && r.at("mamba_dt_rank").is_string()) m.ssm.dt_rank = (m.hidden_size + 15) / 16;  // "auto"
    else m.ssm.dt_rank = r.integer_or({"mamba_dt_rank"}, 1, kMaxModelDim, (m.hidden_size + 15) / 16);
    for (int i = 0; i < m.num_layers; ++i) {
      ModelLayer& k = m.layers[static_cast<size_t>(i)];
      k.mixer = i % attn_period == attn_offset ? LayerMixer::Attention : LayerMixer::Mamba;
      k.rope = false;  // Jamba's attention has no positional embedding
      k.ffn = i % exp_period == exp_offset ? LayerFfn::Moe : LayerFfn::Dense;
    }
    return;
  }

  // Llama-style families.
  const bool gemma = type == "gemma2" || type == "gemma3" || type == "gemma3_text";
  if (gemma) {
    // Gemma-3's text_config often omits keys that transformers defaults.
    if (!r.has("vocab_size")) m.vocab_size = defaulted(r, m, "vocab_size", 1, 4 << 20, type == "gemma2" ? 256000 : 262208);
    if (!r.has("max_position_embeddings"))
      m.max_context = defaulted(r, m, "max_position_embeddings", 1, kMaxModelContext, type == "gemma2" ? 8192 : 131072);
  }
  {
    // read_llama_like needs vocab and context; give Gemma's defaults through a patched copy.
    json patched = r.config();
    if (gemma) {
      if (!patched.contains("vocab_size")) patched["vocab_size"] = m.vocab_size;
      if (!patched.contains("max_position_embeddings")) patched["max_position_embeddings"] = m.max_context;
      if (!patched.contains("hidden_activation") && !patched.contains("hidden_act"))
        patched["hidden_activation"] = "gelu_pytorch_tanh";
    }
    HfReader pr(patched, r.path());
    read_llama_like(pr, m);
    // What the patched reader used counts as used in the original.
    const std::vector<std::string> unread = pr.unread("");
    for (auto it = patched.begin(); it != patched.end(); ++it)
      if (std::find(unread.begin(), unread.end(), it.key()) == unread.end()) r.mark(it.key());
  }
  if (type == "qwen2" || type == "qwen2_moe") m.qkv_bias = true;  // Qwen2 always has q/k/v biases
  if (type == "qwen3" || type == "qwen3_moe" || type == "qwen3_next" || type == "gemma3" || type == "gemma3_text")
    m.qk_norm = true;
  if (type == "glm4_moe" && r.boolean_or("use_qk_norm", false)) m.qk_norm = true;
  if (type == "glm4") m.norms_per_layer = 4;  // post-attention and post-MLP norms too
  if (gemma) {
    m.norms_per_layer = 4;
    m.tied_embeddings = r.boolean_or("tie_word_embeddings", true);
    const int64_t w = r.integer_or({"sliding_window"}, 1, kMaxModelContext, type == "gemma2" ? 4096 : 4096);
    if (!read_layer_types(r, m, w, 0)) {
      // Gemma-2 alternates local and global; Gemma-3 has 5 local per global (sliding_window_pattern 6).
      const int pattern = static_cast<int>(r.integer_or({"sliding_window_pattern"}, 1, 4096, type == "gemma2" ? 2 : 6));
      if (type != "gemma2" && !r.has("sliding_window_pattern"))
        m.import.warnings.push_back("'sliding_window_pattern' absent: transformers' default 6 used (5 sliding layers per global one)");
      for (int i = 0; i < m.num_layers; ++i)
        if ((i + 1) % pattern != 0) m.layers[static_cast<size_t>(i)].window = w;
    }
    return;
  }
  if (type == "mistral" || type == "mixtral" || type == "phi3" || type == "qwen2" || type == "qwen2_moe" ||
      type == "qwen3" || type == "qwen3_moe" || type == "llama" || type == "glm4") {
    if (!read_layer_types(r, m, r.integer_or({"sliding_window"}, 1, kMaxModelContext, 0), 0)) uniform_window(r, m);
    r.mark("max_window_layers");
  }
  if (type == "mixtral") {
    read_moe_common(r, m, {"num_local_experts"});
    m.moe.expert_intermediate_size = m.intermediate_size;
    for (ModelLayer& k : m.layers) k.ffn = LayerFfn::Moe;
  } else if (type == "qwen2_moe" || type == "qwen3_moe" || type == "qwen3_next") {
    read_moe_common(r, m, {"num_experts"});
    m.moe.expert_intermediate_size = r.integer({"moe_intermediate_size"}, 1, kMaxModelDim);
    m.moe.shared_intermediate_size = r.integer_or({"shared_expert_intermediate_size"}, 0, kMaxModelDim, 0);
    m.moe.num_shared_experts = m.moe.shared_intermediate_size > 0 ? 1 : 0;
    place_moe_layers(r, m);
  } else if (type == "deepseek_v2" || type == "deepseek_v3" || type == "kimi_k2") {
    read_moe_common(r, m, {"n_routed_experts"});
    m.moe.num_shared_experts = static_cast<int>(r.integer_or({"n_shared_experts"}, 0, 1024, 0));
    m.moe.expert_intermediate_size = r.integer({"moe_intermediate_size"}, 1, kMaxModelDim);
    place_moe_layers(r, m);
    read_mla(r, m);
    m.mtp_layers = static_cast<int>(r.integer_or({"num_nextn_predict_layers"}, 0, 64, 0));
  } else if (type == "glm4_moe") {
    read_moe_common(r, m, {"n_routed_experts"});
    m.moe.num_shared_experts = static_cast<int>(r.integer_or({"n_shared_experts"}, 0, 1024, 0));
    m.moe.expert_intermediate_size = r.integer({"moe_intermediate_size"}, 1, kMaxModelDim);
    place_moe_layers(r, m);
    m.mtp_layers = static_cast<int>(r.integer_or({"num_nextn_predict_layers"}, 0, 64, 0));
  } else if (type == "gpt_oss") {
    read_moe_common(r, m, {"num_local_experts"});
    m.moe.expert_intermediate_size = m.intermediate_size;
    m.moe.expert_bias = true;
    m.attention_sinks = true;
    for (ModelLayer& k : m.layers) k.ffn = LayerFfn::Moe;
    const int64_t w = r.integer_or({"sliding_window"}, 1, kMaxModelContext, 0);
    if (!read_layer_types(r, m, w, 0)) {
      // Without layer_types, gpt-oss alternates sliding (even layers) and full attention.
      if (w <= 0) fail(error_code::kMissingKey, r.child("sliding_window"), "gpt_oss needs 'sliding_window' or 'layer_types'");
      for (int i = 0; i < m.num_layers; i += 2) m.layers[static_cast<size_t>(i)].window = w;
    }
  } else if (type == "llama4" || type == "llama4_text") {
    read_moe_common(r, m, {"num_local_experts"});
    m.moe.expert_intermediate_size = m.intermediate_size;
    m.moe.num_shared_experts = 1;  // every Llama-4 MoE layer has one shared expert of the expert size
    m.dense_intermediate_size = r.integer_or({"intermediate_size_mlp"}, 1, kMaxModelDim, m.intermediate_size);
    m.moe.layer_step = static_cast<int>(r.integer_or({"interleave_moe_layer_step"}, 1, 4096, 1));
    const int64_t chunk = r.integer_or({"attention_chunk_size"}, 1, kMaxModelContext, 0);
    // no_rope_layers: 1 = rope (chunked), 0 = NoPE global attention; default every 4th layer is NoPE.
    std::vector<int> rope(static_cast<size_t>(m.num_layers), 1);
    if (r.has("no_rope_layers") && r.at("no_rope_layers").is_array() && !r.at("no_rope_layers").empty()) {
      const json& a = r.at("no_rope_layers");
      if (static_cast<int>(a.size()) != m.num_layers)
        fail(error_code::kConstraint, r.child("no_rope_layers"), "no_rope_layers needs one entry per layer");
      for (size_t i = 0; i < a.size(); ++i)
        rope[i] = static_cast<int>(read_integer(a[i], pointer_append(r.child("no_rope_layers"), i), 0, 1));
    } else {
      const int interval = static_cast<int>(r.integer_or({"no_rope_layer_interval"}, 1, 4096, 4));
      for (int i = 0; i < m.num_layers; ++i) rope[static_cast<size_t>(i)] = (i + 1) % interval != 0 ? 1 : 0;
    }
    for (int i = 0; i < m.num_layers; ++i) {
      ModelLayer& k = m.layers[static_cast<size_t>(i)];
      k.rope = rope[static_cast<size_t>(i)] == 1;
      if (k.rope && chunk > 0 && chunk < m.max_context) k.chunk = chunk;
      k.ffn = (i + 1) % m.moe.layer_step == 0 ? LayerFfn::Moe : LayerFfn::Dense;
    }
    r.mark("use_qk_norm");  // an L2 norm without weights
    r.mark("moe_layers");
  }
  if (type == "qwen3_next") {
    m.attention_output_gate = true;
    m.linear_attention.num_key_heads = static_cast<int>(r.integer({"linear_num_key_heads"}, 1, 4096));
    m.linear_attention.num_value_heads = static_cast<int>(r.integer({"linear_num_value_heads"}, 1, 4096));
    m.linear_attention.key_head_dim = r.integer({"linear_key_head_dim"}, 1, 4096);
    m.linear_attention.value_head_dim = r.integer({"linear_value_head_dim"}, 1, 4096);
    m.linear_attention.conv_kernel = static_cast<int>(r.integer_or({"linear_conv_kernel_dim"}, 1, 64, 4));
    if (!read_layer_types(r, m, 0, 0)) {
      const int interval = static_cast<int>(r.integer({"full_attention_interval"}, 1, 4096));
      for (int i = 0; i < m.num_layers; ++i)
        if ((i + 1) % interval != 0) m.layers[static_cast<size_t>(i)].mixer = LayerMixer::LinearAttention;
    }
    m.mtp_layers = static_cast<int>(r.integer_or({"mtp_num_hidden_layers", "num_nextn_predict_layers"}, 0, 64, 0));
  }
}

// quantization_config (inside config.json) as the engine's weight format.
void read_quantization_config(const json& q, const std::string& path, ModelArch& m) {
  HfReader r(q, path);
  const std::string method = lower(r.string_or("quant_method", ""));
  if (method.empty())
    fail(error_code::kMissingKey, r.child("quant_method"),
         "quantization_config has no 'quant_method'; remove quantization_config and set precision.weights instead");
  CheckpointQuant& cq = m.quant;
  cq.method = method;
  auto excludes_attention = [&](const char* key) {
    if (!r.has(key) || !r.at(key).is_array()) return false;
    for (const json& e : r.at(key))
      if (e.is_string() && (e.get<std::string>().find("self_attn") != std::string::npos ||
                            e.get<std::string>().find(".attn") != std::string::npos))
        return true;
    return false;
  };
  if (method == "fp8") {
    cq.weights_dtype = "fp8";
    std::string block;
    if (r.has("weight_block_size") && r.at("weight_block_size").is_array() && r.at("weight_block_size").size() == 2) {
      const json& b = r.at("weight_block_size");
      block = " block-wise " + std::to_string(read_integer(b[0], pointer_append(r.child("weight_block_size"), 0), 1, 1 << 20)) + "x" +
              std::to_string(read_integer(b[1], pointer_append(r.child("weight_block_size"), 1), 1, 1 << 20));
    }
    cq.applied = "fp8" + block + " weights (quantization_config, fp32 block scales are negligible); embeddings and lm_head in bf16";
  } else if (method == "mxfp4") {
    cq.weights_dtype = "mxfp4";
    cq.attention_excluded = excludes_attention("modules_to_not_convert");
    cq.applied = std::string("mxfp4 expert and MLP weights (e2m1 + one e8m0 scale per 32)") +
                 (cq.attention_excluded ? "; attention, router, embeddings and lm_head stay bf16" : "");
  } else if (method == "awq" || method == "gptq") {
    const int64_t bits = r.integer_or({"bits", "w_bit"}, 2, 8, 4);
    if (bits != 4 && bits != 8)
      fail(error_code::kInvalidValue, r.child("bits"), "only 4- and 8-bit " + method + " checkpoints are priced; set precision.weights");
    cq.weights_dtype = bits == 4 ? "int4" : "int8";
    cq.group_size = static_cast<int>(r.integer_or({"group_size", "q_group_size"}, -1, 1 << 20, 128));
    if (cq.group_size < 0) cq.group_size = 0;  // -1: per-channel
    cq.applied = method + " int" + std::to_string(bits) + " weight-only, group size " + std::to_string(cq.group_size) +
                 "; embeddings and lm_head in bf16";
  } else if (method == "compressed-tensors" || method == "compressed_tensors") {
    // config_groups: {"group_0": {"weights": {"num_bits", "type", "group_size"}, "input_activations": ...}}
    const std::string format = lower(r.string_or("format", ""));
    int64_t bits = 0;
    std::string kind;
    int64_t group = 0;
    if (r.has("config_groups") && r.at("config_groups").is_object()) {
      for (auto it = r.at("config_groups").begin(); it != r.at("config_groups").end(); ++it) {
        const json& g = it.value();
        if (!g.is_object() || !g.contains("weights") || !g["weights"].is_object()) continue;
        const json& w = g["weights"];
        const std::string wp = pointer_append(pointer_append(r.child("config_groups"), it.key()), "weights");
        if (w.contains("num_bits")) bits = read_integer(w["num_bits"], pointer_append(wp, "num_bits"), 1, 32);
        if (w.contains("type") && w["type"].is_string()) kind = w["type"].get<std::string>();
        if (w.contains("group_size") && !w["group_size"].is_null())
          group = read_integer(w["group_size"], pointer_append(wp, "group_size"), 0, 1 << 20);
        break;
      }
    }
    if (format.find("nvfp4") != std::string::npos || (bits == 4 && kind == "float")) cq.weights_dtype = "nvfp4";
    else if (bits == 8 && kind == "float") cq.weights_dtype = "fp8";
    else if (bits == 8) cq.weights_dtype = "int8";
    else if (bits == 4) cq.weights_dtype = "int4", cq.group_size = static_cast<int>(group);
    else
      fail(error_code::kInvalidValue, r.child("config_groups"),
           "compressed-tensors scheme not understood (need weights num_bits 4 or 8); set precision.weights explicitly");
    if (r.has("kv_cache_scheme") && r.at("kv_cache_scheme").is_object()) cq.kv_cache_dtype = "fp8";
    cq.attention_excluded = excludes_attention("ignore");
    cq.applied = "compressed-tensors " + cq.weights_dtype + " weights" + (cq.kv_cache_dtype.empty() ? "" : ", fp8 KV cache") +
                 (cq.attention_excluded ? "; attention kept in bf16" : "");
  } else if (method == "modelopt") {
    const std::string algo = lower(r.string_or("quant_algo", ""));
    if (algo == "fp8") cq.weights_dtype = "fp8";
    else if (algo == "nvfp4") cq.weights_dtype = "nvfp4";
    else
      fail(error_code::kInvalidValue, r.child("quant_algo"),
           "ModelOpt quant_algo '" + printable(algo) + "' not understood (FP8, NVFP4); set precision.weights explicitly");
    cq.applied = "ModelOpt " + cq.weights_dtype + " weights";
  } else if (method == "bitsandbytes") {
    cq.weights_dtype = r.boolean_or("load_in_4bit", false) ? "int4" : "int8";
    cq.group_size = 64;
    cq.applied = "bitsandbytes " + cq.weights_dtype + " weight-only (priced as int weight-only, blocks of 64)";
  } else {
    fail(error_code::kInvalidValue, r.child("quant_method"),
         "quant_method '" + printable(method) +
             "' not understood (known: fp8, mxfp4, awq, gptq, compressed-tensors, modelopt, bitsandbytes); "
             "remove quantization_config and set precision.weights");
  }
}

std::string torch_dtype_name(const HfReader& r) {
  const std::string key = r.has("torch_dtype") ? "torch_dtype" : "dtype";
  if (!r.has(key) || !r.at(key).is_string()) return "";
  const std::string d = r.at(key).get<std::string>();
  if (d == "bfloat16") return "bf16";
  if (d == "float16") return "fp16";
  if (d == "float32") return "fp32";
  return d;
}

// Warns about every value read from a non-standard literal (Infinity, NaN).
void note_nonstandard_literals(const json& v, const std::string& path, std::vector<std::string>& warnings) {
  if (is_nonstandard_literal(v)) {
    warnings.push_back("non-standard JSON literal " + v.get<std::string>() + " at " + path +
                       " accepted (Python's json writes it); the value is not used");
  } else if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) note_nonstandard_literals(it.value(), pointer_append(path, it.key()), warnings);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) note_nonstandard_literals(v[i], pointer_append(path, i), warnings);
  }
}

}  // namespace

void read_checkpoint_quantization(const json& q, const std::string& path, ModelArch& m) {
  read_quantization_config(q, path, m);
}

void apply_modelopt_quant(ModelArch& m, const json& hf_quant, const std::string& path) {
  require_object(hf_quant, path);
  const json* q = &hf_quant;
  std::string qpath = path;
  if (hf_quant.contains("quantization")) q = &hf_quant.at("quantization"), qpath = pointer_append(path, "quantization");
  require_object(*q, qpath);
  HfReader r(*q, qpath);
  const std::string algo = lower(r.string_or("quant_algo", ""));
  if (algo == "fp8") m.quant.weights_dtype = "fp8";
  else if (algo == "nvfp4") m.quant.weights_dtype = "nvfp4";
  else if (algo == "w4a16_awq" || algo == "w4a8_awq") m.quant.weights_dtype = "int4", m.quant.group_size = 128;
  else
    fail(error_code::kInvalidValue, r.child("quant_algo"),
         "ModelOpt quant_algo '" + printable(algo) + "' not understood (FP8, NVFP4, W4A16_AWQ); set precision.weights");
  const std::string kv = lower(r.string_or("kv_cache_quant_algo", ""));
  if (kv == "fp8") m.quant.kv_cache_dtype = "fp8";
  m.quant.method = "modelopt";
  m.quant.applied = "ModelOpt hf_quant_config: " + m.quant.weights_dtype + " weights" +
                    (m.quant.kv_cache_dtype.empty() ? "" : ", fp8 KV cache") + "; lm_head in bf16";
}

ModelArch read_hf_config(const json& config, const std::string& path) {
  HfReader top(config, path);
  // Multimodal wrappers (Gemma-3, Llama-4, Mistral-3) keep the language model in text_config.
  const bool wrapped = top.has("text_config");
  const std::string text_path = wrapped ? top.child("text_config") : path;
  if (wrapped) require_object(top.at("text_config"), text_path);
  const json& text = wrapped ? top.at("text_config") : config;
  HfReader r(text, text_path);

  ModelArch m;
  note_nonstandard_literals(config, path, m.import.warnings);
  std::string type = r.string_or("model_type", "");
  if (type.empty() || !is_known(type)) {
    const std::string outer = top.string_or("model_type", "");
    if (wrapped && (outer == "llama4" || outer == "gemma3" || outer == "mistral3")) {
      type = outer == "llama4" ? "llama4_text" : outer == "gemma3" ? "gemma3_text" : "mistral";
    }
  }
  if (type == "mistral3") type = "mistral";
  if (type.empty() || !is_known(type)) {
    const std::string declared = type;
    std::string inferred = type_from_architectures(top);
    if (!inferred.empty()) {
      if (inferred == "mistral3") inferred = "mistral";
      if (inferred == "llama4") inferred = "llama4_text";
      if (inferred == "gemma3" && wrapped) inferred = "gemma3_text";
      m.import.warnings.push_back(
          (declared.empty() ? std::string("no model_type") : "unknown model_type '" + printable(declared) + "'") +
          ": read as '" + inferred + "' from architectures[0]");
      type = inferred;
    } else if (r.has("hidden_size") && r.has("num_hidden_layers") && r.has("num_attention_heads") &&
               r.has("intermediate_size") && r.has("vocab_size") && r.has("max_position_embeddings")) {
      m.import.warnings.push_back(
          (declared.empty() ? std::string("no model_type") : "unknown model_type '" + printable(declared) + "'") +
          ": read as a Llama-style decoder from the standard keys hidden_size, num_hidden_layers, "
          "num_attention_heads, num_key_value_heads, head_dim, intermediate_size, vocab_size, "
          "max_position_embeddings, hidden_act, tie_word_embeddings, attention_bias; check the result");
      type = "llama";
    } else {
      std::string known;
      for (const auto& t : known_types()) known += (known.empty() ? "" : ", ") + t;
      fail(error_code::kInvalidValue, pointer_append(text_path, "model_type"),
           (declared.empty() ? std::string("config.json has no 'model_type'") : "unsupported model_type '" + printable(declared) + "'") +
               " and neither its architectures entry nor its keys say how to read it; supported: " + known +
               ". Give a full architecture object instead of hf_config, or add the standard keys "
               "(hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, vocab_size, max_position_embeddings)");
    }
  }
  r.mark("model_type");
  m.import.family = type;
  m.id = "hf-" + type;
  m.name = top.string_or("_name_or_path", r.string_or("_name_or_path", "Hugging Face " + type + " model"));
  if (m.name.empty()) m.name = "Hugging Face " + type + " model";
  m.source = "Hugging Face config.json (" + type + ")";

  read_family(r, type, m);
  if (m.head_dim == 0) m.head_dim = m.hidden_size / m.num_heads;

  // Quantization: in the text config or at the top level.
  const HfReader* qr = r.has("quantization_config") ? &r : top.has("quantization_config") ? &top : nullptr;
  if (qr) read_quantization_config(qr->at("quantization_config"), qr->child("quantization_config"), m);
  const std::string tdt = torch_dtype_name(top).empty() ? torch_dtype_name(r) : torch_dtype_name(top);
  if (m.quant.applied.empty() && !tdt.empty()) m.quant.applied = "checkpoint weights in " + tdt + " (torch_dtype)";
  m.quant.method = m.quant.method.empty() ? "" : m.quant.method;
  if (m.quant.weights_dtype.empty() && !tdt.empty()) m.quant.applied = "checkpoint weights in " + tdt + " (torch_dtype)";

  // What was set aside.
  for (const char* part : {"vision_config", "audio_config", "vision_tower", "speech_config"})
    if (top.has(part)) m.import.ignored_parts.push_back(std::string(part) + " (not priced: text generation only)");
  if (m.mtp_layers > 0)
    m.import.ignored_parts.push_back(std::to_string(m.mtp_layers) +
                                     " multi-token-prediction layer(s): counted separately, not in the main model; priced as the "
                                     "speculative draft when serving.speculative.method is \"mtp\"");
  for (const char* k : {"torch_dtype", "dtype", "architectures", "_name_or_path", "text_config", "vision_config",
                        "quantization_config", "model_type"}) {
    top.mark(k);
    r.mark(k);
  }
  m.import.ignored_keys = r.unread(wrapped ? "text_config." : "");
  if (wrapped)
    for (const std::string& k : top.unread("")) m.import.ignored_keys.push_back(k);
  finalize_layers(m);
  check_model(m, path);
  return m;
}

}  // namespace sightline
