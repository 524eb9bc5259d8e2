// The simulation's step pricing: a batch's operators (with expert
// parallelism's all-to-alls) priced by the pool's cost model.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "mem/inference_memory.hpp"
#include "model/mtp.hpp"
#include "serve/simulation.hpp"

namespace sightline::serve {

namespace {

constexpr int kFamilies = 11;  // OpFamily values

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

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
// busiest GPU receives load_imbalance times the mean, and the all-to-all waits
// for it. The group is priced on the pool's links (one NVL72 domain is one
// flat group; a group wider than the node goes hierarchical).
void Simulation::append_moe_all_to_all(const CostEntry& c, const BatchShape& shape, double act_b,
                                       StepOperators& ops) const {
  const int ep = spec_.moe.expert_parallel;
  bool decode_only = !shape.seqs.empty();
  for (const SeqChunk& q : shape.seqs)
    if (q.cached_tokens <= 0 || q.new_tokens > kLowLatencyMaxTokensPerSeq) decode_only = false;
  const bool low_latency = spec_.moe.all_to_all == AllToAllMode::LowLatency ||
                           (spec_.moe.all_to_all == AllToAllMode::Auto && decode_only);
  const double h = static_cast<double>(c.model->hidden_size);
  const double tokens = static_cast<double>(shape.total_new_tokens());
  const double k = c.model->moe.top_k;
  const double hot = spec_.moe.load_imbalance;
  // Copies of one token on the wire: top_k, or its distinct destination GPUs
  // (each of the ep GPUs is missed by all k picks with probability (1 - 1/ep)^k).
  const double copies = low_latency ? k : ep * (1.0 - ipow(1.0 - 1.0 / ep, c.model->moe.top_k));
  const double fp8_row_b = h * (1.0 + 4.0 / 128.0);
  const double dispatch_row_b = low_latency || s_.precision.activations == Dtype::FP8 ? fp8_row_b : h * act_b;
  const double layers = c.model->num_moe_layers();
  auto add = [&](const char* name, double message_bytes) {
    Operator a2a;
    a2a.name = name;
    a2a.family = OpFamily::Collective;
    a2a.collective = CollectiveKind::AllToAll;
    a2a.count = layers;
    a2a.group_size = ep;
    a2a.message_bytes = message_bytes;
    a2a.bytes = message_bytes;
    a2a.compute_dtype = s_.precision.activations;
    ops.ops.push_back(a2a);
  };
  if (!low_latency) add("moe_dispatch_counts", 4.0 * ep);
  add("moe_dispatch", tokens * copies * dispatch_row_b * hot);
  add("moe_combine", tokens * copies * h * act_b * hot);
}

double Simulation::price(int cost_index, const BatchShape& shape, int adapters, bool accumulate, PeakWork* work) {
  CostEntry& c = costs_[static_cast<size_t>(cost_index)];
  StepOptions options;
  options.attention = s_.serving->attention;
  options.fusion = s_.cost_model.software_stack.fusion;
  // An MTP draft is part of the target: its MoE layer is routed and placed
  // like the target's (same experts per GPU, same all-to-alls).
  const bool mtp = c.draft && spec_.speculative.method == SpecMethod::Mtp;
  options.mtp_module = mtp;
  const bool routed = (!c.draft || mtp) && c.model->is_moe();
  if (routed) {
    // The step waits for the busiest GPU: its experts are load_imbalance
    // times as likely to be chosen (model/moe_routing.hpp). Expert
    // parallelism keeps E/ep experts per GPU, each split over tp/ep ranks.
    options.moe.load_imbalance = spec_.moe.load_imbalance;
    if (spec_.moe.expert_parallel > 1) {
      // Wide EP (ep > tp): whole experts, serving the tokens of every
      // attention data-parallel replica of the group.
      options.moe.expert_slots = c.layout.expert_slots;
      const int slots = c.layout.expert_slots > 0 ? c.layout.expert_slots : c.model->moe.num_experts;
      options.moe.experts_per_gpu = slots / spec_.moe.expert_parallel;
      options.moe.expert_tp = std::max(1, c.layout.tp / spec_.moe.expert_parallel);
      options.moe.attention_dp = spec_.moe.attention_data_parallel;
      // A lockstep group's target pass serves every rank's tokens (the
      // draft's passes keep the per-rank estimate).
      if (!c.draft) options.moe.group_tokens = group_moe_tokens_;
    }
  }
  StepOperators ops = build_forward_step(*c.model, s_.precision, c.layout, shape, options);
  const double act_b = dtype_bytes(s_.precision.activations == Dtype::FP8 ? Dtype::BF16 : s_.precision.activations);
  if (routed && spec_.moe.expert_parallel > 1) append_moe_all_to_all(c, shape, act_b, ops);
  if (!c.draft && spec_.lora.enabled && adapters > 0) {
    // Batched LoRA (SGMV/punica): a shrink GEMM to the rank and an expand GEMM
    // back, per target projection; each distinct adapter's weights are read once.
    const double r_ = spec_.lora.rank;
    const bool all = spec_.lora.targets == LoraTargets::AllLinear;
    const size_t n = ops.ops.size();
    ops.ops.reserve(3 * n);  // at most two LoRA operators per operator: `base` stays valid
    for (size_t i = 0; i < n; ++i) {
      if (ops.ops[i].family != OpFamily::Gemm) continue;
      const Operator& base = ops.ops[i];
      const bool attn = base.name == "attn_pre_proj" || base.name == "attn_post_proj";
      const bool mlp = base.name == "mlp_up_proj" || base.name == "mlp_down_proj" ||
                       base.name == "moe_shared_up_proj" || base.name == "moe_shared_down_proj";
      if (!(attn || (all && mlp))) continue;
      const double m = static_cast<double>(base.m);
      Operator shrink;
      shrink.name = "lora_shrink";
      shrink.family = OpFamily::Gemm;
      shrink.count = base.count;
      shrink.m = base.m;
      shrink.n = spec_.lora.rank;
      shrink.k = base.k;
      shrink.compute_dtype = base.compute_dtype;
      shrink.flops = 2.0 * m * r_ * static_cast<double>(base.k);
      shrink.bytes = (m * static_cast<double>(base.k) + adapters * static_cast<double>(base.k) * r_ + m * r_) * act_b;
      Operator expand = shrink;
      expand.name = "lora_expand";
      expand.n = base.n;
      expand.k = spec_.lora.rank;
      expand.flops = 2.0 * m * static_cast<double>(base.n) * r_;
      expand.bytes = (m * r_ + adapters * r_ * static_cast<double>(base.n) + 2.0 * m * static_cast<double>(base.n)) * act_b;
      ops.ops.push_back(std::move(shrink));
      ops.ops.push_back(std::move(expand));
    }
  }
  const StepCost sc = c.setup.price(ops);
  if (work) {
    work->compute_gpu_s += sc.compute_peak_s * c.layout.tp;
    work->memory_gpu_s += sc.memory_peak_s * c.layout.tp;
  }
  if (accumulate && c.draft) {
    draft_s_ += sc.time_s;
  } else if (accumulate) {
    const bool moe = c.model->is_moe();
    const bool lora = spec_.lora.enabled;
    for (const PricedOperator& p : sc.parts) {
      const int f = static_cast<int>(p.family);
      if (f >= 0 && f < kFamilies) family_s_[f] += p.time_s;
      if (moe && p.family == OpFamily::Gemm && starts_with(p.name, "moe_expert")) expert_s_ += p.time_s;
      if (lora && p.family == OpFamily::Gemm && starts_with(p.name, "lora_")) lora_gemm_s_ += p.time_s;
    }
  }
  return sc.time_s;
}

}  // namespace sightline::serve
