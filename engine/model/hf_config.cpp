// Hugging Face config.json import, by family and by keys. These files carry
// many keys that do not affect performance (token ids, dropout, init ranges):
// they are accepted and listed in the import report; missing required keys
// are located errors. Multimodal configs are read through their text_config.
#include <algorithm>
#include <cmath>
#include <set>

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

namespace {

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

}  // namespace hf

void read_checkpoint_quantization(const json& q, const std::string& path, ModelArch& m) {
  hf::read_quantization_config(q, path, m);
}

void apply_modelopt_quant(ModelArch& m, const json& hf_quant, const std::string& path) {
  using namespace hf;
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
