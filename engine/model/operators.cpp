#include "model/operators.hpp"

#include "model/kv_footprint.hpp"
#include "model/step_builder.hpp"

#include <algorithm>
#include <cmath>

namespace sightline {

ShardDims shard_dims(const ModelArch& m, int tp) {
  ShardDims d;
  d.heads = m.num_heads / tp;
  d.kv_heads = kv_heads_per_gpu(m.num_kv_heads, tp);
  d.intermediate = (m.intermediate_size + tp - 1) / tp;
  d.expert_intermediate = (m.moe.expert_intermediate_size + tp - 1) / tp;
  d.vocab = (m.vocab_size + tp - 1) / tp;
  return d;
}

// With more TP ranks than KV heads, each rank keeps a replica of one KV head.
int kv_heads_per_gpu(int kv_heads, int tp) { return std::max(1, kv_heads / tp); }

double kv_bytes_per_token_per_gpu(const ModelArch& m, const Precision& p, int tp, int layers) {
  // Every attention layer's KV per token (windowed layers included, as long
  // as the context is shorter than their window); fixed state is not per token.
  return kv_footprint_per_gpu(m, p, tp, static_cast<double>(layers) / m.num_layers).bytes_per_token_uncapped();
}

using step_building::StepBuilder;

double weight_bytes_read(const StepOperators& step) {
  double bytes = 0;
  for (const Operator& op : step.ops) bytes += op.count * op.weight_bytes;
  return bytes;
}

StepOperators build_forward_step(const ModelArch& m, const Precision& p, const ParallelLayout& layout,
                                 const BatchShape& batch, const StepOptions& options) {
  StepOperators out;
  StepBuilder(m, p, layout, batch, options, out).build();
  return out;
}

void build_forward_step_into(const ModelArch& m, const Precision& p, const ParallelLayout& layout,
                             const BatchShape& batch, const StepOptions& options, StepOperators& out) {
  StepBuilder(m, p, layout, batch, options, out).build();
}

}  // namespace sightline
