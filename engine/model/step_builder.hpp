#pragma once
// The builder of one forward step's operators (build_forward_step in
// operators.hpp): embedding, each layer kind's mixer (attention, its indexer,
// linear attention, Mamba) and MLP, the head and the pipeline's send/recv,
// with the tensor-parallel collectives. Its MoE layers are defined in
// step_builder_moe.cpp. Internal to the model module: use build_forward_step.
#include <algorithm>
#include <cmath>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "model/kv_footprint.hpp"
#include "model/moe_routing.hpp"
#include "model/operators.hpp"
#include "model/sparse_index_ops.hpp"

namespace sightline::step_building {

class StepBuilder {
 public:
  // Builds into `out`, which keeps its storage from step to step when the caller reuses it.
  StepBuilder(const ModelArch& m, const Precision& p, const ParallelLayout& layout, const BatchShape& batch,
              const StepOptions& options, StepOperators& out)
      : out_(out), m_(m), p_(p), layout_(layout), batch_(batch), attention_(options.attention), training_(options.training),
        routing_(options.moe), mtp_module_(options.mtp_module), fusion_(options.fusion),
        layer_groups_(options.layer_groups),
        dims_(shard_dims(m, layout.tp)) {
    summary_ = options.summary ? *options.summary : summarize_batch(batch);
    tokens_ = summary_.tokens;  // total_new_tokens()
    act_bytes_ = dtype_bytes(p.activations);
    weight_bytes_ = weight_storage_bytes(p);
    gemm_dtype_ = gemm_compute_dtype(p);
    // The model's string-valued choices, read once per step, not per layer;
    // compared as views (lengths first, inline) rather than through
    // string::compare with a strlen (2% of a wasm serving run's samples).
    layernorm_ = std::string_view(m.norm) == "layernorm";
    learned_positions_ = std::string_view(m.position_embedding) == "learned";
    rope_positions_ = std::string_view(m.position_embedding) == "rope";
    reuse_ = options.reuse_unchanged && reusable(m, options);
  }

  void build() {
    const BatchSummary& summary = summary_;
    if (reuse_ && rebuild_cores_only(summary)) return;
    start_whole_build();
    out_.sequences = summary.sequences;
    out_.padding_sequences = 0;
    // A step has a few dozen operators: one allocation instead of a
    // reallocation (and copy of every Operator) each time the list doubles.
    // Not for a list kept for reuse: it grows once and is rebuilt in place
    // for the run, and a simulator holds many (serve/step_pricer.hpp: 48
    // slots for Llama-2-7B's 14 operators, 11 KB a list, 32 lists a cost
    // setup: a 1M run's default peak 256,068-256,268 KiB with them,
    // 255,932-256,064 without).
    if (!reuse_) out_.ops.reserve(kTypicalStepOperators);
    add_embedding();
    if (mtp_module_) add_mtp_input();
    // Identical layers are priced together, one group per layer kind.
    // A caller that builds many steps passes the model's groups computed once.
    if (layer_groups_) {
      for (const LayerGroup& g : *layer_groups_) add_layer(g.count, g.kind);
    } else {
      for (const LayerGroup& g : m_.layer_groups()) add_layer(g.count, g.kind);
    }
    add_head();
    if (layout_.pp > 1) {
      // Activations cross each stage boundary once per step.
      add_collective("pp_send_recv", CollectiveKind::SendRecv, layout_.pp - 1,
                     static_cast<double>(tokens_) * m_.hidden_size * act_bytes_, 2);
    }
    out_.ops.erase(out_.ops.begin() + static_cast<std::ptrdiff_t>(used_), out_.ops.end());
    if (reuse_) keep_for_reuse(summary);
  }

 private:
  static constexpr size_t kTypicalStepOperators = 48;

  // StepOptions::reuse_unchanged (operators.cpp): whether the model allows it,
  // and the rebuild of the cores alone when the last build's summary was this one.
  static bool reusable(const ModelArch& m, const StepOptions& options);
  StepBuildInputs build_inputs() const;  // this build's, besides its batch
  bool rebuild_cores_only(const BatchSummary& summary);
  void start_whole_build();
  void keep_for_reuse(const BatchSummary& summary);

