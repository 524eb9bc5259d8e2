#include "train/framework_costs.hpp"

#include <algorithm>

namespace sightline {

namespace {
constexpr double kScalarBytes = 4.0;          // fp32 norm / amax
constexpr double kFwdAmaxPerModule = 2.0;     // input and weight
constexpr double kBwdAmaxPerModule = 1.0;     // output gradient
constexpr double kInputBytesPerToken = 16.0;  // int64 token id + int64 label
}  // namespace

GroupShape world_group(int n, int gpus_per_node) {
  GroupShape g;
  g.size = std::max(1, n);
  g.local = std::max(1, std::min(g.size, gpus_per_node));
  g.nodes = (g.size + g.local - 1) / g.local;
  return g;
}

FrameworkCosts framework_step_costs(const FrameworkCostInputs& in, const CommPricer& comm) {
  FrameworkCosts c;
  const GroupShape world = world_group(in.world_gpus, in.gpus_per_node);
  if (world.size > 1) c.grad_norm_allreduce_s = comm.collective(CollectiveKind::AllReduce, kScalarBytes, world);
  if (in.fp8_modules > 0 && in.amax_group.size > 1) {
    const double fwd = comm.collective(CollectiveKind::AllReduce, kFwdAmaxPerModule * in.fp8_modules * kScalarBytes, in.amax_group);
    const double bwd = comm.collective(CollectiveKind::AllReduce, kBwdAmaxPerModule * in.fp8_modules * kScalarBytes, in.amax_group);
    c.fp8_amax_allreduce_s = in.micro_batches * (fwd + bwd);
  }
  if (in.pcie_GBps > 0)
    c.input_copy_s = in.micro_batches * in.tokens_per_micro_batch * kInputBytesPerToken / (in.pcie_GBps * 1e9);
  return c;
}

}  // namespace sightline
