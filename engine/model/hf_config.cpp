// Hugging Face config.json import, by family and by keys. These files carry
// many keys that do not affect performance (token ids, dropout, init ranges):
// they are accepted and listed in the import report; missing required keys
// are located errors. Multimodal configs are read through their text_config.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "model/architecture.hpp"
#include "model/hf_reader.hpp"

namespace sightline {

namespace hf {

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
      "llama4_text", "mistral3", "phi3", "nemotron_h", "jamba", "falcon", "gpt2", "qwen3_vl", "qwen3_vl_text",
      "qwen3_vl_moe", "qwen3_vl_moe_text", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text", "hunyuan",
      "hunyuan_v1_moe", "minimax_m2", "deepseek_v32", "glm_moe_dsa", "gemma4", "gemma4_text", "mimo_v2_flash",
      "nemotron-nas", "glm4_moe_lite", "mimo", "bailing_moe", "olmo2", "olmo3"};
  return types;
}

bool is_known(const std::string& t) {
  const auto& k = known_types();
  return std::find(k.begin(), k.end(), t) != k.end() || t == "RefinedWeb" || t == "RefinedWebModel";
}

// model_type from the first "architectures" entry, matched exactly: the class
// name transformers instantiates ("Qwen3MoeForCausalLM" -> "qwen3_moe"). Never
// by substring: "Qwen3VLMoeForConditionalGeneration" is not Qwen3.
std::string type_from_architectures(const HfReader& r) {
  if (!r.has("architectures") || !r.at("architectures").is_array() || r.at("architectures").empty() ||
      !r.at("architectures")[0].is_string())
    return "";
  const std::string arch = r.at("architectures")[0].get<std::string>();
  static const std::vector<std::pair<const char*, const char*>> table = {
      {"LlamaForCausalLM", "llama"}, {"MistralForCausalLM", "mistral"}, {"MixtralForCausalLM", "mixtral"},
      {"Qwen2ForCausalLM", "qwen2"}, {"Qwen2MoeForCausalLM", "qwen2_moe"}, {"Qwen3ForCausalLM", "qwen3"},
      {"Qwen3MoeForCausalLM", "qwen3_moe"}, {"Qwen3NextForCausalLM", "qwen3_next"},
      {"DeepseekV2ForCausalLM", "deepseek_v2"}, {"DeepseekV3ForCausalLM", "deepseek_v3"},
      {"Glm4ForCausalLM", "glm4"}, {"Glm4MoeForCausalLM", "glm4_moe"}, {"GptOssForCausalLM", "gpt_oss"},
      {"Gemma2ForCausalLM", "gemma2"}, {"Gemma3ForCausalLM", "gemma3_text"},
      {"Gemma3ForConditionalGeneration", "gemma3"}, {"Llama4ForCausalLM", "llama4_text"},
      {"Llama4ForConditionalGeneration", "llama4"}, {"Mistral3ForConditionalGeneration", "mistral3"},
      {"Phi3ForCausalLM", "phi3"}, {"NemotronHForCausalLM", "nemotron_h"}, {"JambaForCausalLM", "jamba"},
      {"FalconForCausalLM", "falcon"}, {"GPT2LMHeadModel", "gpt2"},
      {"Qwen3VLMoeForConditionalGeneration", "qwen3_vl_moe"}, {"Qwen3_5MoeForConditionalGeneration", "qwen3_5_moe"},
      {"HunYuanMoEV1ForCausalLM", "hunyuan_v1_moe"}, {"MiniMaxM2ForCausalLM", "minimax_m2"},
      {"DeepseekV32ForCausalLM", "deepseek_v32"}, {"GlmMoeDsaForCausalLM", "glm_moe_dsa"},
      {"Gemma4ForCausalLM", "gemma4_text"}, {"Gemma4ForConditionalGeneration", "gemma4"},
      {"MiMoV2FlashForCausalLM", "mimo_v2_flash"}, {"DeciLMForCausalLM", "nemotron-nas"},
      {"Glm4MoeLiteForCausalLM", "glm4_moe_lite"}, {"MiMoForCausalLM", "mimo"}, {"BailingMoeForCausalLM", "bailing_moe"},
      {"Olmo2ForCausalLM", "olmo2"}, {"Olmo3ForCausalLM", "olmo3"}};
  for (const auto& [name, type] : table)
    if (arch == name) return type;
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
  // Biases on q/k/v only (not o), when the config says so (Qwen3-Coder's qkv_bias: false).
  m.qkv_bias = r.boolean_or("qkv_bias", false);
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
  // Aliases present together (gpt-oss writes both) must agree.
  for (const char* k : {"experts_per_token", "moe_topk"})
    if (r.has(k) && read_integer(r.at(k), r.child(k), 1, 65536) != m.moe.top_k)
      fail(error_code::kConstraint, r.child(k), std::string(k) + " disagrees with the experts-per-token key read first");
  // Located at config.json's own key (check_model would name /moe/top_k, which the pasted file lacks).
  if (m.moe.top_k > m.moe.num_experts) {
    const char* key = r.has("num_experts_per_tok") ? "num_experts_per_tok" : r.has("experts_per_token") ? "experts_per_token" : "moe_topk";
    fail(error_code::kConstraint, r.child(key),
         std::string(key) + " (" + std::to_string(m.moe.top_k) + ") cannot exceed the number of experts (" +
             std::to_string(m.moe.num_experts) + ")");
  }
}

