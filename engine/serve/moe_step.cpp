#include "serve/moe_step.hpp"

#include <algorithm>

#include "core/dtype.hpp"

namespace sightline::serve {

namespace {

bool uses_hot_expert_default(const MoeServingSpec& moe, int experts_per_gpu) {
  return !moe.load_imbalance_given && moe.expert_parallel > 1 && experts_per_gpu > 0;
}

}  // namespace

double serving_load_imbalance(const MoeServingSpec& moe, int experts_per_gpu, int expert_slots) {
  if (!uses_hot_expert_default(moe, experts_per_gpu)) return moe.load_imbalance;
  // A rank cannot take more than every token: at most the number of ranks.
  return default_hot_expert_factor(experts_per_gpu, moe.redundant_experts > 0,
                                   static_cast<double>(expert_slots) / experts_per_gpu);
}

std::string serving_load_imbalance_basis(const MoeServingSpec& moe, int experts_per_gpu) {
  if (moe.load_imbalance_given) return "given (serving.moe.load_imbalance)";
  if (!uses_hot_expert_default(moe, experts_per_gpu))
    return "none: without expert parallelism every GPU holds a share of every expert";
  return default_hot_expert_basis(experts_per_gpu, moe.redundant_experts > 0);
}

MoeRouting serving_moe_routing(const MoeServingSpec& moe, const ModelArch& m, const ParallelLayout& layout,
                               int64_t group_tokens) {
  MoeRouting r;
  r.load_imbalance = moe.load_imbalance;
  if (moe.expert_parallel > 1) {
    // Wide EP (ep > tp): whole experts, serving the tokens of every attention
    // data-parallel replica of the group.
    r.expert_slots = layout.expert_slots;
    const int slots = layout.expert_slots > 0 ? layout.expert_slots : m.moe.num_experts;
    r.experts_per_gpu = slots / moe.expert_parallel;
    r.expert_tp = std::max(1, layout.tp / moe.expert_parallel);
    r.attention_dp = moe.attention_data_parallel;
    r.group_tokens = group_tokens;
    r.load_imbalance = serving_load_imbalance(moe, r.experts_per_gpu, slots);
  }
  return r;
}

bool is_decode_step(const BatchShape& shape) {
  bool decode_only = !shape.seqs.empty();
  for (const SeqChunk& q : shape.seqs)
    if (q.cached_tokens <= 0 || q.new_tokens > kLowLatencyMaxTokensPerSeq) decode_only = false;
  return decode_only;
}

// Expert parallelism moves every MoE layer's tokens to the experts' GPUs
// (dispatch) and their outputs back (combine), in one of DeepEP's two kernel
// sets:
// - low latency (decode): one kernel sends every (token, expert) copy
//   straight to the expert's GPU, fp8 with one fp32 scale per 128 channels;
//   no counts exchange, no de-duplication.
// - high throughput (prefill): the GPUs first exchange how many tokens each
//   sends to each (a small all-to-all), then each token travels once per
//   destination GPU, in the activation dtype.
// The combine returns bf16 (the activation dtype) copies the same way. The
// busiest GPU receives the busiest-rank factor times the mean (the same factor
// as the expert GEMMs: hot experts times this step's sampling excess), and the
// all-to-all waits for it. The group is priced on the pool's links (one NVL72
// domain is one flat group; a group wider than the node goes hierarchical).
void append_moe_all_to_all(const MoeServingSpec& moe, const ModelArch& m, Dtype activations, const BatchShape& shape,
                           const MoeRouting& routing, StepOperators& ops) {
  const int ep = moe.expert_parallel;
  const bool low_latency =
      moe.all_to_all == AllToAllMode::LowLatency || (moe.all_to_all == AllToAllMode::Auto && is_decode_step(shape));
  const double act_b = dtype_bytes(activations == Dtype::FP8 ? Dtype::BF16 : activations);
  // Latent MoE dispatches the rows after its down-projection (latent_size wide).
  const double h = static_cast<double>(m.moe.routed_width(m.hidden_size));
  const double tokens = static_cast<double>(shape.total_new_tokens());
  const double k = m.moe.top_k;
  const double hot = busiest_rank_factor(m.moe.num_experts, m.moe.top_k, shape.total_new_tokens(), routing);
  // Copies of one token on the wire: top_k, or its distinct destination GPUs
  // (each of the ep GPUs is missed by all k picks with probability (1 - 1/ep)^k).
  const double copies = low_latency ? k : ep * (1.0 - ipow(1.0 - 1.0 / ep, m.moe.top_k));
  const double fp8_row_b = h * (1.0 + 4.0 / 128.0);
  const double dispatch_row_b = low_latency || activations == Dtype::FP8 ? fp8_row_b : h * act_b;
  const double layers = m.num_moe_layers();
  auto add = [&](const char* name, OpStage stage, double message_bytes) {
    ops.ops.push_back(make_collective_operator(name, CollectiveKind::AllToAll, layers, message_bytes, ep, activations));
    ops.ops.back().stage = stage;
  };
  if (!low_latency) add("moe_dispatch_counts", OpStage::MoeDispatch, 4.0 * ep);
  add("moe_dispatch", OpStage::MoeDispatch, tokens * copies * dispatch_row_b * hot);
  add("moe_combine", OpStage::MoeCombine, tokens * copies * h * act_b * hot);
}

}  // namespace sightline::serve
