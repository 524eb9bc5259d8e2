// The step builder's MoE layers (step_builder.hpp): the router, the experts
// hit as grouped GEMMs (serving) or one GEMM per expert hit (training), the
// latent projections and the shared experts.
#include <algorithm>
#include <cmath>
#include <string>

#include "model/moe_routing.hpp"
#include "model/step_builder.hpp"

namespace sightline::step_building {

// Shared experts see every token: a dense MLP of their combined size.
void StepBuilder::add_shared_experts(double layers) {
  const auto& moe = m_.moe;
  if (moe.shared_intermediate() <= 0) return;
  const int64_t t = tokens_;
  const int64_t h = m_.hidden_size;
  const int64_t shared_inter = (moe.shared_intermediate() + layout_.tp - 1) / layout_.tp;
  in_dense_ffn_ = true;
  add_gemm("moe_shared_up_proj", layers, t, (m_.gated_mlp ? 2 : 1) * shared_inter, h).role = OpRole::MlpProj;
  add_activation("moe_shared_act", layers,
                static_cast<double>(t) * (m_.gated_mlp ? 2 : 1) * shared_inter, static_cast<double>(t) * shared_inter,
                6);
  add_gemm("moe_shared_down_proj", layers, t, h, shared_inter).role = OpRole::MlpProj;
  in_dense_ffn_ = false;
}

// One grouped GEMM over the experts hit: `load.experts_hit` problems of
// tokens_per_expert × nn × kk. Only the hit experts' weights are read; the
// FLOPs are those of the tokens actually routed.
void StepBuilder::add_grouped_expert_gemm(std::string_view name, double layers, const MoeLoad& load, int64_t nn, int64_t kk) {
  const int64_t rows = static_cast<int64_t>(std::ceil(load.tokens_per_expert));
  Operator& op = add_gemm(name, layers, rows, nn, kk, m_.moe.expert_bias);
  op.role = OpRole::ExpertGemm;
  make_grouped_expert_gemm(op, load.experts_hit, load.assignments, act_bytes_, weight_bytes_, m_.moe.expert_bias,
                           load.routed_tokens, load.expert_p);
  if (op.serial_bytes > 0) mark_block_scaled_fp8_output(op, load.assignments * static_cast<double>(nn), act_bytes_);
}

// An MoE layer as serving stacks run it (vLLM fused_moe, TensorRT-LLM
// grouped GEMM): a fixed set of kernels whatever the number of experts:
// router GEMM, softmax/top-k, permute (gather the tokens by expert), one
// grouped GEMM per projection over the experts hit, activation, unpermute
// (the top-k weighted sum back in token order), and the shared experts as a
// dense MLP.
void StepBuilder::add_moe_mlp(double layers) {
  if (training_) {
    add_moe_mlp_per_expert(layers);
    return;
  }
  const int64_t t = tokens_;
  const int64_t h = m_.hidden_size;
  const auto& moe = m_.moe;
  const double td = static_cast<double>(t);
  const double E = moe.num_experts;
  const int expert_tp = routing_.expert_tp > 0 ? routing_.expert_tp : layout_.tp;
  const int64_t e_inter = (moe.expert_intermediate_size + expert_tp - 1) / expert_tp;
  stage_ = OpStage::MoeGate;
  {
    // The gate stays in the activation dtype in quantized checkpoints.
    const Dtype d = p_.activations == Dtype::FP8 ? Dtype::BF16 : p_.activations;
    Operator op = make_gemm_operator("moe_router", layers, t, moe.num_experts, h, act_bytes_, dtype_bytes(d), d);
    op.family = OpFamily::MoeRouter;
    push_op(op);
  }
  // Softmax (or sigmoid) over the E logits and the top-k selection: ids and weights out.
  add_memory_op("moe_topk", OpFamily::Elementwise, layers, td * E, 2.0 * td * moe.top_k, 8);
  const MoeLoad load = expected_moe_load(moe.num_experts, moe.top_k, t, routing_);
  const int64_t w = moe.routed_width(h);  // latent MoE: the experts' rows are latent_size wide
  add_latent_proj("moe_latent_down_proj", layers, w, h);
  if (load.experts_hit > 0) {
    const int64_t up = (m_.gated_mlp ? 2 : 1) * e_inter;
    // Rows gathered into expert order (one copy per routed pair on this GPU).
    add_memory_op("moe_permute", OpFamily::Elementwise, layers, td * w, load.assignments * w, 0);
    stage_ = OpStage::RoutedExperts;
    add_grouped_expert_gemm("moe_expert_up_proj", layers, load, up, w);
    add_activation("moe_expert_act", layers, load.assignments * up, load.assignments * e_inter, 6);
    add_grouped_expert_gemm("moe_expert_down_proj", layers, load, w, e_inter);
    // Each token's expert outputs, weighted by the router, summed back in token order.
    add_memory_op("moe_unpermute", OpFamily::Elementwise, layers, load.assignments * w, td * w, 2);
  }
  stage_ = OpStage::RoutedExperts;  // the projection back from the experts' width, after the combine in
                                     // the engine, priced with the experts it serves
  add_latent_proj("moe_latent_up_proj", layers, h, w);
  stage_ = OpStage::SharedExperts;
  add_shared_experts(layers);
  stage_ = OpStage::Other;
}

// Latent MoE's projection to (or from) the experts' width, on every token and
// whole on every rank (replicated, model/architecture.hpp MoeSpec::latent_size).
void StepBuilder::add_latent_proj(const char* name, double layers, int64_t nn, int64_t kk) {
  if (m_.moe.latent_size <= 0) return;
  in_dense_ffn_ = true;
  add_gemm(name, layers, tokens_, nn, kk, m_.mlp_bias);
  in_dense_ffn_ = false;
}

// Training keeps one GEMM per expert hit (the training graph rewrites
// these per expert-parallel rank).
void StepBuilder::add_moe_mlp_per_expert(double layers) {
  const int64_t t = tokens_;
  const int64_t h = m_.hidden_size;
  const auto& moe = m_.moe;
  const int64_t e_inter = dims_.expert_intermediate;
  {
    Operator op;
    op.name = "moe_router";
    op.family = OpFamily::MoeRouter;
    op.count = layers;
    op.m = t;
    op.n = moe.num_experts;
    op.k = h;
    op.compute_dtype = p_.activations;
    op.flops = 2.0 * t * moe.num_experts * h + 8.0 * t * moe.num_experts;  // gate GEMM + softmax/top-k
    op.bytes = static_cast<double>(t) * h * act_bytes_ + static_cast<double>(h) * moe.num_experts * act_bytes_ +
               static_cast<double>(t) * moe.num_experts * 4.0;
    push_op(op);
  }
  // Tokens are gathered per expert and scattered back (top_k copies each), at the experts' width.
  const int64_t w = moe.routed_width(h);
  add_memory_op("moe_permute", OpFamily::Elementwise, layers, 2.0 * t * moe.top_k * w, 2.0 * t * moe.top_k * w, 0);
  // Expected number of distinct experts hit by t tokens under uniform routing:
  // only their weights are read.
  const double assignments = static_cast<double>(t) * moe.top_k;
  const double miss = ipow(1.0 - static_cast<double>(moe.top_k) / moe.num_experts, t);
  const double experts_hit = std::max(1.0, moe.num_experts * (1.0 - miss));
  const int64_t tokens_per_expert = static_cast<int64_t>(std::ceil(assignments / experts_hit));
  const int64_t up = (m_.gated_mlp ? 2 : 1) * e_inter;
  add_latent_proj("moe_latent_down_proj", layers, w, h);
  add_gemm("moe_expert_up_proj", layers * experts_hit, tokens_per_expert, up, w).role = OpRole::ExpertGemm;
  add_activation("moe_expert_act", layers * experts_hit, static_cast<double>(tokens_per_expert) * up,
                 static_cast<double>(tokens_per_expert) * e_inter, 6);
  add_gemm("moe_expert_down_proj", layers * experts_hit, tokens_per_expert, w, e_inter).role = OpRole::ExpertGemm;
  stage_ = OpStage::RoutedExperts;  // the projection back from the experts' width, after the combine in
                                     // the engine, priced with the experts it serves
  add_latent_proj("moe_latent_up_proj", layers, h, w);
  stage_ = OpStage::SharedExperts;
  add_shared_experts(layers);
  stage_ = OpStage::Other;
}

}  // namespace sightline::step_building