  // The step's next operator, default but for its name's storage: the caller's
  // list keeps its operators from the last step built into it, and each is
  // rewritten in place (a simulator builds a step per event: its names are then
  // copied into storage they already have, never allocated). Every operator
  // the builder adds goes through here (or push_op), in order; build() drops
  // the slots left over.
  Operator& next_op() {
    if (used_ == out_.ops.size()) {
      ++used_;
      Operator& op = out_.ops.emplace_back();
      op.stage = stage_;
      return op;
    }
    // Rebuilt in place, with the name's storage moved across (an assignment
    // from a default operator copied its ~200 bytes through memmove: 7% of a
    // 100k-request run's samples).
    Operator& op = out_.ops[used_++];
    std::string name = std::move(op.name);
    op.~Operator();
    new (&op) Operator();
    op.name = std::move(name);  // its content is the caller's to set
    op.stage = stage_;
    return op;
  }
  // `op` as the step's next operator.
  void push_op(const Operator& op) {
    if (used_ == out_.ops.size()) out_.ops.push_back(op);
    else out_.ops[used_] = op;
    out_.ops[used_++].stage = stage_;
  }

  // FLOPs per element of one norm: LayerNorm's mean and variance, or RMSNorm's.
  double norm_flops() const { return layernorm_ ? 8 : 5; }

  static Dtype gemm_compute_dtype(const Precision& p) {
    // Weight-only integer formats dequantize into the activation dtype;
    // fp8 weights with fp8 activations use fp8 tensor cores.
    if (p.activations == Dtype::FP8 && p.weights == Dtype::FP8) return Dtype::FP8;
    if (p.activations == Dtype::INT8 && p.weights == Dtype::INT8) return Dtype::INT8;
    // Block-scaled FP4 weights run at the FP4 peak where the GPU has FP4
    // tensor cores (activations quantized on the fly); elsewhere they are
    // dequantized into the activation dtype, like weight-only integers.
    if (is_fp4(p.weights) && p.fp4_tensor_cores) return p.weights;
    return p.activations == Dtype::FP8 ? Dtype::BF16 : p.activations;
  }

  // Names are views, copied into the slot's own storage (next_op): the step is
  // rebuilt every simulated step, and a name built as a string past the
  // small-string size costs an allocation. Returns the GEMM (its role is the
  // caller's to tag).
  Operator& add_gemm(std::string_view name, double count, int64_t mm, int64_t nn, int64_t kk, bool bias = false) {
    const bool mixer_unquantized = in_mixer_ && p_.mixer_weights_unquantized && !(in_mixer_out_ && p_.mixer_out_quantized);
    if (mixer_unquantized || (in_dense_ffn_ && p_.dense_ffn_weights_unquantized)) {
      // The checkpoint keeps this mixer's (or dense MLP's) weights in the activation dtype.
      const Dtype d = p_.activations == Dtype::FP8 ? Dtype::BF16 : p_.activations;
      Operator& op = next_op();
      set_gemm_operator(op, name, count, mm, nn, kk, act_bytes_, dtype_bytes(d), d, bias, 0.0);
      return op;
    }
    const bool dequant = (is_integer_weight_only(p_.weights) && gemm_dtype_ != Dtype::INT8) ||
                         (is_fp4(p_.weights) && !is_fp4(gemm_dtype_));
    Operator& op = next_op();
    set_gemm_operator(op, name, count, mm, nn, kk, act_bytes_, weight_bytes_, gemm_dtype_, bias,
                      dequant ? kDequantOpsPerWeight : 0.0);
    if (dequant) op.weight_dtype = p_.weights;
    if (block_scaled_fp8()) mark_block_scaled_fp8_output(op, static_cast<double>(mm) * static_cast<double>(nn), act_bytes_);
    return op;
  }

  // This step's quantized GEMMs are block-scaled FP8 (DeepGEMM-style kernels).
  bool block_scaled_fp8() const { return p_.fp8_block_scaled && gemm_dtype_ == Dtype::FP8; }

  // Elementwise-like kernels: `elements_read` and `elements_written` in activation dtype.
  Operator& add_memory_op(std::string_view name, OpFamily family, double count, double elements_read,
                          double elements_written, double flops_per_element) {
    Operator& op = next_op();
    set_memory_operator(op, name, family, count, (elements_read + elements_written) * act_bytes_,
                        flops_per_element * std::max(elements_read, elements_written), p_.activations);
    return op;
  }

  // RMSNorm runs as one kernel in a stack that fuses the add into it (vLLM's
  // rms_norm / fused_add_rms_norm); LayerNorm models keep their kernels.
  bool fused_rms_norm() const { return fusion_.fused_add_rms_norm && !layernorm_; }

