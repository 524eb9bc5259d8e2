// One reader per Hugging Face model family (model_type): the keys each family
// names its dimensions by, its layer pattern (windows, MoE placement, hybrid
// mixers) and its defaults. read_family dispatches on the type.
#include <algorithm>
#include <set>

#include "model/hf_reader.hpp"

namespace sightline::hf {

// MoE layer placement: first_k_dense_replace / moe_layer_freq (DeepSeek, GLM),
// decoder_sparse_step / mlp_only_layers (Qwen-MoE). moe_layer_freq may also be
// a list with one 0 (dense) or 1 (MoE) per layer (MiMo-V2 writes it so).
void place_moe_layers(const HfReader& r, ModelArch& m) {
  m.moe.first_dense_layers = static_cast<int>(r.integer_or({"first_k_dense_replace"}, 0, 4096, 0));
  if (r.has("moe_layer_freq") && r.at("moe_layer_freq").is_array()) {
    const json& a = r.at("moe_layer_freq");
    const std::string p = r.child("moe_layer_freq");
    if (static_cast<int>(a.size()) != m.num_layers)
      fail(error_code::kConstraint, p, "moe_layer_freq lists " + std::to_string(a.size()) + " layers but num_hidden_layers is " +
                                          std::to_string(m.num_layers));
    if (r.has("first_k_dense_replace") || r.has("decoder_sparse_step") || r.has("mlp_only_layers"))
      fail(error_code::kConstraint, p, "a per-layer moe_layer_freq list with another placement key: which one holds is not guessed");
    int first_moe = m.num_layers;
    for (int i = 0; i < m.num_layers; ++i) {
      const bool moe = read_integer(a[static_cast<size_t>(i)], pointer_append(p, static_cast<size_t>(i)), 0, 1) == 1;
      m.layers[static_cast<size_t>(i)].ffn = moe ? LayerFfn::Moe : LayerFfn::Dense;
      if (moe && first_moe == m.num_layers) first_moe = i;
    }
    if (first_moe == m.num_layers) fail(error_code::kConstraint, p, "moe_layer_freq marks no layer as MoE (1)");
    m.moe.first_dense_layers = first_moe;  // the leading dense run, as the architecture object records it
    return;
  }
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

// The dtype a recurrent state is kept in, when the config names it
// ("float32": 4 bytes per element); "" (the activation dtype) when it does not.
std::string read_state_dtype(const HfReader& r, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    if (!r.has(k)) continue;
    const std::string v = r.string_or(k, "");
    if (v == "float32") return "fp32";
    if (v == "bfloat16") return "bf16";
    if (v == "float16") return "fp16";
    fail(error_code::kInvalidValue, r.child(k),
         "state dtype '" + printable(v) + "' not understood (float32, bfloat16, float16)");
  }
  return "";
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
// family switches it off (Qwen's use_sliding_window); with use_sliding_window on,
// Qwen's layers from max_window_layers on are windowed (transformers' rule).
void uniform_window(const HfReader& r, ModelArch& m, bool qwen_switch = true) {
  const bool switchable = qwen_switch && r.has("use_sliding_window");
  if (switchable) r.mark("max_window_layers");  // understood: it only matters with windows on
  if (switchable && !r.boolean_or("use_sliding_window", false)) return;
  if (!r.has("sliding_window")) {
    if (switchable)
      fail(error_code::kMissingKey, r.child("sliding_window"), "use_sliding_window is true but the config has no 'sliding_window'");
    return;
  }
  const int64_t w = read_integer(r.at("sliding_window"), r.child("sliding_window"), 1, kMaxModelContext);
  if (w >= m.max_context) return;  // a window as long as the context caps nothing
  const int64_t first = switchable && r.has("max_window_layers")
                            ? read_integer(r.at("max_window_layers"), r.child("max_window_layers"), 0, 4096)
                            : 0;
  for (int i = 0; i < m.num_layers; ++i)
    if (i >= first) m.layers[static_cast<size_t>(i)].window = w;
}

void read_gpt2(const HfReader& r, ModelArch& m) {
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
}

void read_falcon(const HfReader& r, ModelArch& m) {
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
  const bool parallel = r.boolean_or("parallel_attn", true);  // read either way: the new architecture is parallel
  m.parallel_attn_mlp = new_arch || parallel;
  r.neutral("apply_residual_connection_post_layernorm", "which tensor feeds the residual (no size or work change)");
  m.layers.assign(static_cast<size_t>(m.num_layers), ModelLayer{});
}

// Nemotron-H names its blocks in one of two spellings: the string
// hybrid_override_pattern (one character per block: M Mamba-2, * attention,
// - MLP, E MoE; Nemotron-H, Nemotron-3 Nano/Super) or the list layers_block_type
// ("mamba", "attention", "mlp", "moe"; Nemotron-3 Ultra, 3.5). Both are read into
// the one-character form; a file with both must agree. `layers` < 0: any length.
std::string nemotron_block_pattern(const HfReader& r, const char* string_key, const char* list_key, int64_t layers) {
  std::string pattern = r.string_or(string_key, "");
  if (r.has(list_key)) {
    const json& list = r.at(list_key);
    if (!list.is_array()) fail(error_code::kType, r.child(list_key), "expected a list of block kinds");
    std::string from_list;
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string at = pointer_append(r.child(list_key), std::to_string(i));
      if (!list[i].is_string()) fail(error_code::kType, at, "expected a block kind (a string)");
      const std::string kind = list[i].get<std::string>();
      if (kind == "mamba") from_list += 'M';
      else if (kind == "attention") from_list += '*';
      else if (kind == "mlp") from_list += '-';
      else if (kind == "moe") from_list += 'E';
      else fail(error_code::kInvalidValue, at, "unknown block kind '" + printable(kind) + "'; known: mamba, attention, mlp, moe");
    }
    if (!pattern.empty() && pattern != from_list)
      fail(error_code::kConstraint, r.child(list_key),
           std::string(list_key) + " and " + string_key + " describe different blocks; keep the one the checkpoint was saved with");
    pattern = from_list;
  }
  if (layers >= 0 && pattern.empty())
    fail(error_code::kMissingKey, r.child(string_key),
         std::string("nemotron_h needs its blocks: '") + string_key + "' (one character per layer: M Mamba-2, * attention, - MLP, E MoE) or '" +
             list_key + "' (a list of mamba / attention / mlp / moe)");
  if (layers >= 0 && static_cast<int64_t>(pattern.size()) != layers)
    fail(error_code::kConstraint, r.child(r.has(list_key) ? list_key : string_key),
         "the block list has " + std::to_string(pattern.size()) + " entries but num_hidden_layers is " + std::to_string(layers));
  return pattern;
}

// Nemotron-3's MTP module is a small hybrid of its own (mtp_hybrid_override_pattern
// "*E": an attention block then an MoE block), which the engine's MTP draft (one
// decoder layer of the model's last kind) cannot express: it is set aside and
// said, not priced as something else, and MTP speculation is not offered.
void read_nemotron_mtp(const HfReader& r, ModelArch& m) {
  const int64_t modules = r.integer_or({"num_nextn_predict_layers"}, 0, 64, 0);
  const std::string pattern = nemotron_block_pattern(r, "mtp_hybrid_override_pattern", "mtp_layers_block_type", -1);
  if (modules == 0) return;
  const std::string key = r.has("mtp_layers_block_type") ? "mtp_layers_block_type" : "mtp_hybrid_override_pattern";
  m.import.ignored_parts.push_back(std::to_string(modules) + " multi-token-prediction module(s) of blocks '" + printable(pattern) +
                                   "' (" + key + "): not priced, and not offered as a speculative draft (the "
                                   "engine's MTP draft is one layer of the model's last kind)");
}

void read_nemotron_h(const HfReader& r, ModelArch& m) {
  // Hybrid: one character per block; M Mamba-2, * attention, - MLP, E MoE.
  m.hidden_size = r.integer({"hidden_size"}, 1, kMaxModelDim);
  // Nemotron-3 Ultra's config gives its depth only as the length of layers_block_type.
  const bool listed = r.has("layers_block_type") && r.at("layers_block_type").is_array();
  m.num_layers = static_cast<int>(listed ? r.integer_or({"num_hidden_layers"}, 1, 4096, static_cast<int64_t>(r.at("layers_block_type").size()))
                                         : r.integer({"num_hidden_layers"}, 1, 4096));
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
  m.state_dtype = read_state_dtype(r, {"mamba_ssm_cache_dtype"});
  // Mamba-2 settings that change no size or work the engine prices.
  r.neutral("norm_eps", "norm epsilon (a constant inside the norm)");
  for (const char* k : {"chunk_size"}) r.neutral(k, "Mamba-2 scan chunk length (a kernel tiling choice; the scan's work is priced per token)");
  for (const char* k : {"time_step_min", "time_step_max", "time_step_floor", "time_step_limit", "time_step_rank"})
    r.neutral(k, "Mamba-2 time-step initialisation and clamp (training / numerics)");
  for (const char* k : {"mamba_hidden_act"}) r.neutral(k, "Mamba-2 gate activation (elementwise, priced)");
  for (const char* k : {"use_bias", "mamba_proj_bias", "use_conv_bias"})
    r.neutral(k, "Mamba-2 projection and conv biases (vectors: under 0.01% of the weights)");
  const std::string pattern = nemotron_block_pattern(r, "hybrid_override_pattern", "layers_block_type", m.num_layers);
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
    // One shared MLP of moe_shared_expert_intermediate_size (transformers); vLLM and SGLang
    // multiply that width by n_shared_experts. They agree only on 1, so another count is not guessed.
    if (r.has("n_shared_experts") && r.integer({"n_shared_experts"}, 0, 1024) != m.moe.num_shared_experts)
      fail(error_code::kNotImplemented, r.child("n_shared_experts"),
           "n_shared_experts other than 1 with a moe_shared_expert_intermediate_size (0 without one) is read differently by "
           "transformers (one MLP of that width) and by vLLM / SGLang (that width times n_shared_experts): not priced");
    m.moe.latent_size = r.integer_or({"moe_latent_size"}, 1, kMaxModelDim, 0);
    // NemotronHMoE adds shared_experts(residuals) ungated (transformers' modular_nemotron_h.py).
    m.moe.shared_expert_gate = false;
    r.neutral("moe_shared_expert_overlap", "whether the shared expert overlaps the expert all-to-all (a schedule; the same work)");
  }
  read_nemotron_mtp(r, m);
  m.position_embedding = "rope";  // unused: every attention layer has rope = false
}

