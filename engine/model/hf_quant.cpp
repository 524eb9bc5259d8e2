// A checkpoint's quantization, read exactly from its config: the
// quantization_config block of config.json (fp8, mxfp4, awq, gptq,
// compressed-tensors, modelopt, bitsandbytes) and ModelOpt's
// hf_quant_config.json. Weight format, group size and zero points, the modules
// left unquantized, and the KV cache dtype; anything else is refused at its key.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "model/hf_reader.hpp"

namespace sightline {

namespace hf {

namespace {

struct Unconverted {
  bool attention = false;  // every attention layer stays in the activation dtype
  bool attention_out_quantized = false;  // ... but for its output projection (o_proj)
  bool dense_ffn = false;  // dense MLPs and shared experts stay in the activation dtype
};

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The layer number a module name or pattern names ("model.layers.3.mlp"), or -1 for every layer.
int64_t named_layer(const std::string& e, const std::string& path) {
  const size_t at = e.find("layers.");
  const std::string rest = at == std::string::npos ? "" : e.substr(at + 7);
  if (rest.empty() || !std::isdigit(static_cast<unsigned char>(rest[0]))) return -1;
  int64_t layer = 0;
  const std::string digits = rest.substr(0, rest.find_first_not_of("0123456789"));
  if (!parse_integer_token(digits, layer))
    fail(error_code::kInvalidValue, path, "layer number '" + printable(digits) + "' does not fit in 64 bits");
  return layer;
}

// Whether a module pattern names a whole layer: nothing after "layers.N" but a wildcard.
bool names_whole_layer(const std::string& e) {
  const size_t at = e.find("layers.");
  if (at == std::string::npos) return false;
  const std::string rest = e.substr(at + 7);
  const std::string tail = rest.substr(std::min(rest.size(), rest.find_first_not_of("0123456789")));
  return tail.empty() || tail == "*" || tail == ".*";
}

// The attention sub-module an entry names ("model.layers.3.self_attn.q_a_proj" ->
// "q_a_proj"), or "" when it names the whole attention ("self_attn", "self_attn*",
// "re:.*self_attn.*").
std::string attention_part(const std::string& e) {
  for (const char* token : {"self_attn", ".attn", "attention"}) {
    const size_t at = e.find(token);
    if (at == std::string::npos) continue;
    std::string rest = e.substr(at + std::string(token).size());
    while (!rest.empty() && (rest.front() == '.' || rest.front() == '\\')) rest.erase(0, 1);  // regex "\." too
    return rest.substr(0, rest.find_first_of(".*\\"));
  }
  return "";
}

// The projections a layer's attention has, by their checkpoint names (vLLM and
// transformers: MLA's q_a/q_b or q, kv_a_proj_with_mqa, kv_b, o; otherwise q, k, v
// (fused qkv_proj counts as the three) and o; no v_proj where values come from
// the keys).
std::set<std::string> attention_projections(const ModelArch& m, const ModelLayer& kind) {
  std::set<std::string> s = {"o_proj"};
  if (kind.indexer) s.insert("indexer");  // DSA's indexer sits in the attention module
  if (m.mla.enabled) {
    s.insert({"kv_a_proj_with_mqa", "kv_b_proj"});
    if (m.mla.q_lora_rank > 0) s.insert({"q_a_proj", "q_b_proj"});
    else s.insert("q_proj");
    return s;
  }
  s.insert({"q_proj", "k_proj"});
  if (!m.attention_shape(kind).k_eq_v) s.insert("v_proj");
  return s;
}

// Whether a module pattern names the whole `module` of a layer: "layers.N.mlp",
// "layers.N.mlp*" or "layers.N.mlp.*", nothing inside it.
bool names_whole_module(const std::string& e, const std::string& module) {
  const size_t at = e.find("layers.");
  if (at == std::string::npos) return false;
  const std::string rest = e.substr(at + 7);
  const size_t dot = rest.find_first_not_of("0123456789");
  if (dot == 0 || dot == std::string::npos || rest[dot] != '.') return false;
  const std::string tail = rest.substr(dot + 1);
  return tail == module || tail == module + "*" || tail == module + ".*";
}

// Layers whose attention is listed projection by projection (`parts`, per layer; -1: every
// layer), resolved: a layer whose every projection is listed is unquantized attention; one whose
// every projection but o_proj is listed (nvidia's DeepSeek NVFP4 checkpoints: q_a, q_b, kv_a, kv_b
// and the indexer in bf16) is unquantized attention with a quantized output projection, when every
// such layer is; any other split cannot be priced. Adds the layers to `attention_layers`; returns
// whether their output projections stay quantized.
bool resolve_attention_parts(const ModelArch& m, const std::map<int64_t, std::set<std::string>>& parts,
                             const std::map<int64_t, std::string>& part_at, bool attention_all,
                             std::set<int64_t>& attention_layers) {
  std::set<int64_t> all_but_out;
  for (const auto& [layer, named] : parts) {
    if (layer >= static_cast<int64_t>(m.layers.size())) continue;  // past the model: left to the checks below
    for (size_t l = 0; l < m.layers.size(); ++l) {
      if (layer >= 0 && static_cast<int64_t>(l) != layer) continue;
      if (m.layers[l].mixer != LayerMixer::Attention) continue;
      std::set<std::string> listed = named;
      if (parts.count(-1)) listed.insert(parts.at(-1).begin(), parts.at(-1).end());
      std::string missing;
      for (const std::string& need : attention_projections(m, m.layers[l]))
        if (!listed.count(need)) missing += (missing.empty() ? "" : ", ") + need;
      if (missing == "o_proj") all_but_out.insert(static_cast<int64_t>(l));
      else if (!missing.empty())
        fail(error_code::kNotImplemented, part_at.at(layer),
             "keeps some of layer " + std::to_string(l) + "'s attention projections unquantized but not " + missing +
                 "; the engine prices the attention in one format, or all of it but o_proj: set precision.weights explicitly");
      attention_layers.insert(static_cast<int64_t>(l));
    }
  }
  if (!all_but_out.empty() && (attention_all || all_but_out.size() < attention_layers.size()))
    fail(error_code::kNotImplemented, part_at.begin()->second,
         "keeps o_proj unquantized in some attention layers and quantized in others; the engine prices one format for "
         "every layer's output projection: set precision.weights explicitly");
  return !all_but_out.empty();
}

// A checkpoint's list of modules left unquantized (modules_to_not_convert,
// compressed-tensors' and ModelOpt's ignore / exclude_modules), applied.
// Embeddings, the LM head, norms, routers and vision parts are priced
// unquantized already. Attention may stay unquantized in all layers, and so may
// the dense MLPs together with the shared experts (the routed experts
// quantized); any other split cannot be expressed and is refused at the entry.
// What a list of unconverted modules names, before it is resolved against
// the model (resolve_unconverted).
struct ListedModules {
  std::set<int64_t> attention_layers, dense_layers;
  bool attention_all = false, dense_all = false, shared = false;
  std::map<int64_t, std::set<std::string>> parts;  // attention projections listed one by one, per layer (-1: all)
  std::map<int64_t, std::string> part_at;
  std::set<int64_t> shared_layers;  // MoE layers whose dense "mlp" beside the experts is listed (Gemma-4)
  std::string shared_at, dense_at;
};

Unconverted resolve_unconverted(const ModelArch& m, const std::string& p, ListedModules& listed);

Unconverted read_unconverted_modules(const HfReader& r, const char* key, const ModelArch& m) {
  if (!r.has(key) || r.at(key).is_null()) return Unconverted{};
  const json& list = r.at(key);
  const std::string p = r.child(key);
  if (!list.is_array()) fail(error_code::kType, p, "expected an array of module names");
  ListedModules listed;
  auto& [attention_layers, dense_layers, attention_all, dense_all, shared, parts, part_at, shared_layers, shared_at,
         dense_at] = listed;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string ip = pointer_append(p, i);
    if (!list[i].is_string()) fail(error_code::kType, ip, "expected a module name");
    std::string e = lower(list[i].get<std::string>());
    if (e.rfind("re:", 0) == 0) e = e.substr(3);  // compressed-tensors regex entries
    // The router may be named bare ("gate", MiniMax-M2) and carry its routing bias (e_score_correction_bias).
    if (contains(e, "lm_head") || contains(e, "embed") || contains(e, "norm") || contains(e, "router") ||
        ends_with(e, "mlp.gate") || ends_with(e, ".gate") || e == "gate" || contains(e, "e_score_correction_bias") ||
        contains(e, "vision") || contains(e, "visual") || contains(e, "mm_projector") || contains(e, "multi_modal"))
      continue;
    // DSA's per-head weighting of the indexer (GLM-5's indexers_proj, DeepSeek's
    // weights_proj: hidden x index_n_heads, under 0.03% of the weights) is priced
    // with the attention; the MTP module's input projection (eh_proj) belongs to
    // the draft, which is priced apart from the model.
    if (contains(e, "indexers_proj") || contains(e, "weights_proj") || ends_with(e, "eh_proj")) continue;
    // The multi-token-prediction layers follow the model's (DeepSeek's "model.layers.61*"
    // of 61 layers): they are the speculative draft, priced apart from the model.
    if (const int64_t layer = named_layer(e, ip); layer >= m.num_layers && layer < m.num_layers + m.mtp_layers) continue;
    if (contains(e, "self_attn") || contains(e, ".attn") || contains(e, "attention")) {
      const int64_t layer = named_layer(e, ip);
      std::string part = attention_part(e);
      if (part == "qkv_proj") part = "q_proj", parts[layer].insert({"k_proj", "v_proj"});
      if (!part.empty()) {
        // One projection: the layer's attention counts as unquantized once all of them are listed.
        static const std::set<std::string> known = {"q_proj", "k_proj", "v_proj", "o_proj", "q_a_proj", "q_b_proj",
                                                    "kv_a_proj_with_mqa", "kv_b_proj", "indexer"};
        // DSA's indexer is priced as one module: a piece of it alone ("indexer.wk") is not.
        const std::string after = part == "indexer" ? e.substr(e.find("indexer") + 7) : "";
        if (!known.count(part) || !(after.empty() || after == "*" || after == ".*"))
          fail(error_code::kNotImplemented, ip,
               "'" + printable(list[i].get<std::string>()) + "' keeps the attention's '" + printable(part) +
                   "' unquantized, a part the engine does not price apart: set precision.weights explicitly");
        parts[layer].insert(part);
        if (!part_at.count(layer)) part_at[layer] = ip;
        continue;
      }
      if (layer < 0) attention_all = true;  // "*" or a pattern
      else attention_layers.insert(layer);
      continue;
    }
    if (contains(e, "shared_expert")) {
      shared = true, shared_at = ip;
      continue;
    }
    // A dense MLP's projections ("mlp.down_proj", "mlp\.(gate|up|down)_proj"), not an expert's.
    if (contains(e, "mlp") && contains(e, "_proj") && !contains(e, "expert")) {
      const int64_t layer = named_layer(e, ip);
      if (layer < 0) dense_all = true;
      else dense_layers.insert(layer);
      dense_at = ip;
      continue;
    }
    // A layer's whole "mlp" module ("model.language_model.layers.0.mlp*"): its dense MLP in a
    // dense layer, and in an MoE layer of a family whose experts sit beside it (Gemma-4) the
    // dense MLP priced as the ungated shared expert. Where the experts sit inside "mlp", the
    // entry keeps them unquantized too and is refused below.
    if (const int64_t layer = named_layer(e, ip); layer >= 0 && layer < static_cast<int64_t>(m.layers.size()) &&
                                                  names_whole_module(e, "mlp")) {
      const LayerFfn ffn = m.layers[static_cast<size_t>(layer)].ffn;
      if (ffn == LayerFfn::Dense || (ffn == LayerFfn::Moe && moe_layer_mlp_is_dense(m.import.family))) {
        (ffn == LayerFfn::Dense ? dense_layers : shared_layers).insert(layer);
        (ffn == LayerFfn::Dense ? dense_at : shared_at) = ip;
        continue;
      }
    }
    // A whole layer ("language_model.model.layers.0*": Kimi-K2.6's first layer) is its
    // attention and its dense MLP when it is a layer of those two; any other whole layer
    // (routed experts, a state mixer) kept unquantized cannot be priced and is refused below.
    if (const int64_t layer = named_layer(e, ip); layer >= 0 && names_whole_layer(e)) {
      if (layer >= static_cast<int64_t>(m.layers.size()))
        fail(error_code::kInvalidValue, ip, "names layer " + std::to_string(layer) + " but the model has " +
                                                std::to_string(m.layers.size()) + " layers");
      const ModelLayer& k = m.layers[static_cast<size_t>(layer)];
      if (k.mixer == LayerMixer::Attention && k.ffn == LayerFfn::Dense) {
        attention_layers.insert(layer);
        dense_layers.insert(layer), dense_at = ip;
        continue;
      }
    }
    fail(error_code::kNotImplemented, ip,
         "'" + printable(list[i].get<std::string>()) + "' is kept unquantized by this checkpoint; the engine prices "
         "unquantized attention, dense MLPs with shared experts, embeddings, LM head, norms and routers, not this module, "
         "so the weight bytes would be wrong: set precision.weights explicitly");
  }
  return resolve_unconverted(m, p, listed);
}

// The listed modules against the model: attention unquantized in all its
// layers or none, and dense MLPs with the shared experts alike.
Unconverted resolve_unconverted(const ModelArch& m, const std::string& p, ListedModules& listed) {
  auto& [attention_layers, dense_layers, attention_all, dense_all, shared, parts, part_at, shared_layers, shared_at,
         dense_at] = listed;
  Unconverted u;
  const bool out_quantized = resolve_attention_parts(m, parts, part_at, attention_all, attention_layers);
  const int attention = m.count_layers(LayerMixer::Attention);
  if (!attention_all && !attention_layers.empty() && static_cast<int>(attention_layers.size()) < attention)
    fail(error_code::kNotImplemented, p,
         "keeps the attention of " + std::to_string(attention_layers.size()) + " of " + std::to_string(attention) +
             " attention layers unquantized; the engine prices all or none: set precision.weights explicitly");
  u.attention = attention_all || !attention_layers.empty();
  u.attention_out_quantized = out_quantized;
  if (!shared_layers.empty()) {
    if (static_cast<int>(shared_layers.size()) < m.num_moe_layers())
      fail(error_code::kNotImplemented, shared_at,
           "keeps the dense MLP beside the experts unquantized in " + std::to_string(shared_layers.size()) + " of " +
               std::to_string(m.num_moe_layers()) + " MoE layers; the engine prices all or none: set precision.weights explicitly");
    shared = true;
  }
  // Dense MLPs and shared experts are priced together: both unquantized or both not.
  const int dense = m.count_ffn(LayerFfn::Dense);
  const bool has_shared = m.is_moe() && m.moe.shared_intermediate() > 0;
  const bool dense_listed = dense_all || (!dense_layers.empty() && static_cast<int>(dense_layers.size()) >= dense);
  if (!dense_layers.empty() && !dense_all && static_cast<int>(dense_layers.size()) < dense)
    fail(error_code::kNotImplemented, dense_at,
         "keeps the MLP of " + std::to_string(dense_layers.size()) + " of " + std::to_string(dense) +
             " dense layers unquantized; the engine prices all or none: set precision.weights explicitly");
  if (shared || dense_listed) {
    if (has_shared && !shared)
      fail(error_code::kNotImplemented, dense_at,
           "keeps the dense MLPs unquantized but quantizes the shared experts; the engine prices the two alike: set precision.weights explicitly");
    if (dense > 0 && !dense_listed)
      fail(error_code::kNotImplemented, shared_at,
           "keeps the shared experts unquantized but quantizes the dense MLPs; the engine prices the two alike: set precision.weights explicitly");
    u.dense_ffn = true;
  }
  return u;
}

void apply_unconverted(const HfReader& r, const char* key, ModelArch& m) {
  const Unconverted u = read_unconverted_modules(r, key, m);
  m.quant.attention_excluded = u.attention;
  m.quant.attention_out_quantized = u.attention_out_quantized;
  m.quant.dense_ffn_excluded = u.dense_ffn;
}

std::string kept_unquantized(const CheckpointQuant& q) {
  std::string s;
  if (q.attention_excluded) s += q.attention_out_quantized ? "; attention stays bf16 but for o_proj" : "; attention stays bf16";
  if (q.dense_ffn_excluded) s += "; dense MLPs and shared experts stay bf16";
  return s;
}

// One weights scheme of config_groups (compressed-tensors, ModelOpt in
// config.json): every group must describe the same weights, or the checkpoint
// mixes formats the engine cannot price as one.
struct GroupScheme {
  int64_t bits = 0;
  std::string type;
  int64_t group = 0;
  bool symmetric = true;  // compressed-tensors' QuantizationArgs default
};

GroupScheme read_group_scheme(const HfReader& r) {
  GroupScheme s;
  if (!r.has("config_groups")) return s;
  const json& groups = r.at("config_groups");
  if (!groups.is_object()) fail(error_code::kType, r.child("config_groups"), "expected an object of quantization groups");
  bool first = true;
  for (auto it = groups.begin(); it != groups.end(); ++it) {
    const json& g = it.value();
    const std::string gp = pointer_append(r.child("config_groups"), it.key());
    // Each fault at the place it is in the user's file: a group that is not an
    // object at the group, a missing scheme under it, a scheme of the wrong
    // type at the scheme (a 100,000-case aimed fuzz run found the first and
    // last reported at a 'weights' key the file did not have, 2026-11-29).
    if (!g.is_object()) fail(error_code::kType, gp, "expected an object: a quantization group with its 'weights' scheme");
    if (!g.contains("weights"))
      fail(error_code::kMissingKey, pointer_append(gp, "weights"), "each quantization group needs a 'weights' scheme");
    if (!g["weights"].is_object())
      fail(error_code::kType, pointer_append(gp, "weights"), "expected an object: the group's 'weights' scheme");
    const json& w = g["weights"];
    const std::string wp = pointer_append(gp, "weights");
    GroupScheme x;
    if (w.contains("num_bits")) x.bits = read_integer(w["num_bits"], pointer_append(wp, "num_bits"), 1, 32);
    if (w.contains("type") && w["type"].is_string()) x.type = w["type"].get<std::string>();
    if (w.contains("group_size") && !w["group_size"].is_null())
      x.group = read_integer(w["group_size"], pointer_append(wp, "group_size"), 0, 1 << 20);
    if (w.contains("symmetric") && !w["symmetric"].is_null()) {
      if (!w["symmetric"].is_boolean()) fail(error_code::kType, pointer_append(wp, "symmetric"), "expected true or false");
      x.symmetric = w["symmetric"].get<bool>();
    }
    if (first) s = x, first = false;
    else if (x.bits != s.bits || x.type != s.type || x.group != s.group || x.symmetric != s.symmetric)
      fail(error_code::kNotImplemented, wp,
           "this quantization group's weights differ from the first group's; checkpoints that mix weight formats "
           "are not priced: set precision.weights explicitly");
  }
  return s;
}

// kv_cache_scheme (compressed-tensors, ModelOpt in config.json): the KV cache dtype.
std::string read_kv_cache_scheme(const HfReader& r) {
  if (!r.has("kv_cache_scheme")) return "";
  const json& k = r.at("kv_cache_scheme");
  const std::string p = r.child("kv_cache_scheme");
  if (!k.is_object()) fail(error_code::kType, p, "expected an object (num_bits, type)");
  const int64_t bits = k.contains("num_bits") ? read_integer(k["num_bits"], pointer_append(p, "num_bits"), 1, 32) : 0;
  const std::string type = k.contains("type") && k["type"].is_string() ? k["type"].get<std::string>() : "";
  if (bits == 8 && type == "float") return "fp8";
  if (bits == 8 && type == "int") return "int8";
  fail(error_code::kInvalidValue, p,
       "kv_cache_scheme with " + std::to_string(bits) + "-bit '" + printable(type) +
           "' values is not priced (8-bit float or int); set precision.kv_cache explicitly");
}

void read_compressed_tensors(const HfReader& r, ModelArch& m) {
  CheckpointQuant& cq = m.quant;
  const std::string format = lower(r.string_or("format", ""));
  const GroupScheme s = read_group_scheme(r);
  if (format.find("nvfp4") != std::string::npos || (s.bits == 4 && s.type == "float")) cq.weights_dtype = "nvfp4";
  else if (s.bits == 8 && s.type == "float") cq.weights_dtype = "fp8";
  else if (s.bits == 8) cq.weights_dtype = "int8";
  else if (s.bits == 4) cq.weights_dtype = "int4";
  else
    fail(error_code::kInvalidValue, r.child("config_groups"),
         "compressed-tensors scheme not understood (need weights num_bits 4 or 8); set precision.weights explicitly");
  if (cq.weights_dtype == "int4" || cq.weights_dtype == "int8") {
    cq.group_size = static_cast<int>(s.group);
    cq.zero_point = !s.symmetric;
  }
  cq.kv_cache_dtype = read_kv_cache_scheme(r);
  apply_unconverted(r, "ignore", m);
  cq.applied = "compressed-tensors " + cq.weights_dtype + " weights" +
               (cq.group_size > 0 ? ", groups of " + std::to_string(cq.group_size) + (cq.zero_point ? " with zero points" : ", symmetric (scales only)") : "") +
               (cq.kv_cache_dtype.empty() ? "" : ", " + cq.kv_cache_dtype + " KV cache") + kept_unquantized(cq);
}

// ModelOpt's own block inside config.json: quant_algo, with config_groups
// restating it, an ignore list and kv_cache_scheme (or kv_cache_quant_algo).
void read_modelopt_block(const HfReader& r, ModelArch& m) {
  CheckpointQuant& cq = m.quant;
  if (!r.has("quant_algo"))
    fail(error_code::kMissingKey, r.child("quant_algo"), "a ModelOpt quantization_config without 'quant_algo'; set precision.weights explicitly");
  const std::string algo = lower(r.string_or("quant_algo", ""));
  if (algo == "fp8") cq.weights_dtype = "fp8";
  else if (algo == "nvfp4") cq.weights_dtype = "nvfp4";
  else
    fail(error_code::kInvalidValue, r.child("quant_algo"),
         "ModelOpt quant_algo '" + printable(algo) + "' not understood (FP8, NVFP4); set precision.weights explicitly");
  const GroupScheme s = read_group_scheme(r);
  const bool agrees = s.bits == 0 || (algo == "nvfp4" ? s.bits == 4 && s.type == "float" && s.group == 16
                                                      : s.bits == 8 && s.type == "float");
  if (!agrees)
    fail(error_code::kConstraint, r.child("config_groups"), "config_groups describe other weights than quant_algo '" + printable(algo) + "'");
  const std::string kv = lower(r.string_or("kv_cache_quant_algo", ""));
  if (kv == "fp8") cq.kv_cache_dtype = "fp8";
  else if (!kv.empty())
    fail(error_code::kInvalidValue, r.child("kv_cache_quant_algo"),
         "ModelOpt kv_cache_quant_algo '" + printable(kv) + "' not understood (FP8); set precision.kv_cache explicitly");
  const std::string scheme_kv = read_kv_cache_scheme(r);
  if (!scheme_kv.empty() && !cq.kv_cache_dtype.empty() && scheme_kv != cq.kv_cache_dtype)
    fail(error_code::kConstraint, r.child("kv_cache_scheme"), "kv_cache_scheme disagrees with kv_cache_quant_algo");
  if (!scheme_kv.empty()) cq.kv_cache_dtype = scheme_kv;
  apply_unconverted(r, "ignore", m);
  r.neutral("producer", "the quantizer's name and version (metadata)");
  cq.applied = "ModelOpt " + cq.weights_dtype + " weights" + (cq.kv_cache_dtype.empty() ? "" : ", " + cq.kv_cache_dtype + " KV cache") +
               kept_unquantized(cq);
}

}  // namespace

// quantization_config (inside config.json) as the engine's weight format.
void read_quantization_config(const json& q, const std::string& path, ModelArch& m) {
  HfReader r(q, path);
  const std::string method = lower(r.string_or("quant_method", ""));
  if (method.empty())
    fail(error_code::kMissingKey, r.child("quant_method"),
         "quantization_config has no 'quant_method'; remove quantization_config and set precision.weights instead");
  CheckpointQuant& cq = m.quant;
  cq.method = method;
  if (method == "fp8") {
    cq.weights_dtype = "fp8";
    std::string block;
    if (r.has("weight_block_size") && r.at("weight_block_size").is_array() && r.at("weight_block_size").size() == 2) {
      const json& b = r.at("weight_block_size");
      block = " block-wise " + std::to_string(read_integer(b[0], pointer_append(r.child("weight_block_size"), 0), 1, 1 << 20)) + "x" +
              std::to_string(read_integer(b[1], pointer_append(r.child("weight_block_size"), 1), 1, 1 << 20));
    }
    apply_unconverted(r, "modules_to_not_convert", m);
    cq.applied = "fp8" + block + " weights (quantization_config, fp32 block scales are negligible); embeddings and lm_head in bf16" +
                 kept_unquantized(cq);
  } else if (method == "mxfp4") {
    cq.weights_dtype = "mxfp4";
    apply_unconverted(r, "modules_to_not_convert", m);
    cq.applied = std::string("mxfp4 expert and MLP weights (e2m1 + one e8m0 scale per 32)") +
                 (cq.attention_excluded ? "; attention, router, embeddings and lm_head stay bf16" : "") +
                 (cq.dense_ffn_excluded ? "; dense MLPs and shared experts stay bf16" : "");
  } else if (method == "awq" || method == "gptq") {
    const int64_t bits = r.integer_or({"bits", "w_bit"}, 2, 8, 4);
    if (bits != 4 && bits != 8)
      fail(error_code::kInvalidValue, r.child("bits"), "only 4- and 8-bit " + method + " checkpoints are priced; set precision.weights");
    cq.weights_dtype = bits == 4 ? "int4" : "int8";
    cq.group_size = static_cast<int>(r.integer_or({"group_size", "q_group_size"}, -1, 1 << 20, 128));
    if (cq.group_size < 0) cq.group_size = 0;  // -1: per-channel
    // AWQ says whether its groups carry zero points; GPTQ stores them (qzeros) even when symmetric.
    if (method == "awq") cq.zero_point = r.boolean_or("zero_point", true);
    else r.mark("sym");
    apply_unconverted(r, "modules_to_not_convert", m);
    cq.applied = method + " int" + std::to_string(bits) + " weight-only, group size " + std::to_string(cq.group_size) +
                 (cq.zero_point ? "" : ", no zero points") + "; embeddings and lm_head in bf16" + kept_unquantized(cq);
  } else if (method == "compressed-tensors" || method == "compressed_tensors") {
    read_compressed_tensors(r, m);
  } else if (method == "modelopt") {
    read_modelopt_block(r, m);
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
  apply_unconverted(r, "exclude_modules", m);
  if (m.quant.weights_dtype == "int4") {
    m.quant.group_size = static_cast<int>(r.integer_or({"group_size"}, 1, 1 << 20, 128));
  } else if (r.has("group_size")) {
    // NVFP4 stores one fp8 scale per 16 values (the nvfp4 dtype's bytes); every ModelOpt NVFP4
    // hf_quant_config.json says group_size 16. Another size, or a group size on FP8 (per-tensor
    // scales), is not that format.
    const int64_t g = read_integer(r.at("group_size"), r.child("group_size"), 1, 1 << 20);
    if (m.quant.weights_dtype != "nvfp4" || g != 16)
      fail(error_code::kConstraint, r.child("group_size"),
           "group_size " + std::to_string(g) + " with quant_algo '" + printable(algo) +
               "': NVFP4 scales every 16 values and FP8 has no groups; this checkpoint's format is not priced: set precision.weights explicitly");
  }
  account_for_keys(r, "hf_quant_config.quantization.", true, m);
  m.quant.method = "modelopt";
  m.quant.applied = "ModelOpt hf_quant_config: " + m.quant.weights_dtype + " weights" +
                    (m.quant.kv_cache_dtype.empty() ? "" : ", fp8 KV cache") + "; lm_head in bf16" + kept_unquantized(m.quant);
}

}  // namespace sightline