  Operator& add_norm(std::string_view name, double count, double norm_flops) {
    const double t = static_cast<double>(tokens_);
    const double h = static_cast<double>(m_.hidden_size);
    Operator& op = add_memory_op(name, OpFamily::Norm, count, t * h, t * h, norm_flops);
    op.single_pass = fused_rms_norm();
    op.rows = tokens_;
    return op;
  }

  void add_activation(std::string_view name, double count, double elements_read, double elements_written,
                      double flops_per_element) {
    add_memory_op(name, OpFamily::Elementwise, count, elements_read, elements_written, flops_per_element).single_pass =
        fusion_.silu_and_mul;
  }

  void add_collective(std::string_view name, CollectiveKind kind, double count, double message_bytes, int group) {
    set_collective_operator(next_op(), name, kind, count, message_bytes, group, p_.activations);
  }

  void add_embedding() {
    const double t = static_cast<double>(tokens_);
    const double h = static_cast<double>(m_.hidden_size);
    Operator& op = next_op();
    set_operator_name(op, "emb");
    op.family = OpFamily::Embedding;
    op.count = 1;
    op.compute_dtype = p_.activations;
    op.bytes = 2.0 * t * h * act_bytes_ + t * 4.0;  // gather rows, write hidden states, read token ids
    if (learned_positions_) add_memory_op("emb_position", OpFamily::Elementwise, 1, 2 * t * h, t * h, 1);
    if (layout_.tp > 1)  // vocabulary-parallel embedding: partial rows are summed across ranks
      add_collective("emb_all_reduce", CollectiveKind::AllReduce, 1, t * h * act_bytes_, layout_.tp);
  }

  // An MTP module's input: RMSNorm of the embedding and of the main model's
  // hidden state, then eh_proj [t, 2h] x [2h, h] (not sharded by tensor parallelism).
  void add_mtp_input() {
    add_norm("mtp_input_norms", 2, norm_flops());
    add_gemm("mtp_eh_proj", 1, tokens_, m_.hidden_size, 2 * m_.hidden_size);
  }

  // The attention cores (step_builder_attention.cpp): a decode's flops and
  // bytes, the plain decodes' sums made from two counts, and the core over
  // the batch's sequences. `topk` > 0: a DSA layer, whose queries attend only
  // to the indexer's top-k keys.
  double add_decode_core_term(double q, double kv_len, int64_t topk, double& flops, double& bytes) const;
  bool plain_decode_core_sums(int64_t keys, int64_t n, double& flops, double& bytes) const;
  void add_attention_core(double layers, int64_t cap_tokens = 0, int64_t topk = 0);

  // Adds the step's attention operator.
  Operator& attention_op(std::string_view name, OpFamily family, double layers, double flops, double bytes,
                         int64_t q_tokens, int64_t kv_tokens, int64_t seqs, int kv_heads, int64_t qk_dim,
                         int64_t v_dim) {
    Operator& op = next_op();
    set_memory_operator(op, name, family, layers, bytes, flops, p_.activations == Dtype::FP8 ? Dtype::BF16 : p_.activations);
    op.q_tokens = q_tokens;
    op.kv_tokens = kv_tokens;
    op.seqs = seqs;
    op.heads = attn_.heads;
    op.kv_heads = kv_heads;
    op.qk_dim = qk_dim;
    op.v_dim = v_dim;
    return op;
  }

  // The head shape this kind of layer attends with, per GPU (model/architecture.hpp
  // AttentionShape: a layer's own, or the model's; MLA's query/key and value widths).
  void set_attention_dims(const ModelLayer& kind) {
    const AttentionShape a = m_.attention_shape(kind);
    attn_.heads = a.heads / layout_.tp;
    attn_.kv_heads = kv_heads_per_gpu(a.kv_heads, layout_.tp);
    attn_.qk = a.qk_head_dim;
    attn_.v = a.v_head_dim;
    attn_.k_eq_v = a.k_eq_v;
  }

