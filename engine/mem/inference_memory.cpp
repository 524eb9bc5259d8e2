#include "mem/inference_memory.hpp"

#include <algorithm>

#include "model/param_count.hpp"

namespace sightline {

double weight_bytes_per_gpu(const ModelArch& m, const Precision& p, const ParallelLayout& layout) {
  const ParamCounts c = count_params(m);
  const double act_b = dtype_bytes(p.activations == Dtype::FP8 ? Dtype::BF16 : p.activations);
  const double w_b = weight_storage_bytes(p);
  const double mixer_b = p.mixer_weights_unquantized ? act_b : w_b;
  // Dense MLPs, shared experts and routers: unquantized when the checkpoint keeps them so.
  const double dense_b = p.dense_ffn_weights_unquantized ? act_b : w_b;
  const double tp = layout.tp;
  // The routed experts follow their placement: expert_slots copies (EPLB's
  // redundant experts included) over max(tp, ep) GPUs. With ep <= tp that is
  // the tensor-parallel split; wide EP spreads whole experts over the
  // attention data-parallel replicas, whose other weights are replicated.
  const double expert_copies =
      m.is_moe() && layout.expert_slots > m.moe.num_experts ? static_cast<double>(layout.expert_slots) / m.moe.num_experts : 1.0;
  const double expert_gpus = std::max(layout.tp, layout.ep);
  auto layer_bytes = [&](const LayerParams& l) {
    // Norm weights are replicated on every rank; the rest is sharded.
    const double routed = static_cast<double>(l.routed_experts);
    // Latent MoE's projections and DSA's indexer are replicated on every rank (ReplicatedLinear).
    const double latent = static_cast<double>(l.latent_proj);
    const double indexer = static_cast<double>(l.indexer);
    // An output projection stored quantized beside unquantized attention (0 otherwise).
    const double out = p.mixer_out_quantized ? static_cast<double>(l.attention_out) : 0.0;
    return ((static_cast<double>(l.attention) - indexer - out) * mixer_b + out * w_b +
            (static_cast<double>(l.mlp) - routed - latent) * dense_b) / tp +
           indexer * mixer_b + latent * dense_b + routed * expert_copies * w_b / expert_gpus + static_cast<double>(l.norms) * act_b;
  };
  // MLA's latent projections are not sharded by head in practice, but they are
  // small; the per-head projections dominate and are sharded.
  double all_layers = 0;
  for (const GroupParams& g : c.groups) all_layers += g.group.count * layer_bytes(g.layer);
  const double per_stage_layers = all_layers / layout.pp;
  const double embedding = static_cast<double>(c.embedding) * act_b / tp;
  const double head = static_cast<double>(c.lm_head + c.final_norm) * act_b / tp;
  if (layout.pp == 1) return per_stage_layers + embedding + head;
  return per_stage_layers + std::max(embedding, head);
}

double mtp_weight_bytes_per_gpu(const ModelArch& m, const Precision& p, int tp, int modules) {
  if (modules <= 0 || m.num_layers <= 0) return 0;
  const double act_b = dtype_bytes(p.activations == Dtype::FP8 ? Dtype::BF16 : p.activations);
  const double w_b = weight_storage_bytes(p);
  const double mixer_b = p.mixer_weights_unquantized ? act_b : w_b;
  const double dense_b = p.dense_ffn_weights_unquantized ? act_b : w_b;
  const LayerParams l = layer_params(m, m.layer_kind(m.num_layers - 1));
  const double h = static_cast<double>(m.hidden_size);
  const double norm = m.norm == "layernorm" ? 2 * h : h;
  const double routed = static_cast<double>(l.routed_experts);
  const double latent = static_cast<double>(l.latent_proj);  // replicated, as in the main model
  const double indexer = static_cast<double>(l.indexer);
  const double out = p.mixer_out_quantized ? static_cast<double>(l.attention_out) : 0.0;
  const double layer = ((static_cast<double>(l.attention) - indexer - out) * mixer_b + out * w_b +
                        (static_cast<double>(l.mlp) - routed - latent) * dense_b + routed * w_b) / tp +
                       indexer * mixer_b + latent * dense_b + static_cast<double>(l.norms) * act_b;
  return modules * (layer + 2.0 * h * h * w_b + 3.0 * norm * act_b);
}

double activation_peak_bytes(const ModelArch& m, const Precision& p, int tp, int64_t tokens, int64_t logit_rows,
                             double bytes_per_logit) {
  const ShardDims d = shard_dims(m, tp);
  const double a = dtype_bytes(p.activations);
  const double t = static_cast<double>(tokens);
  const double h = static_cast<double>(m.hidden_size);
  int64_t inter = m.is_moe() ? std::max(d.intermediate, d.expert_intermediate * m.moe.top_k) : d.intermediate;
  for (const ModelLayer& k : m.layers)  // a layer's own dense MLP width, when wider
    inter = std::max(inter, (k.ffn_intermediate + tp - 1) / tp);
  const double up = (m.gated_mlp ? 2.0 : 1.0) * static_cast<double>(inter);
  // Residual stream + normed input, the up projection's output and the activation output.
  const double mlp_peak = t * (2.0 * h + up + static_cast<double>(inter)) * a;
  // Residual + normed input + q, k, v + attention output; for the widest kind
  // when layer kinds have head shapes of their own.
  const double qkv = static_cast<double>(d.heads + 2 * d.kv_heads) * m.qk_head_dim();
  double attn_peak = t * (2.0 * h + qkv + static_cast<double>(d.heads) * m.v_head_dim()) * a;
  for (const LayerGroup& g : m.layer_groups()) {
    if (!g.kind.shape.given()) continue;
    const AttentionShape& s = g.kind.shape;
    const double heads = s.heads / tp, kv_heads = kv_heads_per_gpu(s.kv_heads, tp);
    const double q_kv = heads * static_cast<double>(s.qk_head_dim) + kv_heads * static_cast<double>(s.qk_head_dim + s.v_head_dim);
    attn_peak = std::max(attn_peak, t * (2.0 * h + q_kv + heads * static_cast<double>(s.v_head_dim)) * a);
  }
  // The sampler runs after the forward has freed its intermediates; the
  // step's output hidden states stay live beside the sampler's tensors.
  const double sampler = static_cast<double>(logit_rows) * static_cast<double>(m.vocab_size) * bytes_per_logit;
  return std::max({mlp_peak, attn_peak, t * h * a + sampler});
}

json InferenceMemory::to_json() const {
  return {{"capacity_GiB", capacity_GiB},   {"weights_GiB", weights_GiB},
          {"kv_cache_GiB", kv_cache_GiB},   {"activations_GiB", activations_GiB},
          {"runtime_overhead_GiB", runtime_overhead_GiB}, {"free_GiB", free_GiB}};
}

}  // namespace sightline