void read_jamba(const HfReader& r, ModelArch& m) {
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
}

// read_llama_like, with Gemma's transformers defaults for the keys its configs
// omit, and a Qwen3.5-MoE's missing intermediate_size (no dense layer uses it;
// read_qwen3_5 checks that no layer is dense).
void read_llama_like_with_defaults(const HfReader& r, const std::string& type, bool gemma, ModelArch& m) {
  if (gemma) {
    // Gemma-3's text_config often omits keys that transformers defaults.
    if (!r.has("vocab_size")) m.vocab_size = defaulted(r, m, "vocab_size", 1, 4 << 20, type == "gemma2" ? 256000 : 262208);
    if (!r.has("max_position_embeddings"))
      m.max_context = defaulted(r, m, "max_position_embeddings", 1, kMaxModelContext, type == "gemma2" ? 8192 : 131072);
  }
  // read_llama_like needs vocab and context; give Gemma's defaults through a patched copy.
  json patched = r.config();
  if (gemma) {
    if (!patched.contains("vocab_size")) patched["vocab_size"] = m.vocab_size;
    if (!patched.contains("max_position_embeddings")) patched["max_position_embeddings"] = m.max_context;
    if (!patched.contains("hidden_activation") && !patched.contains("hidden_act"))
      patched["hidden_activation"] = "gelu_pytorch_tanh";
  }
  // A family's own name for a key read_llama_like reads, copied under that
  // name. Checked at the user's own key first: a bad value is refused there,
  // not at the key this copy adds, which the user's file does not have
  // (Hunyuan's case was found by a 100,000-case aimed fuzz run, 2026-11-29).
  auto copy_checked = [&](const char* own_key, const char* read_as, int64_t max_value) {
    if (patched.contains(read_as) || !patched.contains(own_key)) return;
    r.integer({own_key}, 1, max_value);
    patched[read_as] = patched[own_key];
  };
  if (type == "qwen3_5") copy_checked("moe_intermediate_size", "intermediate_size", kMaxModelDim);
  // Hunyuan's remote code names the head width attention_head_dim.
  if (type == "hunyuan") copy_checked("attention_head_dim", "head_dim", 4096);
  HfReader pr(patched, r.path());
  read_llama_like(pr, m);
  // What the patched reader used counts as used in the original.
  const std::vector<std::string> unread = pr.unread("");
  for (auto it = patched.begin(); it != patched.end(); ++it)
    if (std::find(unread.begin(), unread.end(), it.key()) == unread.end() && r.config().contains(it.key())) r.mark(it.key());
}

