#include "perf/step_cost.hpp"

#include <algorithm>

namespace sightline {

StepCost price_step(const StepOperators& step, const KernelCostModel& model, const CostContext& ctx) {
  StepCost out;
  out.parts.reserve(step.ops.size());
  for (const Operator& op : step.ops) {
    const OpCost c = model.cost(op, ctx);
    PricedOperator p;
    p.name = op.name;
    p.family = op.family;
    p.count = op.count;
    p.time_s = c.time_s * op.count;
    p.flops = op.flops * op.count;
    p.bytes = op.bytes * op.count;
    p.bound = c.bound;
    out.time_s += p.time_s;
    out.parts.push_back(std::move(p));
  }
  return out;
}

void BreakdownAccumulator::add(const StepCost& step) {
  for (const PricedOperator& p : step.parts) {
    auto it = std::find_if(totals_.begin(), totals_.end(), [&](const PricedOperator& t) { return t.name == p.name; });
    if (it == totals_.end()) {
      totals_.push_back(p);
      continue;
    }
    it->time_s += p.time_s;
    it->flops += p.flops;
    it->bytes += p.bytes;
    it->count += p.count;
    if (p.bound != it->bound) it->bound = "mixed";
  }
}

json BreakdownAccumulator::to_json(double divide_by) const {
  json arr = json::array();
  const double d = divide_by > 0 ? divide_by : 1;
  for (const PricedOperator& t : totals_) {
    const double time = t.time_s / d;
    arr.push_back({{"name", t.name},
                   {"family", op_family_name(t.family)},
                   {"count", t.count / d},
                   {"time_us", time * 1e6},
                   {"flops", t.flops / d},
                   {"bytes", t.bytes / d},
                   {"achieved_tflops", time > 0 ? t.flops / d / time / 1e12 : 0.0},
                   {"achieved_GBps", time > 0 ? t.bytes / d / time / 1e9 : 0.0},
                   {"bound", t.bound}});
  }
  return arr;
}

}  // namespace sightline
