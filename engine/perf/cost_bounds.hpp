#pragma once
// Honest uncertainty for whole results: every kernel cost carries an 80%
// interval (OpCost::time_low_s / time_high_s); a job re-run with a
// BoundedCostModel prices every kernel at its low or high bound, so headline
// metrics (percentiles, throughput, step time, MFU ...) get intervals that
// went through the same scheduling, queueing and overlap as the central run.
// Errors are taken as fully correlated across kernels (one run per bound),
// which is what a systematic calibration error does.
#include <memory>
#include <string>

#include "core/json_reader.hpp"
#include "perf/kernel_cost.hpp"

namespace sightline {

enum class CostBound { Central, Low, High };

const char* cost_bound_name(CostBound b);

// Prices every operator at one bound of the inner model's 80% interval.
class BoundedCostModel : public KernelCostModel {
 public:
  BoundedCostModel(std::unique_ptr<KernelCostModel> inner, CostBound bound);
  std::string tier() const override { return inner_->tier(); }
  OpCost cost(const Operator& op, const CostContext& ctx) const override;
  AccuracySummary accuracy() const override { return inner_->accuracy(); }

 private:
  std::unique_ptr<KernelCostModel> inner_;
  CostBound bound_;
};

}  // namespace sightline
