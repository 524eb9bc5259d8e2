// The simulation's step pricing: a batch's operators (with expert
// parallelism's all-to-alls) priced by the pool's cost model.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "mem/inference_memory.hpp"
#include "model/mtp.hpp"
#include "serve/moe_step.hpp"
#include "serve/simulation.hpp"

namespace sightline::serve {

namespace {

constexpr int kFamilies = 11;  // OpFamily values

}  // namespace

double Simulation::price(int cost_index, const BatchShape& shape, int adapters, bool accumulate, PeakWork* work) {
  CostEntry& c = costs_[static_cast<size_t>(cost_index)];
  StepOptions options;
  options.attention = s_.serving->attention;
  options.fusion = s_.cost_model.software_stack.fusion;
  options.layer_groups = &c.layer_groups;
  // An MTP draft is part of the target: its MoE layer is routed and placed
  // like the target's (same experts per GPU, same all-to-alls).
  const bool mtp = c.draft && spec_.speculative.method == SpecMethod::Mtp;
  options.mtp_module = mtp;
  const bool routed = (!c.draft || mtp) && c.model->is_moe();
  // A lockstep group's target pass serves every rank's tokens (the draft's
  // passes keep the per-rank estimate).
  if (routed) options.moe = serving_moe_routing(spec_.moe, *c.model, c.layout, c.draft ? 0 : group_moe_tokens_);
  // The engine pads a graph decode batch to its captured size: the dummy
  // rows run every kernel, the all-to-alls included.
  BatchShape& ran = ran_scratch_;
  StepOperators& ops = ops_scratch_;
  build_served_step_into(*c.model, s_.precision, c.layout, shape, options, s_.cost_model.software_stack, &ran, ops);
  const double act_b = dtype_bytes(s_.precision.activations == Dtype::FP8 ? Dtype::BF16 : s_.precision.activations);
  if (routed && spec_.moe.expert_parallel > 1)
    append_moe_all_to_all(spec_.moe, *c.model, s_.precision.activations, ran, options.moe, ops);
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
      const bool attn = base.role == OpRole::AttnProj;
      const bool mlp = base.role == OpRole::MlpProj;
      if (!(attn || (all && mlp))) continue;
      const double m = static_cast<double>(base.m);
      Operator shrink;
      shrink.name = "lora_shrink";
      shrink.family = OpFamily::Gemm;
      shrink.role = OpRole::LoraGemm;
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
  StepCost& sc = priced_scratch_;
  c.setup.price_into(ops, sc);
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
      if (moe && p.family == OpFamily::Gemm && p.role == OpRole::ExpertGemm) expert_s_ += p.time_s;
      if (lora && p.family == OpFamily::Gemm && p.role == OpRole::LoraGemm) lora_gemm_s_ += p.time_s;
    }
  }
  return sc.time_s;
}

}  // namespace sightline::serve