  void add_attention_block(double layers, const ModelLayer& kind) {
    set_attention_dims(kind);
    const int64_t t = tokens_;
    const int64_t h = m_.hidden_size;
    const bool bias = m_.attention_bias || m_.qkv_bias;
    double rope_elements = 0;
    double kv_write_elements = 0;
    if (m_.mla.enabled) {
      const auto& a = m_.mla;
      const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
      if (a.q_lora_rank > 0) {
        add_gemm("attn_q_a_proj", layers, t, a.q_lora_rank, h);
        add_gemm("attn_q_b_proj", layers, t, dims_.heads * qk, a.q_lora_rank);
      } else {
        add_gemm("attn_pre_proj", layers, t, dims_.heads * qk, h).role = OpRole::AttnProj;
      }
      add_gemm("attn_kv_a_proj", layers, t, a.kv_lora_rank + a.qk_rope_head_dim, h);
      // Prefill expands the latent into per-head K and V for the tokens attended.
      // Decodes and verifies stay in the latent space: their queries' no-rope
      // part is projected into it (W_UK absorbed, 128 -> kv_lora per head) and
      // the attention output back out of it (W_UV, kv_lora -> v_head_dim per
      // head), per new token instead of per cached token (DeepSeek-V2 report,
      // arXiv 2405.04434 section 2.1.2, "absorb").
      int64_t prefill_kv = 0, latent_tokens = 0;
      for (const auto& s : batch_.seqs) {
        if (mla_latent_path(s.new_tokens, s.cached_tokens)) latent_tokens += s.new_tokens;
        else prefill_kv += s.cached_tokens + s.new_tokens;
      }
      if (prefill_kv > 0)
        add_gemm("attn_kv_b_proj", layers, prefill_kv, dims_.heads * (a.qk_nope_head_dim + a.v_head_dim),
                 a.kv_lora_rank);
      if (latent_tokens > 0) {
        add_gemm("attn_q_absorb", layers, latent_tokens, dims_.heads * a.kv_lora_rank, a.qk_nope_head_dim);
        add_gemm("attn_v_absorb", layers, latent_tokens, dims_.heads * a.v_head_dim, a.kv_lora_rank);
      }
      rope_elements = static_cast<double>(t) * (dims_.heads + 1) * a.qk_rope_head_dim;
      kv_write_elements = static_cast<double>(t) * (a.kv_lora_rank + a.qk_rope_head_dim);
    } else {
      const int64_t q_out = attn_.heads * attn_.qk;
      const int64_t k_out = attn_.kv_heads * attn_.qk;
      const int64_t v_out = attn_.kv_heads * attn_.v;
      // Values taken from the key projection (k_eq_v) add no columns to it.
      add_gemm("attn_pre_proj", layers, t, q_out + k_out + (attn_.k_eq_v ? 0 : v_out), h, bias).role = OpRole::AttnProj;
      if (rope_positions_ && kind.rope) rope_elements = static_cast<double>(t) * (q_out + k_out);
      kv_write_elements = static_cast<double>(t) * (k_out + v_out);
    }
    if (rope_elements > 0) {
      Operator& rope = add_memory_op("attn_rope", OpFamily::Rope, layers, rope_elements, rope_elements, 6);
      rope.single_pass = fusion_.rotary_embedding;
      rope.rows = t;
    }
    if (!training_) {
      Operator& op = next_op();
      set_operator_name(op, "kv_cache_write");
      op.family = OpFamily::KvCacheWrite;
      op.count = layers;
      op.compute_dtype = p_.kv_cache;
      op.bytes = kv_write_elements * (act_bytes_ + dtype_bytes(p_.kv_cache));
      op.flops = p_.kv_cache == p_.activations ? 0 : kv_write_elements;  // quantize on write
    }
    if (kind.indexer) add_indexer(layers);
    stage_ = OpStage::AttentionCore;
    add_attention_core(layers, kind.kv_token_cap(), kind.indexer ? m_.sparse_index.topk : 0);
    in_mixer_out_ = true;  // the output projection: its own storage format (Precision::mixer_out_quantized)
    add_gemm("attn_post_proj", layers, t, h, attn_.heads * attn_.v, m_.attention_bias).role = OpRole::AttnProj;
    in_mixer_out_ = false;
  }

  // DSA's lightning indexer (model/sparse_index_ops.hpp), replicated on every rank.
  void add_indexer(double layers) {
    const IndexerStep ix = indexer_step(m_, batch_, layers, p_.activations, training_);
    for (const IndexerGemm& g : ix.gemms) add_gemm(g.name, layers, g.m, g.n, g.k);
    for (const Operator& op : ix.ops) push_op(op);
  }

