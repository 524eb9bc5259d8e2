#include "serve/two_batch_overlap.hpp"

#include <algorithm>

#include "serve/moe_step.hpp"

namespace sightline::serve {

namespace {

// SMs DeepEP's normal-mode kernels hold (deepseek-ai/DeepEP deep_ep/buffer.py
// at dcfd9548: Buffer.num_sms = 20); SGLang's prefill overlap runs DeepGEMM on
// the rest (operations_strategy.py: deep_gemm_num_sms = SMs - DeepEPConfig's num_sms).
constexpr int kDeepEpNormalSms = 20;

}  // namespace

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
TwoBatchOverlapTime two_batch_overlap_time(const MicroBatchParts& pa, const MicroBatchParts& pb, bool decode,
                                           int moe_layers, const GpuSpec& gpu) {
  auto exposed = [](double comm, double window) { return std::max(0.0, comm - window); };
  const double per_layer =
      decode ? exposed(pa.dispatch, pa.shared + pb.prep) + exposed(pa.combine, pb.core + pb.gate) +
                   exposed(pb.dispatch, pb.shared) + exposed(pb.combine, pa.prep)
             : exposed(pa.dispatch, pb.prep + pb.core + pb.gate) + exposed(pa.combine, pb.routed + pa.shared) +
                   exposed(pb.dispatch, pa.routed) + exposed(pb.combine, pa.shared + pb.shared);
  TwoBatchOverlapTime t;
  t.all_to_all_s = pa.all_to_all_s + pb.all_to_all_s;
  t.exposed_s = per_layer * moe_layers;
  if (!decode && gpu.vendor == "nvidia" && gpu.sm_count > kDeepEpNormalSms)
    t.sm_share_s = (pa.fp8_gemm_s + pb.fp8_gemm_s) * kDeepEpNormalSms / (gpu.sm_count - kDeepEpNormalSms);
  t.gpu_s = pa.total_s + pb.total_s - t.all_to_all_s + t.exposed_s + t.sm_share_s;
  return t;
}

}  // namespace sightline::serve