// Gemma-2/3: four norms per layer and their local/global window pattern.
void read_gemma_layers(const HfReader& r, const std::string& type, ModelArch& m) {
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
}

// Llama-4: MoE every interleave_moe_layer_step layers, chunked rope layers and NoPE global ones.
void read_llama4_layers(const HfReader& r, ModelArch& m) {
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

// Qwen3-Next: gated attention output, linear-attention layers between full ones, MTP layers.
void read_qwen3_next_layers(const HfReader& r, ModelArch& m) {
  m.attention_output_gate = true;
  m.linear_attention.num_key_heads = static_cast<int>(r.integer({"linear_num_key_heads"}, 1, 4096));
  m.linear_attention.num_value_heads = static_cast<int>(r.integer({"linear_num_value_heads"}, 1, 4096));
  m.linear_attention.key_head_dim = r.integer({"linear_key_head_dim"}, 1, 4096);
  m.linear_attention.value_head_dim = r.integer({"linear_value_head_dim"}, 1, 4096);
  m.linear_attention.conv_kernel = static_cast<int>(r.integer_or({"linear_conv_kernel_dim"}, 1, 64, 4));
  const bool listed = read_layer_types(r, m, 0, 0);
  if (!listed || r.has("full_attention_interval")) {
    // Every interval-th layer full attention, the others linear. With both keys
    // present the list must say the same (a disagreement is not resolved by guessing).
    const int interval = static_cast<int>(r.integer({"full_attention_interval"}, 1, 4096));
    for (int i = 0; i < m.num_layers; ++i) {
      const LayerMixer want = (i + 1) % interval != 0 ? LayerMixer::LinearAttention : LayerMixer::Attention;
      if (listed && m.layers[static_cast<size_t>(i)].mixer != want)
        fail(error_code::kConstraint, pointer_append(r.child("layer_types"), static_cast<size_t>(i)),
             "layer_types disagrees with full_attention_interval " + std::to_string(interval) + " at layer " + std::to_string(i));
      m.layers[static_cast<size_t>(i)].mixer = want;
    }
  }
  m.mtp_layers = static_cast<int>(r.integer_or({"mtp_num_hidden_layers", "num_nextn_predict_layers"}, 0, 64, 0));
  if (r.boolean_or("mtp_use_dedicated_embeddings", false))
    fail(error_code::kNotImplemented, r.child("mtp_use_dedicated_embeddings"),
         "MTP layers with their own embedding table are not priced; the importer prices MTP layers that share the model's");
  m.state_dtype = read_state_dtype(r, {"mamba_ssm_dtype", "mamba_ssm_cache_dtype"});
  // The Gated DeltaNet output norm's gate activation (vLLM's RMSNormGated takes silu, swish
  // as silu, or sigmoid): elementwise, the same sizes and work. Another value is not guessed.
  const std::string gate = r.string_or("output_gate_type", "silu");
  if (gate != "silu" && gate != "swish" && gate != "sigmoid")
    fail(error_code::kInvalidValue, r.child("output_gate_type"),
         "output_gate_type '" + printable(gate) + "' is not a Gated DeltaNet output gate Sightline knows (silu, swish, sigmoid)");
}

// Qwen3.5 (qwen3_5, qwen3_5_moe and their _text configs): Qwen3-Next's hybrid of
// Gated DeltaNet and gated full attention, its gate now a key (attn_output_gate);
// MoE when the config has experts, dense otherwise.
void read_qwen3_5(const HfReader& r, ModelArch& m) {
  m.qk_norm = true;
  if (r.has("num_experts")) {
    read_moe_common(r, m, {"num_experts"});
    m.moe.expert_intermediate_size = r.integer({"moe_intermediate_size"}, 1, kMaxModelDim);
    m.moe.shared_intermediate_size = r.integer_or({"shared_expert_intermediate_size"}, 0, kMaxModelDim, 0);
    m.moe.num_shared_experts = m.moe.shared_intermediate_size > 0 ? 1 : 0;
    place_moe_layers(r, m);
    if (!r.config().contains("intermediate_size") && m.count_ffn(LayerFfn::Dense) > 0)
      fail(error_code::kMissingKey, r.child("intermediate_size"),
           "this Qwen3.5 MoE config has dense layers (mlp_only_layers / decoder_sparse_step) but no 'intermediate_size' for them");
  }
  uniform_window(r, m);
  read_qwen3_next_layers(r, m);
  if (!r.has("attn_output_gate")) fail(error_code::kMissingKey, r.child("attn_output_gate"), "qwen3_5 configs say whether attention has an output gate ('attn_output_gate')");
  m.attention_output_gate = r.boolean_or("attn_output_gate", true);
}

// The MoE families' experts, their placement and their attention variants.
void read_moe_family(const HfReader& r, const std::string& type, ModelArch& m) {
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
    read_llama4_layers(r, m);
  }
}