  // Sequences of the batch still in prefill, and in decode.
  void count_phases(double& prefill_seqs, double& decode_seqs) const {
    prefill_seqs = decode_seqs = 0;
    for (const auto& s : batch_.seqs) {
      if (s.new_tokens == 1 && s.cached_tokens > 0) decode_seqs += 1;
      else if (s.new_tokens > 0) prefill_seqs += 1;
    }
  }

  // A recurrent mixer (linear attention, SSM): projections in and out as
  // GEMMs, a short causal conv, and a scan that reads and writes each
  // sequence's fixed state once per step (memory-bound in decode) and does
  // `scan_flops_per_token` per new token.
  void add_recurrent_mixer(const std::string& prefix, double layers, int64_t in_out, int64_t conv_channels,
                           int conv_kernel, int64_t inner, double state_elements, double scan_flops_per_token) {
    const int64_t t = tokens_;
    const int64_t h = m_.hidden_size;
    add_gemm(prefix + "_in_proj", layers, t, in_out, h);
    add_memory_op(prefix + "_conv", OpFamily::Elementwise, layers, static_cast<double>(t) * conv_channels,
                  static_cast<double>(t) * conv_channels, 2.0 * conv_kernel);
    double prefill_seqs = 0, decode_seqs = 0;
    count_phases(prefill_seqs, decode_seqs);
    // A state dtype named by the config (float32) is read and written at its width.
    const double state_b = m_.state_dtype.empty() ? act_bytes_ : recurrent_state_bytes(m_, p_);
    set_memory_operator(
        next_op(), prefix + "_scan", OpFamily::Elementwise, layers,
        2.0 * (prefill_seqs + decode_seqs) * state_elements * state_b + static_cast<double>(t) * (conv_channels + inner) * act_bytes_,
        static_cast<double>(t) * scan_flops_per_token, p_.activations);
    add_gemm(prefix + "_out_proj", layers, t, h, inner);
  }

  void add_linear_attention(double layers) {
    const auto& l = m_.linear_attention;
    const int tp = layout_.tp;
    const int64_t key_dim = static_cast<int64_t>(l.num_key_heads) * l.key_head_dim / tp;
    const int64_t value_dim = static_cast<int64_t>(l.num_value_heads) * l.value_head_dim / tp;
    const double heads = static_cast<double>(l.num_value_heads) / tp;
    // Gated delta rule per head and token: decay, k·S, the rank-1 update and q·S
    // (about 6 dk·dv), plus the chunked form's intra-chunk attention (chunks of 64).
    const double scan_flops = heads * (6.0 * l.key_head_dim * l.value_head_dim + 2.0 * 64 * (l.key_head_dim + l.value_head_dim));
    add_recurrent_mixer("linear_attn", layers, 2 * key_dim + 2 * value_dim + 2 * l.num_value_heads / tp,
                        2 * key_dim + value_dim, l.conv_kernel, value_dim,
                        heads * l.key_head_dim * l.value_head_dim, scan_flops);
  }

  void add_mamba(double layers) {
    const auto& s = m_.ssm;
    const int tp = layout_.tp;
    const int64_t inner = s.inner_size / tp;
    const int64_t bc = 2LL * s.n_groups * s.state_size;
    if (s.version == 2) {
      const int64_t heads = s.num_heads / tp;
      // SSD: state update and readout, about 6 flops per inner channel and state entry.
      add_recurrent_mixer("mamba", layers, 2 * inner + bc + heads, inner + bc, s.conv_kernel, inner,
                          static_cast<double>(inner) * s.state_size, 6.0 * inner * s.state_size);
    } else {
      add_recurrent_mixer("mamba", layers, 2 * inner, inner, s.conv_kernel, inner,
                          static_cast<double>(inner) * s.state_size,
                          6.0 * inner * s.state_size + 2.0 * inner * (s.dt_rank + 2 * s.state_size) + 2.0 * s.dt_rank * inner);
    }
  }

  void add_dense_mlp(double layers, int64_t intermediate_per_gpu) {
    const int64_t t = tokens_;
    const int64_t h = m_.hidden_size;
    const int64_t up = (m_.gated_mlp ? 2 : 1) * intermediate_per_gpu;
    in_dense_ffn_ = true;
    add_gemm("mlp_up_proj", layers, t, up, h, m_.mlp_bias).role = OpRole::MlpProj;
    add_activation("mlp_act", layers, static_cast<double>(t) * up,
                  static_cast<double>(t) * intermediate_per_gpu, m_.gated_mlp ? 6 : 8);
    add_gemm("mlp_down_proj", layers, t, h, intermediate_per_gpu, m_.mlp_bias).role = OpRole::MlpProj;
    in_dense_ffn_ = false;
  }

