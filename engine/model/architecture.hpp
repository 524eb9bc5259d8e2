#pragma once
// Transformer architecture description, read from a preset, an inline
// architecture, or a Hugging Face config.json.
#include <cstdint>
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline {

struct MoeSpec {
  int num_experts = 0;  // 0: dense model
  int top_k = 0;
  int num_shared_experts = 0;
  int64_t expert_intermediate_size = 0;
  int first_dense_layers = 0;  // leading layers that use the dense MLP
  // Every `layer_step`-th layer (after the dense-first ones) is MoE, the others dense
  // (Llama-4 Maverick: 2; Qwen-MoE's decoder_sparse_step). 1: every layer.
  int layer_step = 1;
  // Intermediate size of all shared experts together; 0: num_shared_experts ×
  // expert_intermediate_size (DeepSeek). Qwen-MoE and Llama-4 give their own.
  int64_t shared_intermediate_size = 0;
  bool expert_bias = false;  // gpt-oss experts carry biases
  // A per-expert bias added to the routing scores (MiniMax-M2's
  // e_score_correction_bias): num_experts numbers per MoE layer.
  bool router_bias = false;
  // Latent MoE (Nemotron-3's moe_latent_size): the routed experts run at this
  // width, behind a hidden -> latent projection before dispatch and a latent ->
  // hidden one after combine, both dense and replicated on every rank (vLLM and
  // SGLang's nemotron_h.py: ReplicatedLinear fc1_latent_proj / fc2_latent_proj).
  // The router and the shared experts stay at hidden_size (transformers'
  // modular_nemotron_h.py NemotronHMoE.forward). 0: experts at hidden_size.
  int64_t latent_size = 0;
  // A shared expert of its own size (shared_intermediate_size) carries a scalar
  // sigmoid gate (Qwen-MoE's shared_expert_gate: hidden_size weights); Nemotron-H's
  // shared expert is added without one.
  bool shared_expert_gate = true;

  // Width of the rows the routed experts read and write (and dispatch moves).
  int64_t routed_width(int64_t hidden_size) const { return latent_size > 0 ? latent_size : hidden_size; }
  int64_t shared_intermediate() const {
    return shared_intermediate_size > 0 ? shared_intermediate_size : num_shared_experts * expert_intermediate_size;
  }
};

// What mixes information across tokens in a layer.
enum class LayerMixer { Attention, LinearAttention, Mamba, None };
// What follows the mixer.
enum class LayerFfn { Dense, Moe, None };

std::string layer_mixer_name(LayerMixer k);
std::string layer_ffn_name(LayerFfn k);

// The head shape of one kind of attention layer, where a model's layer kinds
// differ in it (Gemma-4's global layers are wider and have fewer KV heads than
// its sliding ones; MiMo-V2's sliding layers have more KV heads than its full
// ones, and both read values narrower than keys). Zero / false everywhere: the
// layer uses the model's own num_heads, num_kv_heads and head_dim.
struct AttentionShape {
  int heads = 0;             // query heads
  int kv_heads = 0;          // key (and value) heads
  int64_t qk_head_dim = 0;   // width of each query and key head
  int64_t v_head_dim = 0;    // width of each value head (cached and attended)
  // Values come from the key projection (no v_proj weights: Gemma-4's
  // attention_k_eq_v); the cache still keeps K and V, which are normed apart.
  bool k_eq_v = false;
  bool sinks = false;        // learned per-head sink logits in this kind of layer

  bool given() const { return heads > 0; }
  bool operator==(const AttentionShape& o) const {
    return heads == o.heads && kv_heads == o.kv_heads && qk_head_dim == o.qk_head_dim && v_head_dim == o.v_head_dim &&
           k_eq_v == o.k_eq_v && sinks == o.sinks;
  }
};

// One layer's kind. Attention layers may be windowed: a sliding window of
// `window` tokens or chunks of `chunk` tokens cap what each query attends to
// and what the KV cache keeps.
struct ModelLayer {
  LayerMixer mixer = LayerMixer::Attention;
  int64_t window = 0;  // sliding window in tokens; 0: none
  int64_t chunk = 0;   // chunked attention (attends within aligned chunks); 0: none
  bool rope = true;    // false: no positional rotation in this layer (NoPE)
  // DeepSeek sparse attention: a lightning indexer (ModelArch::sparse_index)
  // picks the keys each query attends to. Attention layers only.
  bool indexer = false;
  LayerFfn ffn = LayerFfn::Dense;
  AttentionShape shape;  // this layer's own head shape; not given: the model's
  // This layer's dense MLP width where the model's layers differ in it
  // (Nemotron-NAS's per-block ffn_mult); 0: the model's (ModelArch::dense_width).
  int64_t ffn_intermediate = 0;

  // Tokens of context one sequence keeps (and attends to) in this layer; 0: unbounded.
  int64_t kv_token_cap() const { return window > 0 ? window : chunk; }
  bool operator==(const ModelLayer& o) const {
    return mixer == o.mixer && window == o.window && chunk == o.chunk && rope == o.rope && indexer == o.indexer &&
           ffn == o.ffn && shape == o.shape && ffn_intermediate == o.ffn_intermediate;
  }
  bool operator!=(const ModelLayer& o) const { return !(*this == o); }
};

// Identical layers priced together: `count` layers of one kind.
struct LayerGroup {
  ModelLayer kind;
  int count = 0;
};

// Gated DeltaNet-style linear attention (Qwen3-Next): a fixed-size state per sequence.
struct LinearAttentionSpec {
  int num_key_heads = 0;
  int num_value_heads = 0;
  int64_t key_head_dim = 0;
  int64_t value_head_dim = 0;
  int conv_kernel = 4;
};

// Mamba state-space mixer. version 2 (Mamba-2, Nemotron-H) or 1 (Jamba).
struct SsmSpec {
  int version = 2;
  int num_heads = 0;        // Mamba-2 heads (inner_size = num_heads × head_dim)
  int64_t head_dim = 0;
  int64_t inner_size = 0;   // d_inner
  int64_t state_size = 0;   // d_state
  int n_groups = 1;         // Mamba-2 B/C groups
  int conv_kernel = 4;
  int64_t dt_rank = 0;      // Mamba-1 only
};

// Weight quantization a checkpoint ships in (from its quantization_config or
// ModelOpt's hf_quant_config.json). The scenario's precision defaults to it.
struct CheckpointQuant {
  std::string method;           // "fp8", "mxfp4", "nvfp4", "awq", "gptq", "compressed-tensors", "modelopt"
  std::string weights_dtype;    // engine dtype name of the quantized linear layers; "" none
  std::string kv_cache_dtype;   // "" when the checkpoint says nothing
  int group_size = 0;           // int4/int8 weight-only groups
  bool zero_point = true;       // int groups store a zero point (asymmetric); false: scale only
  bool attention_excluded = false;  // attention projections stay in bf16 (gpt-oss MXFP4)
  // With attention_excluded: the output projection is quantized all the same (nvidia's
  // DeepSeek NVFP4 checkpoints keep q_a, q_b, kv_a, kv_b and the indexer in bf16, not o_proj).
  bool attention_out_quantized = false;
  bool dense_ffn_excluded = false;  // dense MLPs and shared experts stay in bf16 (Kimi-K2.5 int4)
  std::string applied;          // one line: what was understood
};

// What an import understood and what it set aside.
struct ImportReport {
  std::string family;                     // model_type read (or inferred)
  std::vector<std::string> warnings;
  std::vector<std::string> ignored_keys;  // present, understood as not affecting performance
  std::vector<std::string> ignored_why;   // the same keys grouped: "a, b: why they change nothing"
  std::vector<std::string> ignored_parts; // e.g. "vision_config (vision tower, not priced)"
};

// Bounds every model form checks its sizes against (the typed reader and the
// Hugging Face importer alike), so a pasted config and a typed model accept the
// same sizes.
constexpr int64_t kMaxModelDim = 1 << 20;       // hidden / intermediate / rank sizes
constexpr int64_t kMaxModelContext = 16 << 20;  // 16M tokens

struct MlaSpec {
  bool enabled = false;
  int64_t q_lora_rank = 0;  // 0: plain query projection
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

// DeepSeek sparse attention (DSA: DeepSeek-V3.2, GLM-5). In each indexed layer
// a lightning indexer of `heads` heads of `head_dim` scores every cached token
// against the query (FP8, ReLU, weighted over heads) and the attention reads only
// the `topk` best. The indexer keeps one key of head_dim per token per layer
// (DeepSeek-V3.2-Exp inference/model.py, class Indexer: wq_b from the query's
// low-rank latent, wk and a LayerNorm k_norm from the hidden state, weights_proj
// to one weight per head; k_cache float8_e4m3fn [tokens, head_dim] and
// k_scale_cache float32 [tokens, head_dim / 128]).
struct SparseIndexSpec {
  int64_t topk = 0;  // keys each query attends to; 0: no indexer
  int heads = 0;
  int64_t head_dim = 0;
  bool enabled() const { return topk > 0; }
  // Indexer key cache per token per layer: FP8 keys plus an fp32 scale per 128 channels.
  double key_bytes_per_token() const { return static_cast<double>(head_dim) + 4.0 * static_cast<double>((head_dim + 127) / 128); }
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
  LinearAttentionSpec linear_attention;
  SsmSpec ssm;
  SparseIndexSpec sparse_index;  // DSA's indexer, used by layers with `indexer` set
  // One entry per layer, in order. Empty: every layer is full attention with a
  // dense MLP, or MoE after moe.first_dense_layers (finalize_layers fills it).
  std::vector<ModelLayer> layers;
  bool attention_sinks = false;       // learned per-head sink logits (gpt-oss)
  bool qk_norm = false;               // RMSNorm on q and k per head (Qwen3, Gemma-3)
  // qk_norm over the whole query and key projections (all heads at once, one
  // weight per channel: MiniMax-M2's qk_norm_type "per_layer"), not per head.
  bool qk_norm_per_layer = false;
  bool attention_output_gate = false; // q projection doubled for a sigmoid output gate (Qwen3-Next)
  int norms_per_layer = 2;            // Gemma-2/3 norm before and after each block: 4
  int64_t dense_intermediate_size = 0; // dense layers of an MoE model when different (Llama-4: intermediate_size_mlp)
  int mtp_layers = 0;                 // multi-token-prediction layers shipped with the model (not in num_layers)
  // dtype of the linear-attention / SSM state when the config names one
  // (mamba_ssm_cache_dtype "float32"); "": the activation dtype.
  std::string state_dtype;
  CheckpointQuant quant;              // from the config; empty when none
  ImportReport import;                // filled by the Hugging Face importer

  bool is_moe() const { return moe.num_experts > 0; }
  // Layers of each kind, merged (order kept by first appearance).
  std::vector<LayerGroup> layer_groups() const;
  ModelLayer layer_kind(int index) const;
  int count_layers(LayerMixer mixer) const;
  int num_moe_layers() const;
  int num_dense_layers() const { return num_layers - num_moe_layers() - count_ffn(LayerFfn::None); }
  int count_ffn(LayerFfn ffn) const;
  bool has_layer_kinds() const { return !layers.empty(); }
  int64_t dense_intermediate() const { return dense_intermediate_size > 0 ? dense_intermediate_size : intermediate_size; }
  // The dense MLP width of a layer of this kind: its own when given, else the
  // model's (an MoE model's dense layers: dense_intermediate()).
  int64_t dense_width(const ModelLayer& kind) const {
    return kind.ffn_intermediate > 0 ? kind.ffn_intermediate : is_moe() ? dense_intermediate() : intermediate_size;
  }
  // Per-head dimensions of queries/keys and of values (differ under MLA).
  int64_t qk_head_dim() const { return mla.enabled ? mla.qk_nope_head_dim + mla.qk_rope_head_dim : head_dim; }
  int64_t v_head_dim() const { return mla.enabled ? mla.v_head_dim : head_dim; }
  // Elements of K plus V stored per token per layer in the KV cache.
  int64_t kv_elements_per_token_per_layer() const;
  // The head shape a layer of this kind attends with, resolved: its own when
  // given, else the model's (MLA: its query/key and value widths).
  AttentionShape attention_shape(const ModelLayer& kind) const;
  // Whether any layer has a head shape of its own (consumers that price one
  // shape for every layer refuse such a model rather than misprice it).
  bool has_layer_attention_shapes() const;
  // Whether any layer has a dense MLP width of its own (ModelLayer::ffn_intermediate).
  bool has_layer_ffn_widths() const;

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

// Cross-field checks shared by every source of architecture (one place for
// all of them: heads, experts, top-k, layer kinds).
void check_model(const ModelArch& m, const std::string& path);

// Fills `layers` from num_layers and the MoE spec when no layer list was given.
void finalize_layers(ModelArch& m);

// A checkpoint's quantization_config (as in a Hugging Face config.json) applied
// to `m`: the weight format a scenario defaults to (a typed preset may carry one).
void read_checkpoint_quantization(const json& q, const std::string& path, ModelArch& m);

// ModelOpt's hf_quant_config.json (its "quantization" object) applied to `m`.
void apply_modelopt_quant(ModelArch& m, const json& hf_quant, const std::string& path);

}  // namespace sightline