void read_by_structure(const HfReader& r, ModelArch& m) {
  read_llama_like(r, m);
  // Not Qwen's use_sliding_window switch: a family that has it has more the keys do not say (Qwen2's q/k/v biases).
  if (!read_layer_types(r, m, r.integer_or({"sliding_window"}, 1, kMaxModelContext, 0), 0)) uniform_window(r, m, false);
}

// The reader a model_type is read by: multimodal and renamed variants whose
// language model is an existing family's (the keys decide the rest).
std::string reader_for(const std::string& type) {
  if (type == "qwen3_vl_moe" || type == "qwen3_vl_moe_text") return "qwen3_moe";
  if (type == "qwen3_vl" || type == "qwen3_vl_text") return "qwen3";
  if (type == "qwen3_5" || type == "qwen3_5_text" || type == "qwen3_5_moe" || type == "qwen3_5_moe_text") return "qwen3_5";
  if (type == "hunyuan_v1_moe") return "hunyuan";
  // DeepSeek-V3.2 and GLM-5: DeepSeek-V3's MLA, experts and MTP; their indexer
  // is read by its keys for every family (read_sparse_attention).
  if (type == "deepseek_v32" || type == "glm_moe_dsa") return "deepseek_v3";
  if (type == "gemma4_text") return "gemma4";
  // Another family's layers under their own keys (hf_borrowed_families.cpp reads those).
  if (type == "glm4_moe_lite") return "deepseek_v3";
  if (type == "mimo") return "qwen2";
  if (type == "olmo2" || type == "olmo3") return "llama";
  return type;
}

