#include "train/lora_adapters.hpp"

namespace sightline {

std::vector<LoraAdapter> lora_adapters_for(const GraphContext& g, const std::string& base_gemm) {
  std::vector<LoraAdapter> out;
  if (!g.lora) return out;
  const ModelArch& m = g.model;
  const int64_t h = m.hidden_size;
  const int64_t q_out = static_cast<int64_t>(m.num_heads) * m.head_dim;
  const int64_t kv_out = static_cast<int64_t>(m.num_kv_heads) * m.head_dim;
  auto add = [&](const char* target, int64_t din_l, int64_t dout_l, int64_t din, int64_t dout) {
    if (g.config.lora.has_target(target)) out.push_back({target, din_l, dout_l, din, dout});
  };
  if (base_gemm == "attn_pre_proj") {
    add("q", h, g.q_local, h, q_out);
    add("k", h, g.kv_local, h, kv_out);
    add("v", h, g.kv_local, h, kv_out);
  } else if (base_gemm == "attn_post_proj") {
    add("o", g.q_local, h, q_out, h);
  } else if (base_gemm == "mlp_up_proj") {
    add("up", h, g.dims.intermediate, h, m.intermediate_size);
    add("gate", h, g.dims.intermediate, h, m.intermediate_size);
  } else if (base_gemm == "mlp_down_proj") {
    add("down", g.dims.intermediate, h, m.intermediate_size, h);
  }
  return out;
}

double lora_params_per_layer(const GraphContext& g, bool per_gpu) {
  double params = 0;
  for (const char* base : {"attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj"})
    for (const LoraAdapter& ad : lora_adapters_for(g, base))
      params += static_cast<double>(g.config.lora.rank) *
                static_cast<double>(per_gpu ? ad.d_in_local + ad.d_out_local : ad.d_in + ad.d_out);
  return params;
}

void add_lora_adapter_ops(const GraphContext& g, const Operator& base, OpTag tag, TrainingGraph& graph) {
  const int64_t rank = g.config.lora.rank;
  for (const LoraAdapter& ad : lora_adapters_for(g, base.name)) {
    OpTag at = tag;
    at.part = (ad.target == "up" || ad.target == "gate" || ad.target == "down") ? kPartMlp : kPartAttnOther;
    const Operator pa = make_gemm_operator("lora_" + ad.target + "_a", base.count, g.tokens, rank, ad.d_in_local,
                                           g.act_bytes, g.act_bytes, g.act_dtype);
    const Operator pb = make_gemm_operator("lora_" + ad.target + "_b", base.count, g.tokens, ad.d_out_local, rank,
                                           g.act_bytes, g.act_bytes, g.act_dtype);
    graph.forward.add(pa, at);
    graph.forward.add(pb, at);
    for (const Operator& bo : build_backward_step(StepOperators{{pa}}, g.precision).ops) graph.backward.add(bo, at);
    for (const Operator& bo : build_backward_step(StepOperators{{pb}}, g.precision).ops) graph.backward.add(bo, at);
  }
}

}  // namespace sightline
