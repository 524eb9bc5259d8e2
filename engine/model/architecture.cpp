#include "model/architecture.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "presets/preset_store.hpp"

namespace sightline {

namespace {

constexpr int64_t kMaxVocab = 4 << 20;
constexpr int kMaxLayers = 4096;
constexpr int kMaxHeads = 4096;

const std::vector<std::string> kArchKeys = {
    "id", "name", "source", "num_layers", "hidden_size", "num_heads", "num_kv_heads", "head_dim",
    "intermediate_size", "vocab_size", "max_context", "gated_mlp", "activation", "norm",
    "position_embedding", "tied_embeddings", "attention_bias", "qkv_bias", "mlp_bias",
    "parallel_attn_mlp", "moe", "mla", "layers", "linear_attention", "ssm", "attention_sinks", "qk_norm",
    "attention_output_gate", "norms_per_layer", "dense_intermediate_size", "mtp_layers", "quantization_config", "state_dtype",
    "qk_norm_per_layer", "sparse_attention"};

MoeSpec read_moe(const json& v, const std::string& path) {
  ObjectReader r(v, path, {"num_experts", "top_k", "num_shared_experts", "expert_intermediate_size",
                           "first_dense_layers", "layer_step", "shared_intermediate_size", "expert_bias", "router_bias",
                           "latent_size", "shared_expert_gate"});
  MoeSpec m;
  m.num_experts = static_cast<int>(r.integer("num_experts", 1, 65536));
  m.top_k = static_cast<int>(r.integer("top_k", 1, 65536));
  m.num_shared_experts = static_cast<int>(r.integer("num_shared_experts", 0, 1024, 0));
  m.expert_intermediate_size = r.integer("expert_intermediate_size", 1, kMaxModelDim);
  m.first_dense_layers = static_cast<int>(r.integer("first_dense_layers", 0, kMaxLayers, 0));
  m.layer_step = static_cast<int>(r.integer("layer_step", 1, kMaxLayers, 1));
  m.shared_intermediate_size = r.integer("shared_intermediate_size", 0, kMaxModelDim, 0);
  m.expert_bias = r.boolean("expert_bias", false);
  m.router_bias = r.boolean("router_bias", false);
  m.latent_size = r.integer("latent_size", 0, kMaxModelDim, 0);
  m.shared_expert_gate = r.boolean("shared_expert_gate", true);
  return m;
}

SparseIndexSpec read_sparse_index(const json& v, const std::string& path) {
  ObjectReader r(v, path, {"index_topk", "index_heads", "index_head_dim"});
  SparseIndexSpec s;
  s.topk = r.integer("index_topk", 1, kMaxModelContext);
  s.heads = static_cast<int>(r.integer("index_heads", 1, kMaxHeads));
  s.head_dim = r.integer("index_head_dim", 1, 4096);
  return s;
}

MlaSpec read_mla(const json& v, const std::string& path) {
  ObjectReader r(v, path, {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
  MlaSpec m;
  m.enabled = true;
  m.q_lora_rank = r.integer("q_lora_rank", 0, kMaxModelDim, 0);
  m.kv_lora_rank = r.integer("kv_lora_rank", 1, kMaxModelDim);
  m.qk_nope_head_dim = r.integer("qk_nope_head_dim", 1, 4096);
  m.qk_rope_head_dim = r.integer("qk_rope_head_dim", 0, 4096);
  m.v_head_dim = r.integer("v_head_dim", 1, 4096);
  return m;
}

LinearAttentionSpec read_linear_attention(const json& v, const std::string& path) {
  ObjectReader r(v, path, {"num_key_heads", "num_value_heads", "key_head_dim", "value_head_dim", "conv_kernel"});
  LinearAttentionSpec l;
  l.num_key_heads = static_cast<int>(r.integer("num_key_heads", 1, kMaxHeads));
  l.num_value_heads = static_cast<int>(r.integer("num_value_heads", 1, kMaxHeads));
  l.key_head_dim = r.integer("key_head_dim", 1, 4096);
  l.value_head_dim = r.integer("value_head_dim", 1, 4096);
  l.conv_kernel = static_cast<int>(r.integer("conv_kernel", 1, 64, 4));
  return l;
}

SsmSpec read_ssm(const json& v, const std::string& path) {
  ObjectReader r(v, path, {"version", "num_heads", "head_dim", "inner_size", "state_size", "n_groups", "conv_kernel",
                           "dt_rank"});
  SsmSpec s;
  s.version = static_cast<int>(r.integer("version", 1, 2, 2));
  s.state_size = r.integer("state_size", 1, 65536);
  s.conv_kernel = static_cast<int>(r.integer("conv_kernel", 1, 64, 4));
  s.n_groups = static_cast<int>(r.integer("n_groups", 1, kMaxHeads, 1));
  if (s.version == 2) {
    s.num_heads = static_cast<int>(r.integer("num_heads", 1, 65536));
    s.head_dim = r.integer("head_dim", 1, 4096);
    s.inner_size = r.integer("inner_size", 1, kMaxModelDim, s.num_heads * s.head_dim);
  } else {
    s.inner_size = r.integer("inner_size", 1, kMaxModelDim);
    s.dt_rank = r.integer("dt_rank", 1, kMaxModelDim);
  }
  return s;
}

// A layer run's own attention head shape ("attention_shape"): every field given.
AttentionShape read_attention_shape(const json& v, const std::string& path) {
  ObjectReader r(v, path, {"heads", "kv_heads", "qk_head_dim", "v_head_dim", "k_eq_v", "sinks"});
  AttentionShape a;
  a.heads = static_cast<int>(r.integer("heads", 1, kMaxHeads));
  a.kv_heads = static_cast<int>(r.integer("kv_heads", 1, kMaxHeads));
  a.qk_head_dim = r.integer("qk_head_dim", 1, 4096);
  a.v_head_dim = r.integer("v_head_dim", 1, 4096, a.qk_head_dim);
  a.k_eq_v = r.boolean("k_eq_v", false);
  a.sinks = r.boolean("sinks", false);
  if (a.heads % a.kv_heads != 0)
    fail(error_code::kConstraint, r.child_path("kv_heads"),
         "heads (" + std::to_string(a.heads) + ") must be a multiple of kv_heads (" + std::to_string(a.kv_heads) + ")");
  return a;
}

// "layers": runs of identical layers in order, e.g.
// [{"count": 1, "mixer": "attention", "window": 128, "ffn": "moe"}, ...].
std::vector<ModelLayer> read_layer_runs(const json& v, const std::string& path) {
  if (!v.is_array()) fail(error_code::kType, path, "expected an array of layer runs, got " + json_type_name(v));
  std::vector<ModelLayer> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string p = pointer_append(path, i);
    ObjectReader r(v[i], p, {"count", "mixer", "window", "chunk", "rope", "indexer", "ffn", "attention_shape", "ffn_intermediate"});
    const int64_t count = r.integer("count", 1, kMaxLayers, 1);
    ModelLayer k;
    const std::string mixer = r.choice("mixer", {"attention", "linear_attention", "mamba", "none"}, "attention");
    k.mixer = mixer == "attention" ? LayerMixer::Attention
              : mixer == "linear_attention" ? LayerMixer::LinearAttention
              : mixer == "mamba" ? LayerMixer::Mamba : LayerMixer::None;
    k.window = r.integer("window", 0, kMaxModelContext, 0);
    k.chunk = r.integer("chunk", 0, kMaxModelContext, 0);
    k.rope = r.boolean("rope", true);
    k.indexer = r.boolean("indexer", false);
    if (k.indexer && k.mixer != LayerMixer::Attention)
      fail(error_code::kConstraint, r.child_path("indexer"), "a sparse-attention indexer belongs to attention layers only");
    const std::string ffn = r.choice("ffn", {"dense", "moe", "none"}, "dense");
    k.ffn = ffn == "dense" ? LayerFfn::Dense : ffn == "moe" ? LayerFfn::Moe : LayerFfn::None;
    if (k.mixer != LayerMixer::Attention && (k.window > 0 || k.chunk > 0))
      fail(error_code::kConstraint, r.child_path("window"), "window and chunk apply to attention layers only");
    if (k.window > 0 && k.chunk > 0)
      fail(error_code::kConstraint, r.child_path("chunk"), "a layer has a sliding window or chunks, not both");
    if (const json* shape = r.nullable("attention_shape")) {
      if (k.mixer != LayerMixer::Attention)
        fail(error_code::kConstraint, r.child_path("attention_shape"), "an attention shape belongs to attention layers only");
      k.shape = read_attention_shape(*shape, r.child_path("attention_shape"));
    }
    // This run's own dense MLP width (Nemotron-NAS blocks); absent: the model's.
    k.ffn_intermediate = r.integer("ffn_intermediate", 1, kMaxModelDim, 0);
    if (k.ffn_intermediate > 0 && k.ffn != LayerFfn::Dense)
      fail(error_code::kConstraint, r.child_path("ffn_intermediate"), "a dense MLP width belongs to layers whose ffn is dense");
    if (out.size() + static_cast<size_t>(count) > static_cast<size_t>(kMaxLayers))
      fail(error_code::kRange, r.child_path("count"), "more than " + std::to_string(kMaxLayers) + " layers");
    out.insert(out.end(), static_cast<size_t>(count), k);
  }
  return out;
}

}  // namespace

std::string layer_mixer_name(LayerMixer k) {
  switch (k) {
    case LayerMixer::Attention: return "attention";
    case LayerMixer::LinearAttention: return "linear_attention";
    case LayerMixer::Mamba: return "mamba";
    case LayerMixer::None: return "none";
  }
  return "?";
}

std::string layer_ffn_name(LayerFfn k) {
  switch (k) {
    case LayerFfn::Dense: return "dense";
    case LayerFfn::Moe: return "moe";
    case LayerFfn::None: return "none";
  }
  return "?";
}


ModelArch read_model_architecture(const json& value, const std::string& path) {
  ObjectReader r(value, path, kArchKeys);
  ModelArch m;
  m.id = r.string("id", "custom");
  m.name = r.string("name", m.id);
  m.source = r.string("source", "user-supplied architecture");
  m.num_layers = static_cast<int>(r.integer("num_layers", 1, kMaxLayers));
  m.hidden_size = r.integer("hidden_size", 1, kMaxModelDim);
  m.num_heads = static_cast<int>(r.integer("num_heads", 1, kMaxHeads));
  m.num_kv_heads = static_cast<int>(r.integer("num_kv_heads", 1, kMaxHeads, m.num_heads));
  bool head_dim_given = r.has("head_dim");
  m.head_dim = r.integer("head_dim", 1, 4096, m.hidden_size / m.num_heads);
  m.intermediate_size = r.integer("intermediate_size", 1, kMaxModelDim);
  m.vocab_size = r.integer("vocab_size", 1, kMaxVocab);
  m.max_context = r.integer("max_context", 1, kMaxModelContext);
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
  if (const json* la = r.nullable("linear_attention"))
    m.linear_attention = read_linear_attention(*la, r.child_path("linear_attention"));
  if (const json* ssm = r.nullable("ssm")) m.ssm = read_ssm(*ssm, r.child_path("ssm"));
  if (const json* si = r.nullable("sparse_attention")) m.sparse_index = read_sparse_index(*si, r.child_path("sparse_attention"));
  m.attention_sinks = r.boolean("attention_sinks", false);
  m.qk_norm = r.boolean("qk_norm", false);
  m.qk_norm_per_layer = r.boolean("qk_norm_per_layer", false);
  if (m.qk_norm_per_layer && !m.qk_norm)
    fail(error_code::kConstraint, r.child_path("qk_norm_per_layer"), "qk_norm_per_layer needs qk_norm true");
  m.attention_output_gate = r.boolean("attention_output_gate", false);
  m.norms_per_layer = static_cast<int>(r.integer("norms_per_layer", 1, 8, 2));
  m.dense_intermediate_size = r.integer("dense_intermediate_size", 0, kMaxModelDim, 0);
  m.mtp_layers = static_cast<int>(r.integer("mtp_layers", 0, 64, 0));
  m.state_dtype = r.string("state_dtype", "");
  if (!m.state_dtype.empty() && m.state_dtype != "fp32" && m.state_dtype != "bf16" && m.state_dtype != "fp16")
    fail(error_code::kInvalidValue, r.child_path("state_dtype"), "state_dtype must be fp32, bf16 or fp16 (or absent: the activation dtype)");
  if (const json* layers = r.nullable("layers")) {
    m.layers = read_layer_runs(*layers, r.child_path("layers"));
    if (static_cast<int>(m.layers.size()) != m.num_layers)
      fail(error_code::kConstraint, r.child_path("layers"),
           "the layer runs count " + std::to_string(m.layers.size()) + " layers but num_layers is " +
               std::to_string(m.num_layers));
  }
  if (!head_dim_given && m.hidden_size % m.num_heads != 0)
    fail(error_code::kConstraint, r.child_path("num_heads"),
         "hidden_size (" + std::to_string(m.hidden_size) + ") is not divisible by num_heads (" +
             std::to_string(m.num_heads) + "); give head_dim explicitly");
  finalize_layers(m);
  check_model(m, path);
  // The checkpoint's own weight format (gpt-oss ships MXFP4): the default a
  // scenario's precision overrides, as for an imported config.json.
  if (const json* q = r.find("quantization_config"))
    read_checkpoint_quantization(*q, r.child_path("quantization_config"), m);
  return m;
}

namespace {

// A layer's own head shape: whole, GQA-consistent, and not beside MLA (whose
// latent cache has no per-head shape to vary).
void check_attention_shape(const ModelArch& m, const ModelLayer& k, const std::string& path) {
  const AttentionShape& a = k.shape;
  if (k.mixer != LayerMixer::Attention)
    fail(error_code::kConstraint, path, "an attention shape belongs to attention layers only");
  if (m.mla.enabled)
    fail(error_code::kConstraint, path, "per-layer attention shapes are not priced beside multi-head latent attention (mla)");
  if (a.heads <= 0 || a.kv_heads <= 0 || a.qk_head_dim <= 0 || a.v_head_dim <= 0)
    fail(error_code::kConstraint, path, "an attention shape needs positive heads, kv_heads, qk_head_dim and v_head_dim");
  if (a.heads % a.kv_heads != 0)
    fail(error_code::kConstraint, pointer_append(path, "kv_heads"),
         "heads (" + std::to_string(a.heads) + ") must be a multiple of kv_heads (" + std::to_string(a.kv_heads) + ")");
  if (a.k_eq_v && a.qk_head_dim != a.v_head_dim)
    fail(error_code::kConstraint, pointer_append(path, "k_eq_v"), "values taken from the keys (k_eq_v) need v_head_dim equal to qk_head_dim");
}

}  // namespace

// The checks every model form passes (a preset, an inline architecture, a
// pasted Hugging Face config.json): the readers only check each key's range.
void check_model(const ModelArch& m, const std::string& path) {
  const auto str = [](int64_t v) { return std::to_string(v); };
  const std::string moe_path = pointer_append(path, "moe");
  if (m.head_dim <= 0)
    fail(error_code::kConstraint, pointer_append(path, "head_dim"), "head_dim must be positive (got " + str(m.head_dim) + ")");
  if (m.num_kv_heads <= 0 || m.num_heads <= 0)
    fail(error_code::kConstraint, pointer_append(path, "num_heads"), "num_heads and num_kv_heads must be positive");
  if (m.num_heads % m.num_kv_heads != 0)
    fail(error_code::kConstraint, pointer_append(path, "num_kv_heads"),
         "num_heads (" + std::to_string(m.num_heads) + ") must be a multiple of num_kv_heads (" +
             std::to_string(m.num_kv_heads) + ")");
  if (m.is_moe() && m.moe.first_dense_layers >= m.num_layers)
    fail(error_code::kConstraint, pointer_append(moe_path, "first_dense_layers"),
         "first_dense_layers must be smaller than num_layers (" + std::to_string(m.num_layers) + ")");
  if (m.is_moe() && (m.moe.top_k < 1 || m.moe.top_k > m.moe.num_experts))
    fail(error_code::kConstraint, pointer_append(moe_path, "top_k"),
         "top_k (" + str(m.moe.top_k) + ") must be between 1 and num_experts (" + str(m.moe.num_experts) + ")");
  if (m.is_moe() && m.moe.expert_intermediate_size <= 0)
    fail(error_code::kConstraint, pointer_append(moe_path, "expert_intermediate_size"), "must be positive");
  if (!m.layers.empty() && static_cast<int>(m.layers.size()) != m.num_layers)
    fail(error_code::kConstraint, pointer_append(path, "layers"), "one layer kind per layer is needed");
  int attention = 0;
  for (int i = 0; i < m.num_layers; ++i) {
    const ModelLayer k = m.layer_kind(i);
    const std::string lp = pointer_append(pointer_append(path, "layers"), static_cast<size_t>(i));
    if (k.ffn == LayerFfn::Moe && !m.is_moe())
      fail(error_code::kConstraint, lp, "layer " + str(i) + " is an MoE layer but the model has no 'moe' experts");
    if (k.mixer == LayerMixer::LinearAttention && m.linear_attention.num_value_heads <= 0)
      fail(error_code::kMissingKey, pointer_append(path, "linear_attention"),
           "layer " + str(i) + " is linear attention: give linear_attention heads and head dims");
    if (k.mixer == LayerMixer::Mamba && (m.ssm.state_size <= 0 || m.ssm.inner_size <= 0))
      fail(error_code::kMissingKey, pointer_append(path, "ssm"),
           "layer " + str(i) + " is a Mamba layer: give ssm state_size and inner_size (or heads × head_dim)");
    if (k.indexer && !m.sparse_index.enabled())
      fail(error_code::kMissingKey, pointer_append(path, "sparse_attention"),
           "layer " + str(i) + " uses a sparse-attention indexer: give sparse_attention index_topk, index_heads and index_head_dim");
    if (k.mixer == LayerMixer::None && k.ffn == LayerFfn::None)
      fail(error_code::kConstraint, lp, "layer " + str(i) + " has neither a mixer nor an MLP");
    if (k.shape.given()) check_attention_shape(m, k, pointer_append(lp, "attention_shape"));
    attention += k.mixer == LayerMixer::Attention ? 1 : 0;
  }
  if (m.linear_attention.num_value_heads > 0 && m.linear_attention.num_key_heads > 0 &&
      m.linear_attention.num_value_heads % m.linear_attention.num_key_heads != 0)
    fail(error_code::kConstraint, pointer_append(pointer_append(path, "linear_attention"), "num_value_heads"),
         "num_value_heads must be a multiple of num_key_heads");
  if (m.ssm.version == 2 && m.ssm.num_heads > 0 && m.ssm.n_groups > 0 && m.ssm.num_heads % m.ssm.n_groups != 0)
    fail(error_code::kConstraint, pointer_append(pointer_append(path, "ssm"), "n_groups"),
         "the Mamba-2 heads (" + str(m.ssm.num_heads) + ") must be a multiple of n_groups (" + str(m.ssm.n_groups) + ")");
  (void)attention;
  // Sizes whose products would overflow the int64 parameter count (4,096
  // layers of 1,024 experts 1M wide) are refused here, located at the model.
  // A generous upper bound in double: every weight matrix of a layer is at most
  // D x D for D the largest dimension, and a layer holds at most 32 matrices
  // per expert (plus the shared ones); below 2^62 no product in param_count
  // can overflow.
  {
    double d = 1;
    for (double x : {static_cast<double>(m.hidden_size), static_cast<double>(m.intermediate_size),
                     static_cast<double>(m.dense_intermediate_size), static_cast<double>(m.moe.expert_intermediate_size),
                     static_cast<double>(m.moe.shared_intermediate_size), static_cast<double>(m.num_heads) * m.head_dim,
                     static_cast<double>(m.num_kv_heads) * m.head_dim,
                     static_cast<double>(m.num_heads) * (m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim + m.mla.v_head_dim),
                     static_cast<double>(m.mla.q_lora_rank), static_cast<double>(m.mla.kv_lora_rank),
                     static_cast<double>(m.linear_attention.num_key_heads) * m.linear_attention.key_head_dim,
                     static_cast<double>(m.linear_attention.num_value_heads) * m.linear_attention.value_head_dim,
                     static_cast<double>(m.ssm.inner_size), 2.0 * m.ssm.n_groups * m.ssm.state_size,
                     static_cast<double>(m.ssm.dt_rank), static_cast<double>(m.ssm.state_size),
                     static_cast<double>(m.moe.latent_size), static_cast<double>(m.sparse_index.heads) * m.sparse_index.head_dim})
      d = std::max(d, x);
    for (const ModelLayer& k : m.layers) {  // per-layer head shapes (at most 4096 x 4096 each) and MLP widths
      d = std::max(d, static_cast<double>(k.shape.heads) * static_cast<double>(std::max(k.shape.qk_head_dim, k.shape.v_head_dim)));
      d = std::max(d, static_cast<double>(k.ffn_intermediate));
    }
    const double per_layer = 32.0 * (std::max(0, m.moe.num_experts) + std::max(0, m.moe.num_shared_experts) + 1) * d * d;
    const double bound = (m.num_layers + std::max(0, m.mtp_layers) + 1.0) * per_layer +
                         2.0 * (static_cast<double>(m.vocab_size) + static_cast<double>(m.max_context)) * m.hidden_size;
    if (!(bound < 4.6e18))
      fail(error_code::kRange, path,
           "the model's sizes are too large: its parameter count could pass 2^62 (the largest dimension is " +
               std::to_string(static_cast<int64_t>(d)) + ", with " + std::to_string(m.num_layers) + " layers and " +
               std::to_string(m.moe.num_experts) + " experts)");
  }
}

namespace {

// {"hf_config": {...}, "hf_quant_config": {...}} as a user pastes it, or a
// preset that ships a published config with its id, name and source.
ModelArch read_hf_model(const json& value, const std::string& path, bool preset) {
  std::vector<std::string> keys = {"hf_config", "hf_quant_config"};
  if (preset) keys.insert(keys.end(), {"id", "name", "source", "hf_config_source"});
  ObjectReader r(value, path, keys);
  ModelArch m = read_hf_config(r.required("hf_config"), r.child_path("hf_config"));
  if (const json* q = r.find("hf_quant_config")) apply_modelopt_quant(m, *q, r.child_path("hf_quant_config"));
  if (preset) {
    m.id = r.string("id");
    m.name = r.string("name", m.id);
    m.source = r.string("source");
  }
  return m;
}

}  // namespace

ModelArch read_model(const json& value, const std::string& path) {
  if (value.is_string()) {
    const json& preset = require_preset("models", value.get<std::string>(), path);
    if (preset.contains("hf_config")) return read_hf_model(preset, path, true);
    return read_model_architecture(preset, path);
  }
  require_object(value, path);
  if (value.contains("hf_config")) return read_hf_model(value, path, false);
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
  if (is_moe()) {
    j["moe"]["layer_step"] = moe.layer_step;
    j["moe"]["shared_intermediate_size"] = moe.shared_intermediate_size;
    j["moe"]["expert_bias"] = moe.expert_bias;
    if (moe.router_bias) j["moe"]["router_bias"] = true;  // written only when set: presets' output unchanged
    if (moe.latent_size > 0) j["moe"]["latent_size"] = moe.latent_size;
    if (!moe.shared_expert_gate) j["moe"]["shared_expert_gate"] = false;  // written only when off
  }
  // Layer kinds as runs of identical consecutive layers.
  json runs = json::array();
  for (int i = 0; i < num_layers; ++i) {
    const ModelLayer k = layer_kind(i);
    if (i > 0 && k == layer_kind(i - 1)) {
      runs.back()["count"] = runs.back()["count"].get<int>() + 1;
      continue;
    }
    json r = {{"count", 1}, {"mixer", layer_mixer_name(k.mixer)}, {"ffn", layer_ffn_name(k.ffn)}};
    if (k.window > 0) r["window"] = k.window;
    if (k.chunk > 0) r["chunk"] = k.chunk;
    if (!k.rope) r["rope"] = false;
    if (k.indexer) r["indexer"] = true;
    if (k.shape.given())  // written only when given: presets' output unchanged
      r["attention_shape"] = {{"heads", k.shape.heads}, {"kv_heads", k.shape.kv_heads}, {"qk_head_dim", k.shape.qk_head_dim},
                              {"v_head_dim", k.shape.v_head_dim}, {"k_eq_v", k.shape.k_eq_v}, {"sinks", k.shape.sinks}};
    if (k.ffn_intermediate > 0) r["ffn_intermediate"] = k.ffn_intermediate;  // written only when given, as the shape
    runs.push_back(r);
  }
  j["layers"] = runs;
  j["linear_attention"] = linear_attention.num_value_heads > 0
                              ? json{{"num_key_heads", linear_attention.num_key_heads},
                                     {"num_value_heads", linear_attention.num_value_heads},
                                     {"key_head_dim", linear_attention.key_head_dim},
                                     {"value_head_dim", linear_attention.value_head_dim},
                                     {"conv_kernel", linear_attention.conv_kernel}}
                              : json(nullptr);
  if (ssm.state_size > 0) {
    json s = {{"version", ssm.version}, {"inner_size", ssm.inner_size}, {"state_size", ssm.state_size},
              {"n_groups", ssm.n_groups}, {"conv_kernel", ssm.conv_kernel}};
    if (ssm.version == 2) s["num_heads"] = ssm.num_heads, s["head_dim"] = ssm.head_dim;
    else s["dt_rank"] = ssm.dt_rank;
    j["ssm"] = s;
  } else {
    j["ssm"] = nullptr;
  }
  j["attention_sinks"] = attention_sinks;
  j["qk_norm"] = qk_norm;
  if (qk_norm_per_layer) j["qk_norm_per_layer"] = true;
  j["attention_output_gate"] = attention_output_gate;
  j["norms_per_layer"] = norms_per_layer;
  j["dense_intermediate_size"] = dense_intermediate_size;
  j["mtp_layers"] = mtp_layers;
  if (!state_dtype.empty()) j["state_dtype"] = state_dtype;
  if (sparse_index.enabled())
    j["sparse_attention"] = {{"index_topk", sparse_index.topk}, {"index_heads", sparse_index.heads},
                             {"index_head_dim", sparse_index.head_dim}};
  return j;
}

}  // namespace sightline