void read_family_keys(const HfReader& r, const std::string& family, ModelArch& m);

void read_family(const HfReader& r, const std::string& family, ModelArch& m) {
  read_family_keys(r, family, m);
  read_borrowed_family_keys(r, family, m);
  read_sparse_attention(r, family, m);
}

void read_family_keys(const HfReader& r, const std::string& family, ModelArch& m) {
  const std::string type = reader_for(family);
  if (type == "qwen3_5") {
    read_llama_like_with_defaults(r, type, false, m);
    return read_qwen3_5(r, m);
  }
  if (type == "hunyuan" || type == "minimax_m2") {
    read_llama_like_with_defaults(r, type, false, m);
    return type == "hunyuan" ? read_hunyuan(r, family, m) : read_minimax_m2(r, m);
  }
  if (type == "gemma4" || type == "mimo_v2_flash") {
    read_llama_like_with_defaults(r, type, false, m);
    return type == "gemma4" ? read_gemma4(r, m) : read_mimo_v2(r, m);
  }
  if (type == "gpt2") return read_gpt2(r, m);
  if (type == "falcon" || type == "RefinedWeb" || type == "RefinedWebModel") return read_falcon(r, m);
  if (type == "nemotron_h") return read_nemotron_h(r, m);
  if (type == "nemotron-nas") return read_nemotron_nas(r, m);
  if (type == "jamba") return read_jamba(r, m);
  // Llama-style families.
  const bool gemma = type == "gemma2" || type == "gemma3" || type == "gemma3_text";
  read_llama_like_with_defaults(r, type, gemma, m);
  // Qwen2 has q/k/v biases without a key for them; a config that names qkv_bias is read as written.
  if ((type == "qwen2" || type == "qwen2_moe") && !r.has("qkv_bias")) m.qkv_bias = true;
  if (type == "qwen3" || type == "qwen3_moe" || type == "qwen3_next" || type == "gemma3" || type == "gemma3_text") {
    m.qk_norm = true;
    // These attentions always norm q and k (vLLM qwen3_moe.py Qwen3MoeAttention builds
    // q_norm and k_norm unconditionally); a file that also writes use_qk_norm
    // (Qwen3-Coder-480B) is read, and must agree.
    if (!r.boolean_or("use_qk_norm", true))
      fail(error_code::kNotImplemented, r.child("use_qk_norm"),
           "use_qk_norm false: model_type '" + type + "' always norms q and k per head (vLLM and transformers build q_norm "
           "and k_norm in every layer); attention without them is not priced for this family");
  }
  if (type == "glm4_moe" && r.boolean_or("use_qk_norm", false)) m.qk_norm = true;
  if (type == "glm4") m.norms_per_layer = 4;  // post-attention and post-MLP norms too
  if (gemma) return read_gemma_layers(r, type, m);
  if (type == "mistral" || type == "mixtral" || type == "phi3" || type == "qwen2" || type == "qwen2_moe" ||
      type == "qwen3" || type == "qwen3_moe" || type == "llama" || type == "glm4") {
    if (!read_layer_types(r, m, r.integer_or({"sliding_window"}, 1, kMaxModelContext, 0), 0)) uniform_window(r, m);
    r.mark("max_window_layers");
  }
  read_moe_family(r, type, m);
  if (type == "qwen3_next") {
    uniform_window(r, m);
    read_qwen3_next_layers(r, m);
  }
}

}  // namespace sightline::hf