  // MoE layers (step_builder_moe.cpp).
  // Shared experts see every token: a dense MLP of their combined size.
  void add_shared_experts(double layers);
  // One grouped GEMM over the experts hit: `load.experts_hit` problems of
  // tokens_per_expert × nn × kk. Only the hit experts' weights are read; the
  // FLOPs are those of the tokens actually routed.
  void add_grouped_expert_gemm(std::string_view name, double layers, const MoeLoad& load, int64_t nn, int64_t kk);
  // An MoE layer as serving stacks run it (vLLM fused_moe, TensorRT-LLM
  // grouped GEMM): a fixed set of kernels whatever the number of experts:
  // router GEMM, softmax/top-k, permute (gather the tokens by expert), one
  // grouped GEMM per projection over the experts hit, activation, unpermute
  // (the top-k weighted sum back in token order), and the shared experts as a
  // dense MLP.
  void add_moe_mlp(double layers);
  // Latent MoE's projection to (or from) the experts' width, on every token and
  // whole on every rank (replicated, model/architecture.hpp MoeSpec::latent_size).
  void add_latent_proj(const char* name, double layers, int64_t nn, int64_t kk);
  // Training keeps one GEMM per expert hit (the training graph rewrites
  // these per expert-parallel rank).
  void add_moe_mlp_per_expert(double layers);

  void add_layer(int layer_count, const ModelLayer& kind) {
    const double layers = layer_count;
    const double t = static_cast<double>(tokens_);
    const double h = static_cast<double>(m_.hidden_size);
    const double norm_flops = this->norm_flops();
    const double hidden_bytes = t * h * act_bytes_;
    const bool mixer = kind.mixer != LayerMixer::None;
    const bool ffn = kind.ffn != LayerFfn::None;
    const size_t first_op = used_;
    if (mixer) {
      stage_ = OpStage::AttentionPrep;
      add_norm("input_layernorm", layers, norm_flops).role = OpRole::ResidualNorm;
      in_mixer_ = true;
      // An attention block turns to its core at the attention kernel; a recurrent mixer is all core.
      if (kind.mixer != LayerMixer::Attention) stage_ = OpStage::AttentionCore;
      switch (kind.mixer) {
        case LayerMixer::Attention: add_attention_block(layers, kind); break;
        case LayerMixer::LinearAttention: add_linear_attention(layers); break;
        case LayerMixer::Mamba: add_mamba(layers); break;
        case LayerMixer::None: break;
      }
      in_mixer_ = false;
    }
    if (mixer && ffn && !m_.parallel_attn_mlp) {
      if (layout_.tp > 1) add_collective("attn_all_reduce", CollectiveKind::AllReduce, layers, hidden_bytes, layout_.tp);
      add_norm("post_attention_layernorm", layers, norm_flops).role = OpRole::ResidualNorm;
    } else if (mixer && ffn && layernorm_) {
      add_norm("post_attention_layernorm", layers, norm_flops).role = OpRole::ResidualNorm;
    } else if (!mixer) {
      add_norm("input_layernorm", layers, norm_flops).role = OpRole::ResidualNorm;
    }
    stage_ = OpStage::Other;
    if (kind.ffn == LayerFfn::Moe) add_moe_mlp(layers);
    else if (kind.ffn == LayerFfn::Dense)
      add_dense_mlp(layers, (m_.dense_width(kind) + layout_.tp - 1) / layout_.tp);
    if (layout_.tp > 1) add_collective(ffn ? "mlp_all_reduce" : "attn_all_reduce", CollectiveKind::AllReduce, layers, hidden_bytes, layout_.tp);
    // Residual additions: the mixer output and the MLP output each join the stream.
    double adds = (mixer ? 1 : 0) + (ffn ? 1 : 0);
    if (fused_rms_norm()) adds -= absorb_residual_adds(first_op, adds, t * h);
    if (adds > 0) add_memory_op("add", OpFamily::Elementwise, adds * layers, 2 * t * h, t * h, 1);
  }

