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
      "qwen3_vl_moe", "qwen3_vl_moe_text", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"};
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
      {"Qwen3VLMoeForConditionalGeneration", "qwen3_vl_moe"}, {"Qwen3_5MoeForConditionalGeneration", "qwen3_5_moe"}};
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

// A checkpoint's list of modules left unquantized (modules_to_not_convert,
// compressed-tensors' ignore), applied: true when every attention layer stays
// in bf16. Embeddings, the LM head, norms, routers and vision parts are priced
// unquantized already; any other module (MLP or expert weights, some layers'
// attention only) cannot be expressed and is refused, located at the entry.
bool read_unconverted_modules(const HfReader& r, const char* key, const ModelArch& m) {
  if (!r.has(key) || r.at(key).is_null()) return false;
  const json& list = r.at(key);
  const std::string p = r.child(key);
  if (!list.is_array()) fail(error_code::kType, p, "expected an array of module names");
  auto has = [](const std::string& s, const char* part) { return s.find(part) != std::string::npos; };
  auto ends = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  std::set<int64_t> attention_layers;
  bool attention_all = false;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string ip = pointer_append(p, i);
    if (!list[i].is_string()) fail(error_code::kType, ip, "expected a module name");
    std::string e = lower(list[i].get<std::string>());
    if (e.rfind("re:", 0) == 0) e = e.substr(3);  // compressed-tensors regex entries
    if (has(e, "lm_head") || has(e, "embed") || has(e, "norm") || has(e, "router") || ends(e, "mlp.gate") ||
        ends(e, ".gate") || has(e, "vision") || has(e, "visual") || has(e, "mm_projector") || has(e, "multi_modal"))
      continue;
    if (has(e, "self_attn") || has(e, ".attn") || has(e, "attention")) {
      const size_t at = e.find("layers.");
      const std::string rest = at == std::string::npos ? "" : e.substr(at + 7);
      if (rest.empty() || !std::isdigit(static_cast<unsigned char>(rest[0]))) attention_all = true;  // "*" or a pattern
      else {
        int64_t layer = 0;
        const std::string digits = rest.substr(0, rest.find_first_not_of("0123456789"));
        if (!parse_integer_token(digits, layer))
          fail(error_code::kInvalidValue, ip, "layer number '" + printable(digits) + "' does not fit in 64 bits");
        attention_layers.insert(layer);
      }
      continue;
    }
    fail(error_code::kNotImplemented, ip,
         "'" + printable(list[i].get<std::string>()) + "' is kept unquantized by this checkpoint; the engine prices "
         "unquantized attention, embeddings, LM head, norms and routers, not other modules (MLP or expert weights), "
         "so the weight bytes would be wrong: set precision.weights explicitly");
  }
  const int attention = m.count_layers(LayerMixer::Attention);
  if (!attention_all && !attention_layers.empty() && static_cast<int>(attention_layers.size()) < attention)
    fail(error_code::kNotImplemented, p,
         "keeps the attention of " + std::to_string(attention_layers.size()) + " of " + std::to_string(attention) +
             " attention layers unquantized; the engine prices all or none: set precision.weights explicitly");
  return attention_all || !attention_layers.empty();
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
  auto excludes_attention = [&](const char* key) { return read_unconverted_modules(r, key, m); };
  if (method == "fp8") {
    cq.weights_dtype = "fp8";
    std::string block;
    if (r.has("weight_block_size") && r.at("weight_block_size").is_array() && r.at("weight_block_size").size() == 2) {
      const json& b = r.at("weight_block_size");
      block = " block-wise " + std::to_string(read_integer(b[0], pointer_append(r.child("weight_block_size"), 0), 1, 1 << 20)) + "x" +
              std::to_string(read_integer(b[1], pointer_append(r.child("weight_block_size"), 1), 1, 1 << 20));
    }
    cq.attention_excluded = excludes_attention("modules_to_not_convert");
    cq.applied = "fp8" + block + " weights (quantization_config, fp32 block scales are negligible); embeddings and lm_head in bf16" +
                 (cq.attention_excluded ? "; attention stays bf16" : "");
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
    cq.attention_excluded = excludes_attention("modules_to_not_convert");
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
    if (!r.has("quant_algo"))
      fail(error_code::kMissingKey, r.child("quant_algo"), "a ModelOpt quantization_config without 'quant_algo'; set precision.weights explicitly");
    const std::string algo = lower(r.string_or("quant_algo", ""));
    if (algo == "fp8") cq.weights_dtype = "fp8";
    else if (algo == "nvfp4") cq.weights_dtype = "nvfp4";
    else
      fail(error_code::kInvalidValue, r.child("quant_algo"),
           "ModelOpt quant_algo '" + printable(algo) + "' not understood (FP8, NVFP4); set precision.weights explicitly");
    const std::string kv = lower(r.string_or("kv_cache_quant_algo", ""));
    if (kv == "fp8") cq.kv_cache_dtype = "fp8";
    else if (!kv.empty())
      fail(error_code::kInvalidValue, r.child("kv_cache_quant_algo"),
           "ModelOpt kv_cache_quant_algo '" + printable(kv) + "' not understood (FP8); set precision.kv_cache explicitly");
    cq.applied = "ModelOpt " + cq.weights_dtype + " weights" + (cq.kv_cache_dtype.empty() ? "" : ", fp8 KV cache");
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
  // Its other keys accounted for like the config's own (hf_keys.cpp).
  for (const char* k : {"activation_scheme", "fmt", "quantization_status", "global_compression_ratio", "version",
                        "checkpoint_format", "model_name_or_path", "model_file_base_name", "desc_act", "damp_percent",
                        "true_sequential", "static_groups", "quant_algo"})
    r.neutral(k, "quantizer settings that change no stored byte (scale scheme, fp8 encoding, status, calibration options)");
  account_for_keys(r, "quantization_config.", true, m);
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
  if (!r.has("quant_algo"))
    fail(error_code::kMissingKey, r.child("quant_algo"), "hf_quant_config has no 'quant_algo'; set precision.weights");
  const std::string algo = lower(r.string_or("quant_algo", ""));
  if (algo == "fp8") m.quant.weights_dtype = "fp8";
  else if (algo == "nvfp4") m.quant.weights_dtype = "nvfp4";
  else if (algo == "w4a16_awq" || algo == "w4a8_awq") m.quant.weights_dtype = "int4";
  else
    fail(error_code::kInvalidValue, r.child("quant_algo"),
         "ModelOpt quant_algo '" + printable(algo) + "' not understood (FP8, NVFP4, W4A16_AWQ); set precision.weights");
  const std::string kv = lower(r.string_or("kv_cache_quant_algo", ""));
  if (kv == "fp8") m.quant.kv_cache_dtype = "fp8";
  else if (!kv.empty())
    fail(error_code::kInvalidValue, r.child("kv_cache_quant_algo"),
         "ModelOpt kv_cache_quant_algo '" + printable(kv) + "' not understood (FP8); set precision.kv_cache explicitly");
  m.quant.attention_excluded = read_unconverted_modules(r, "exclude_modules", m);
  if (m.quant.weights_dtype == "int4") {
    m.quant.group_size = static_cast<int>(r.integer_or({"group_size"}, 1, 1 << 20, 128));
  }
  account_for_keys(r, "hf_quant_config.quantization.", true, m);
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
  // Wrappers (Qwen3-VL, Qwen3.5) may keep tie_word_embeddings beside text_config.
  if (wrapped && !text.contains("tie_word_embeddings") && top.has("tie_word_embeddings"))
    m.tied_embeddings = top.boolean_or("tie_word_embeddings", false);
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
