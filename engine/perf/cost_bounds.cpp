#include "perf/cost_bounds.hpp"

namespace sightline {

const char* cost_bound_name(CostBound b) {
  switch (b) {
    case CostBound::Central: return "central";
    case CostBound::Low: return "low";
    case CostBound::High: return "high";
  }
  return "central";
}

BoundedCostModel::BoundedCostModel(std::unique_ptr<KernelCostModel> inner, CostBound bound)
    : inner_(std::move(inner)), bound_(bound) {}

OpCost BoundedCostModel::cost(const Operator& op, const CostContext& ctx) const {
  OpCost c = inner_->cost(op, ctx);
  if (bound_ == CostBound::Central) return c;
  const double scale = c.time_s > 0 ? (bound_ == CostBound::Low ? c.time_low_s : c.time_high_s) / c.time_s : 1.0;
  c.time_s *= scale;
  c.compute_s *= scale;
  c.memory_s *= scale;
  // The bound's run has its own point estimate; its interval collapses onto it.
  c.time_low_s = c.time_high_s = c.time_s;
  return c;
}

}  // namespace sightline
