#include "serve/moe_step.hpp"

#include <algorithm>

#include "core/dtype.hpp"

namespace sightline::serve {

namespace {

bool uses_hot_expert_default(const MoeServingSpec& moe, int experts_per_gpu) {
  return !moe.load_imbalance_given && moe.expert_parallel > 1 && experts_per_gpu > 0;
}

// SMs DeepEP's normal-mode kernels hold (deepseek-ai/DeepEP deep_ep/buffer.py
// at dcfd9548: Buffer.num_sms = 20); SGLang's prefill overlap runs DeepGEMM on
// the rest (operations_strategy.py: deep_gemm_num_sms = SMs - DeepEPConfig's num_sms).
constexpr int kDeepEpNormalSms = 20;

// What one micro-batch spends, per layer, in the parts of a layer the
// overlap's stage plan places (Operator::stage, model/operators.hpp
// OpStage): dispatch and combine, gate, routed and shared experts per MoE
// layer, the attention's preparation and core averaged over every layer. What
// runs once per step, a dense layer's MLP and the residual adds hide nothing
// and are in `total_s` only.
struct MicroBatchParts {
  double dispatch = 0, combine = 0, prep = 0, core = 0, gate = 0, routed = 0, shared = 0;
  double total_s = 0, all_to_all_s = 0, fp8_gemm_s = 0;
};

MicroBatchParts micro_batch_parts(const StepOperators& ops, const StepCost& cost, const ModelArch& m) {
  MicroBatchParts p;
  const size_t n = std::min(ops.ops.size(), cost.parts.size());
  for (size_t i = 0; i < n; ++i) {
    const Operator& op = ops.ops[i];
    const double t = cost.parts[i].time_s;
    p.total_s += t;
    if (op.family == OpFamily::Gemm && op.compute_dtype == Dtype::FP8) p.fp8_gemm_s += t;
    switch (op.stage) {
      case OpStage::MoeDispatch: p.dispatch += t; break;
      case OpStage::MoeCombine: p.combine += t; break;
      case OpStage::MoeGate: p.gate += t; break;
      case OpStage::RoutedExperts: p.routed += t; break;
      case OpStage::SharedExperts: p.shared += t; break;
      case OpStage::AttentionPrep: p.prep += t; break;
      case OpStage::AttentionCore: p.core += t; break;
      case OpStage::Other: break;
    }
  }
  p.all_to_all_s = p.dispatch + p.combine;
  const double moe_layers = std::max(1, m.num_moe_layers()), layers = std::max(1, m.num_layers);
  p.dispatch /= moe_layers;
  p.combine /= moe_layers;
  p.gate /= moe_layers;
  p.routed /= moe_layers;
  p.shared /= moe_layers;
  p.prep /= layers;
  p.core /= layers;
  return p;
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

bool split_two_batches(const BatchShape& shape, BatchShape& a, BatchShape& b) {
  a.seqs.clear();
  b.seqs.clear();
  const size_t n = shape.seqs.size();
  if (n < 2) return false;
  // SGLang's compute_split_seq_index: a decode splits at half the sequences;
  // an extend after the sequence whose new tokens first reach half their
  // sum (_split_array_by_half_sum, never after the last).
  size_t split = n / 2;
  if (!is_decode_step(shape)) {
    const int64_t half = shape.total_new_tokens() / 2;
    int64_t sum = 0;
    split = 0;
    for (size_t i = 0; i + 1 < n; ++i) {
      sum += shape.seqs[i].new_tokens;
      split = i + 1;
      if (sum >= half) break;
    }
  }
  a.seqs.assign(shape.seqs.begin(), shape.seqs.begin() + static_cast<std::ptrdiff_t>(split));
  b.seqs.assign(shape.seqs.begin() + static_cast<std::ptrdiff_t>(split), shape.seqs.end());
  return true;
}

// The stages interleave on one stream (_execute_two_batch_raw: a's first
// `delta` stages, then one of a's and one of b's in turn), and a micro-batch's
// dispatch or combine, sent at the end of one of its stages and received at
// the start of its next, travels while whatever runs between them computes;
// only what outlasts that is exposed. Per MoE layer, from the stage plans of
// operations_strategy.py (DeepSeek's and Qwen3's are alike):
// - decode (delta 2; stages: attention prep | core, gate | dispatch send,
//   shared experts | dispatch receive, routed experts, combine send | combine
//   receive | output): a's dispatch hides behind its own shared experts and
//   b's prep, a's combine behind b's core and gate, b's dispatch behind its
//   own shared experts (a's output stage, a residual add, is left out), and
//   b's combine behind a's next layer's prep;
// - prefill (delta 0; stages: attention, gate, dispatch send | dispatch
//   receive, routed experts, combine send | shared experts, combine receive,
//   output): a's dispatch behind b's attention and gate, a's combine behind
//   b's routed experts and its own shared experts, b's dispatch behind a's
//   routed experts, b's combine behind both shared experts. DeepGEMM (the FP8
//   GEMMs) runs on the SMs DeepEP's normal kernels leave, taken as
//   compute-bound as prefill GEMMs are.
// The last layer's b combine has no next layer to hide behind; one layer of
// many, it is priced like the others.
TwoBatchOverlapTime two_batch_overlap_time(const StepOperators& ops_a, const StepCost& a, const StepOperators& ops_b,
                                           const StepCost& b, bool decode, const ModelArch& m, const GpuSpec& gpu) {
  const MicroBatchParts pa = micro_batch_parts(ops_a, a, m), pb = micro_batch_parts(ops_b, b, m);
  auto exposed = [](double comm, double window) { return std::max(0.0, comm - window); };
  const double per_layer =
      decode ? exposed(pa.dispatch, pa.shared + pb.prep) + exposed(pa.combine, pb.core + pb.gate) +
                   exposed(pb.dispatch, pb.shared) + exposed(pb.combine, pa.prep)
             : exposed(pa.dispatch, pb.prep + pb.core + pb.gate) + exposed(pa.combine, pb.routed + pa.shared) +
                   exposed(pb.dispatch, pa.routed) + exposed(pb.combine, pa.shared + pb.shared);
  TwoBatchOverlapTime t;
  t.all_to_all_s = pa.all_to_all_s + pb.all_to_all_s;
  t.exposed_s = per_layer * m.num_moe_layers();
  if (!decode && gpu.vendor == "nvidia" && gpu.sm_count > kDeepEpNormalSms)
    t.sm_share_s = (pa.fp8_gemm_s + pb.fp8_gemm_s) * kDeepEpNormalSms / (gpu.sm_count - kDeepEpNormalSms);
  t.gpu_s = pa.total_s + pb.total_s - t.all_to_all_s + t.exposed_s + t.sm_share_s;
  return t;
}

}  // namespace sightline::serve