namespace {

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

}  // namespace hf


ModelArch read_hf_config(const json& config, const std::string& path) {
  using namespace hf;
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
  // A wrapper the reader does not know (its model_type neither a family nor
  // the text model's own name + "_text") may add structure around the text
  // model: reading text_config alone is then said, never silent.
  if (wrapped) {
    const std::string outer = top.string_or("model_type", "");
    const bool known_wrapper = outer == "llama4" || outer == "gemma3" || outer == "mistral3" || is_known(outer) ||
                               (!type.empty() && outer + "_text" == type);
    if (top.has("model_type") && !known_wrapper && is_known(type))
      m.import.warnings.push_back("unknown wrapper model_type '" + printable(outer) + "': only its text_config (" + type +
                                  ") is read; anything the wrapper adds around it is not priced");
  }
  refuse_unpriced_features(r, type.empty() ? top.string_or("model_type", "") : type);
  if (wrapped) refuse_unpriced_features(top, top.string_or("model_type", ""));
  bool known = !type.empty() && is_known(type);
  if (!known) {
    const std::string declared = type;
    std::string inferred = type_from_architectures(top);
    if (inferred == "mistral3") inferred = "mistral";
    if (inferred == "llama4") inferred = "llama4_text";
    if (inferred == "gemma3" && wrapped) inferred = "gemma3_text";
    const std::string what = declared.empty() ? std::string("no model_type") : "unknown model_type '" + printable(declared) + "'";
    if (!inferred.empty()) {
      m.import.warnings.push_back(what + ": read as '" + inferred + "' because architectures[0] is exactly the class of that family");
      type = inferred;
      known = true;
    } else if (!r.has("hidden_size") || !r.has("num_hidden_layers") || !r.has("num_attention_heads") ||
               !r.has("intermediate_size") || !r.has("vocab_size") || !r.has("max_position_embeddings")) {
      std::string names, structural;
      for (const auto& t : known_types()) names += (names.empty() ? "" : ", ") + t;
      for (auto it = text.begin(); it != text.end(); ++it)
        if (!neutral_key_reason(it.key()) && name_suggests_structure(it.key()))
          structural += (structural.empty() ? "" : ", ") + it.key();
      fail(error_code::kInvalidValue, pointer_append(text_path, "model_type"),
           (declared.empty() ? std::string("config.json has no 'model_type'") : "unsupported model_type '" + printable(declared) + "'") +
               " and neither its architectures entry nor its keys say how to read it" +
               (structural.empty() ? "" : " (keys that describe its structure: " + structural + ")") + "; supported: " + names +
               ". Give a full architecture object instead of hf_config");
    } else {
      // Read by structure: the standard decoder keys, and refused below unless
      // every other key is understood (hf_keys.cpp). Never a family guessed.
      m.import.warnings.push_back(what + ": read by structure (every key understood as a standard decoder's)");
      type = declared.empty() ? "unnamed" : declared;
    }
  }
  r.mark("model_type");
  m.import.family = type;
  m.id = "hf-" + type;
  m.name = top.string_or("_name_or_path", r.string_or("_name_or_path", "Hugging Face " + type + " model"));
  if (m.name.empty()) m.name = "Hugging Face " + type + " model";
  m.source = "Hugging Face config.json (" + type + ")";

  if (known) read_family(r, type, m);
  else read_by_structure(r, m);
  // Wrappers (Qwen3-VL, Qwen3.5) may keep tie_word_embeddings beside text_config;
  // with both (Kimi-K2.5), they must agree.
  if (wrapped && top.has("tie_word_embeddings")) {
    const bool outer = top.boolean_or("tie_word_embeddings", false);
    if (!text.contains("tie_word_embeddings")) m.tied_embeddings = outer;
    else if (outer != m.tied_embeddings)
      fail(error_code::kConstraint, top.child("tie_word_embeddings"),
           "tie_word_embeddings here disagrees with text_config's; which one the checkpoint follows is not guessed");
  }
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
  account_for_keys(r, wrapped ? "text_config." : "", known, m);
  if (wrapped) account_for_keys(top, "", known, m);
  finalize_layers(m);
  // check_model names the engine's fields (num_kv_heads); a pasted config's
  // heads are refused at its own keys first.
  if (m.num_heads > 0 && m.num_kv_heads > 0 && m.num_heads % m.num_kv_heads != 0)
    fail(error_code::kConstraint, r.child(r.has("num_key_value_heads") ? "num_key_value_heads" : "num_attention_heads"),
         "num_attention_heads (" + std::to_string(m.num_heads) + ") must be a multiple of num_key_value_heads (" +
             std::to_string(m.num_kv_heads) + ")");
  if (m.is_moe() && m.moe.first_dense_layers >= m.num_layers && r.has("first_k_dense_replace"))
    fail(error_code::kConstraint, r.child("first_k_dense_replace"),
         "first_k_dense_replace (" + std::to_string(m.moe.first_dense_layers) + ") must be smaller than num_hidden_layers (" +
             std::to_string(m.num_layers) + ")");
  check_model(m, path);
  return m;
}

}  // namespace sightline
