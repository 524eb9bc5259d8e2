#pragma once
// Sums the priced operators of one step and keeps the per-operator parts, so
// every step time can be shown as what it is made of.
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "perf/kernel_cost.hpp"

namespace sightline {

struct PricedOperator {
  std::string name;
  OpFamily family = OpFamily::Elementwise;
  double count = 0;
  double time_s = 0;   // all invocations in the step
  double flops = 0;    // all invocations
  double bytes = 0;    // all invocations
  std::string bound;
};

struct StepCost {
  double time_s = 0;
  std::vector<PricedOperator> parts;  // in operator order
};

StepCost price_step(const StepOperators& step, const KernelCostModel& model, const CostContext& ctx);

// Accumulates steps with the same operator names (e.g. all decode steps).
class BreakdownAccumulator {
 public:
  void add(const StepCost& step);
  // Per-step mean when `divide_by` is the number of steps added.
  json to_json(double divide_by) const;

 private:
  std::vector<PricedOperator> totals_;
};

}  // namespace sightline
