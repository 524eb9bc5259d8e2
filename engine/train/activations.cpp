#include "train/activations.hpp"

#include <algorithm>

namespace sightline {

namespace {

struct Dims {
  double t = 0;       // tokens of one micro-batch on one GPU
  double kv_len = 0;  // keys each query attends (standard attention materializes them all)
  double h = 0, h_sp = 0;
  double q = 0, kv = 0, o = 0, heads = 0;
  double inter = 0, up = 0;
  double a = 2;
};

Dims dims_of(const Scenario& s, const TrainConfig& c) {
  const ModelArch& m = s.model;
  const TrainParallelism& p = c.parallelism;
  const ShardDims d = shard_dims(m, p.tp);
  Dims x;
  const double seq_local = static_cast<double>(c.batch.seq_len / p.cp);
  x.t = static_cast<double>(c.batch.micro_batch_size) * seq_local;
  x.kv_len = seq_local + (p.cp > 1 ? static_cast<double>(c.batch.seq_len * (p.cp - 1) / (2 * p.cp)) : 0.0);
  x.h = static_cast<double>(m.hidden_size);
  x.h_sp = p.sequence_parallel && p.tp > 1 ? x.h / p.tp : x.h;
  x.heads = d.heads;
  x.q = static_cast<double>(d.heads) * m.qk_head_dim();
  x.kv = m.mla.enabled ? static_cast<double>(d.heads) * (m.qk_head_dim() + m.v_head_dim())
                       : 2.0 * d.kv_heads * m.head_dim;
  x.o = static_cast<double>(d.heads) * m.v_head_dim();
  x.inter = static_cast<double>(d.intermediate);
  x.up = (m.gated_mlp ? 2.0 : 1.0) * x.inter;
  x.a = dtype_bytes(s.precision.activations);
  return x;
}

bool fp8_attn(const TrainConfig& c) { return c.fp8 == Fp8Gemms::Layers || c.fp8 == Fp8Gemms::All; }
bool fp8_mlp(const TrainConfig& c) { return c.fp8 != Fp8Gemms::None; }

}  // namespace

LayerActivations layer_activations(const Scenario& s, const TrainConfig& c, bool moe_layer, const RecomputeSpec& rc) {
  const ModelArch& m = s.model;
  const Dims x = dims_of(s, c);
  const double a = x.a;
  const LoraSpec& l = c.lora;
  const bool train_qkv = !l.enabled || l.has_target("q") || l.has_target("k") || l.has_target("v");
  const bool train_up = !l.enabled || l.has_target("up") || l.has_target("gate");
  const bool train_down = !l.enabled || l.has_target("down");
  const bool standard = c.attention == AttentionImpl::Standard;
  const double qkv_in_b = fp8_attn(c) ? 1.0 : a;
  const double mlp_in_b = fp8_mlp(c) ? 1.0 : a;

  // Bytes per token, by tensor. `recomputed_*` flags drop tensors the policy recomputes.
  auto per_token = [&](bool drop_norm_out, bool drop_act_out, bool drop_scores) {
    double b = 0;
    b += x.h_sp * a;                                               // layer input (input norm backward)
    if (train_qkv && !drop_norm_out) b += x.h_sp * qkv_in_b;      // normed input of the QKV GEMM
    b += (x.q + x.kv) * a;                                         // Q, K, V after RoPE (attention backward)
    b += x.o * a;                                                  // attention output (attention + out-proj backward)
    b += x.heads * 4.0;                                            // log-sum-exp, fp32
    if (standard && !drop_scores) b += x.heads * x.kv_len * a;     // softmax probabilities
    if (!m.parallel_attn_mlp) b += x.h_sp * a;                     // MLP-block input (post-attention norm backward)
    if (moe_layer) {
      const double k = m.moe.top_k * c.moe_load_imbalance;
      const double e_inter = static_cast<double>(shard_dims(m, c.parallelism.tp).expert_intermediate);
      const double e_up = (m.gated_mlp ? 2.0 : 1.0) * e_inter;
      b += m.moe.num_experts * 4.0;                                 // router logits, fp32
      if (train_up && !drop_norm_out) b += x.h_sp * mlp_in_b;      // normed MLP input
      b += k * x.h * mlp_in_b;                                      // tokens permuted to experts (expert up wgrad)
      b += k * e_up * a;                                            // expert up/gate outputs (activation backward)
      if (!drop_act_out) b += k * e_inter * mlp_in_b;               // expert activation output (down wgrad)
      if (m.moe.num_shared_experts > 0) {
        const double sh = e_inter * m.moe.num_shared_experts;
        b += (m.gated_mlp ? 2.0 : 1.0) * sh * a + (drop_act_out ? 0.0 : sh * mlp_in_b);
      }
    } else {
      if (train_up && !drop_norm_out && !m.parallel_attn_mlp) b += x.h_sp * mlp_in_b;  // normed MLP input
      b += x.up * a;                                                // up/gate outputs (activation backward)
      if (train_down && !drop_act_out) b += x.inter * mlp_in_b;     // activation output (down wgrad)
    }
    if (l.enabled) b += static_cast<double>(l.rank) * l.targets.size() * a;  // adapter x·A outputs
    return b;
  };

  LayerActivations out;
  out.full = x.t * per_token(false, false, false);
  out.checkpointed = x.t * x.h_sp * a;
  switch (rc.mode) {
    case RecomputeMode::None:
    case RecomputeMode::Full:  // layers not checkpointed keep everything
      out.stored = out.full;
      break;
    case RecomputeMode::Selective:
      out.stored = x.t * per_token(rc.layernorm, rc.mlp_act, rc.core_attn);
      break;
    case RecomputeMode::SelectiveOp: {
      // torchtitan op-level SAC keeps the outputs of the attention kernel and
      // of every other matmul: q, v, attention output, w1 (or fc1), w2.
      double b = x.h_sp * a + (x.q + 0.5 * x.kv + x.o) * a + x.heads * 4.0 + x.inter * a + x.h_sp * a;
      if (standard) b += x.heads * x.kv_len * a;
      if (moe_layer) b = per_token(true, true, true);
      out.stored = x.t * b;
      break;
    }
  }
  // Working memory of the backward pass of one layer.
  double transient = 0;
  if (rc.mode == RecomputeMode::Full) transient = out.full;  // the recomputed layer's activations
  else if (rc.mode != RecomputeMode::None) transient = out.full - out.stored;
  if (standard) transient += x.t * x.heads * x.kv_len * 4.0;  // fp32 scores of one layer
  out.transient = transient;
  return out;
}

double head_activation_bytes(const Scenario& s, const TrainConfig& c) {
  const Dims x = dims_of(s, c);
  const bool train_head = !c.lora.enabled;
  return x.t * x.h_sp * x.a * (train_head ? 2.0 : 1.0);  // final norm input, and its output for the head's wgrad
}

double logits_buffer_bytes(const Scenario& s, const TrainConfig& c) {
  const Dims x = dims_of(s, c);
  const double vocab = static_cast<double>(shard_dims(s.model, c.parallelism.tp).vocab);
  return x.t * vocab * (x.a + 4.0 + 4.0);
}

}  // namespace sightline
