#pragma once
// A cluster calibration: a few interpretable corrections fitted to a user's
// own end-to-end benchmark results (`sightline fit`), applied on top of the
// kernel-level tiers. Each factor has a physical reading:
//   compute_efficiency_scale  multiplies η of compute-bound kernels (GEMMs, prefill attention)
//   memory_efficiency_scale   multiplies η of memory- and launch-bound kernels (decode GEMMs, norms ...)
//   comm_efficiency_scale     multiplies the achieved bandwidth of collectives
//   host_us_per_step          CPU time per engine step the stack model does not know of
//   request_latency_ms        constant per-request client latency (network, HTTP, tokenizer) added to
//                             a serving simulation's TTFT and E2E (jobs/client_request_latency), no step
// A scale of 1 and 0 µs leave every prediction unchanged.
#include <algorithm>
#include <memory>
#include <string>

#include "core/json_reader.hpp"
#include "perf/kernel_cost.hpp"

namespace sightline {

// What a calibration may hold: a factor outside its range is not a calibration
// of the same stack but a different machine or a broken benchmark. The reader
// refuses it and the fit (fit/calibration_fit) clamps to it, so what the fit
// writes the reader reads; the ranges are written here once for both.
struct FactorRange {
  double lo, hi;
  double clamp(double v) const { return std::min(hi, std::max(lo, v)); }
};
inline constexpr FactorRange kEfficiencyScaleRange{0.05, 20};  // each *_efficiency_scale
inline constexpr FactorRange kHostUsPerStepRange{0, 1e6};
inline constexpr FactorRange kRequestLatencyMsRange{0, 60000};

struct ClusterCalibration {
  std::string id;
  std::string source;  // where the fitted benchmark results came from
  double compute_efficiency_scale = 1;
  double memory_efficiency_scale = 1;
  double comm_efficiency_scale = 1;
  double host_us_per_step = 0;
  double request_latency_ms = 0;
  json fit;  // the fit's report (files, errors, held-out split), kept verbatim; null when none

  json to_json() const;
  // Strict reading; errors are located under `path`.
  static ClusterCalibration from_json(const json& j, const std::string& path);
};

// Prices kernels with an inner model, then divides each kernel's time by the
// calibration's efficiency scale of its bound (compute, memory/launch,
// communication). The interval scales with the point.
class ClusterScaledCostModel : public KernelCostModel {
 public:
  ClusterScaledCostModel(std::unique_ptr<KernelCostModel> inner, ClusterCalibration calibration);
  std::string tier() const override { return inner_->tier(); }
  OpCost cost(const Operator& op, const CostContext& ctx) const override;
  AccuracySummary accuracy() const override { return inner_->accuracy(); }

 private:
  std::unique_ptr<KernelCostModel> inner_;
  ClusterCalibration cal_;
};

}  // namespace sightline
