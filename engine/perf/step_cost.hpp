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
  OpRole role = OpRole::Other;  // the operator's (model/operators.hpp)
  double count = 0;
  double time_s = 0;   // all invocations in the step
  double time_low_s = 0, time_high_s = 0;  // 80% interval
  double flops = 0;    // all invocations
  double bytes = 0;    // all invocations
  std::string bound;
};

struct StepCost {
  double time_s = 0;       // wall time of the step, host overhead included
  double gpu_time_s = 0;   // sum of the kernels
  double time_low_s = 0;   // 80% interval, errors taken as fully correlated within the step
  double time_high_s = 0;
  double flops = 0;
  double bytes = 0;
  // What the step's work would take at the GPU's peaks, the numerators of its
  // achieved utilization (perf/power.hpp): every non-collective operator's
  // FLOPs at the dense peak of its compute dtype (the MFU convention: all
  // FLOPs against the tensor-core peak), and its HBM bytes at the spec-sheet
  // bandwidth. Collectives move link bytes, not HBM bytes, and count in neither.
  double compute_peak_s = 0;
  double memory_peak_s = 0;
  std::vector<PricedOperator> parts;  // in operator order (+ "host_overhead" when exposed)
  // The operators' counts summed in order (kernel launches, perf/host_overhead.hpp
  // host_time) and whether any is a prompt's attention, counted in the same
  // pass as the figures so a serving step walks its operators once.
  double kernels = 0;
  bool has_prefill = false;
  // The build (StepReuse::build) whose figures the parts hold, when
  // price_step_into wrote them without labels from an OpCostMemo (0: none):
  // a core-only rebuild over that build rewrites only the rebuilt parts.
  uint64_t parts_build = 0;
};

StepCost price_step(const StepOperators& step, const KernelCostModel& model, const CostContext& ctx);
// The same into `out`, every field overwritten: its parts (and their names'
// storage) are reused, so a simulator that prices a step per event keeps
// allocating nothing once the largest step has been priced. `labels` false:
// the parts' name and bound are left as they were (not this step's), for a
// caller that reads only their figures (the serving simulator prices a step
// per event; copying ~40 names and bounds per step was a tenth of its CPU).
// `memo`: see OpCostMemo (nullptr: every operator priced).
struct OpCostMemo;
void price_step_into(const StepOperators& step, const KernelCostModel& model, const CostContext& ctx, StepCost& out,
                     bool labels = true, OpCostMemo* memo = nullptr);

// The previous step's operators and their costs, by position, for a caller
// that prices similar steps one after another with one model and context (the
// serving simulator, one memo per cost setup: from one decode step to the next
// only the attention operators change, the GEMMs, norms and the rest are the
// same). An operator equal in every field to the one priced at its position
// last time takes that cost: exact, as KernelCostModel::cost is a pure function
// of the operator and the context.
// What an operator adds to its step, derived from it and its cost alone (so a
// memo hit takes these too, without redoing the products and divisions).
struct OpStepFigures {
  double time_s = 0, time_low_s = 0, time_high_s = 0;  // all invocations
  double flops = 0, bytes = 0;                         // all invocations
  // Its share of StepCost's; 0 where it counts none (collectives, no GPU,
  // no dense peak for its dtype), so a step adds every operator's.
  double compute_peak_s = 0, memory_peak_s = 0;
};
// A step's sums in operator order up to some operator (StepCost's figures
// and its kernel count): a step whose operators before that one are the same
// starts from them and adds the rest, the same sums bit for bit.
struct StepSums {
  double time_s = 0, time_low_s = 0, time_high_s = 0, flops = 0, bytes = 0;
  double compute_peak_s = 0, memory_peak_s = 0, kernels = 0;
  bool has_prefill = false;
};
struct OpCostMemo {
  std::vector<Operator> ops;
  std::vector<OpCost> costs;
  std::vector<OpStepFigures> figures;
  int64_t reused = 0, priced = 0;  // operators that took the memo's cost, and those priced
  // The build last priced (StepReuse::build): when the list now priced is
  // that build with only its attention cores rebuilt (StepOptions::reuse_unchanged),
  // the operators the rebuild left are the memo's own and take their costs
  // without a comparison.
  uint64_t build = 0;
  // The sums before operator `resume_at`, the first a core-only rebuild
  // rewrote (0: none kept): the operators before it are the same in every
  // rebuild over the build priced last, so the next one starts there (with
  // the parts kept, StepCost::parts_build), not at the first operator.
  size_t resume_at = 0;
  StepSums resume_sums;
};
// Every field of the two operators equal (doubles bit for bit).
bool same_operator(const Operator& a, const Operator& b);

// Accumulates steps with the same operator names (e.g. all decode steps).
class BreakdownAccumulator {
 public:
  void add(const StepCost& step);
  // Per-step mean when `divide_by` is the number of steps added.
  json to_json(double divide_by) const;
  // The same parts summed per operator family.
  json families_json(double divide_by) const;

 private:
  std::vector<PricedOperator> totals_;
};

}  // namespace sightline