  // fused_add_rms_norm: each residual add is folded into the RMSNorm after it
  // (residual += x; x = norm(residual): x and the residual read, both written),
  // so a layer's norms absorb as many of its adds. The first layer's input
  // norm follows no add and the final norm follows the last layer's: the
  // count per layer is the same. Returns the adds absorbed.
  double absorb_residual_adds(size_t first_op, double adds, double hidden_elements) {
    double absorbed = 0;
    for (size_t i = first_op; i < used_ && absorbed < adds; ++i) {
      Operator& op = out_.ops[i];
      if (op.role != OpRole::ResidualNorm) continue;
      op.bytes = 4 * hidden_elements * act_bytes_;
      absorbed += 1;
    }
    return absorbed;
  }

  void add_head() {
    const double h = static_cast<double>(m_.hidden_size);
    add_norm("final_layernorm", 1, norm_flops());
    // Inference needs logits only for each sequence's last position in this
    // step; training needs them (and the loss) for every token.
    int64_t rows = 0;
    if (training_) rows = tokens_;
    else
      for (const auto& s : batch_.seqs) rows += s.new_tokens > 0 ? 1 : 0;
    if (rows == 0) return;
    // The LM head stays in the activation dtype in quantized checkpoints (GPTQ/AWQ/FP8).
    Operator& op = next_op();
    set_operator_name(op, "lm_head");
    op.family = OpFamily::Gemm;
    op.count = 1;
    op.m = rows;
    op.n = dims_.vocab;
    op.k = m_.hidden_size;
    op.compute_dtype = p_.activations == Dtype::FP8 ? Dtype::BF16 : p_.activations;
    op.flops = 2.0 * rows * dims_.vocab * h;
    op.bytes = rows * h * act_bytes_ + static_cast<double>(dims_.vocab) * h * act_bytes_ + rows * dims_.vocab * 4.0;
    op.weight_bytes = static_cast<double>(dims_.vocab) * h * act_bytes_;
    if (layout_.tp > 1) {
      // Inference gathers the vocabulary shards' logits; training's
      // vocabulary-parallel cross-entropy only all-reduces per-row max and sum.
      if (training_) add_collective("loss_all_reduce", CollectiveKind::AllReduce, 1, rows * 2.0 * 4.0, layout_.tp);
      else add_collective("logits_all_gather", CollectiveKind::AllGather, 1,
                          static_cast<double>(rows) * m_.vocab_size * 4.0, layout_.tp);
    }
    Operator& sample = next_op();
    set_operator_name(sample, training_ ? "cross_entropy" : "sampling");
    sample.family = OpFamily::Sampling;
    sample.count = 1;
    sample.compute_dtype = Dtype::FP32;
    sample.flops = 5.0 * rows * m_.vocab_size;
    sample.bytes = 2.0 * rows * m_.vocab_size * 4.0;  // softmax reads logits, writes probabilities
  }

  StepOperators& out_;
  const ModelArch& m_;
  const Precision& p_;
  const ParallelLayout& layout_;
  const BatchShape& batch_;
  AttentionImpl attention_;
  bool training_ = false;
  MoeRouting routing_;
  bool mtp_module_ = false;
  KernelFusion fusion_;
  const std::vector<LayerGroup>* layer_groups_ = nullptr;
  ShardDims dims_;
  // Per GPU: the attention shape of the layer kind being built (set_attention_dims).
  struct AttentionDims {
    int heads = 0, kv_heads = 0;
    int64_t qk = 0, v = 0;
    bool k_eq_v = false;
  } attn_;
  BatchSummary summary_;
  int64_t tokens_ = 0;
  size_t used_ = 0;  // operators of out_ this build has written (next_op)
  double act_bytes_ = 2;
  double weight_bytes_ = 2;
  bool layernorm_ = false;          // LayerNorm (else RMSNorm)
  bool learned_positions_ = false;  // a learned position embedding table
  bool rope_positions_ = false;     // rotary position embedding
  bool reuse_ = false;     // StepOptions::reuse_unchanged, for a model that allows it
  OpStage stage_ = OpStage::Other;  // the part of the layer being built: each new operator's
  bool in_mixer_ = false;  // building a layer's attention / recurrent mixer
  bool in_mixer_out_ = false;  // building the attention's output projection
  bool in_dense_ffn_ = false;  // building a dense MLP or the shared experts
  Dtype gemm_dtype_ = Dtype::BF16;
};

}  // namespace sightline::step_building
