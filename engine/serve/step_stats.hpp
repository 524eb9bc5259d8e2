#pragma once
// The serving simulator's step statistics, fed by its hooks as steps start,
// tokens come out and KV moves between pools: step counts and mean batch,
// achieved utilization (per-step MFU and MBU histograms, the run's
// GPU-seconds of work at peak and of busy time), the inter-token gaps and the
// KV transfers. Every run keeps them (search runs too); the detailed records
// are SimTrace's.
#include <cstdint>
#include <vector>

#include "perf/power.hpp"
#include "serve/serving_metrics.hpp"
#include "serve/sim_state.hpp"
#include "serve/stats.hpp"
#include "serve/step_pricer.hpp"

namespace sightline::serve {

class StepStats {
 public:
  // `itl_bound_ns`: the SLO's ITL bound, 0 for none.
  explicit StepStats(TimeNs itl_bound_ns) : itl_bound_ns_(itl_bound_ns) {}

  // A step started on `tp` ranks for `step_s` on the clock (whole ns): its
  // achieved utilization, counted in the histograms and totals.
  Utilization on_step(const StepBatch& b, const PeakWork& work, double tp, double step_s);
  // A request produced a token `gap` after its previous one: true when the
  // gap is past the SLO's ITL bound. Per token: inline.
  bool on_token_gap(TimeNs gap) {
    itl_.add(gap);
    return itl_bound_ns_ > 0 && gap > itl_bound_ns_;
  }
  // A KV transfer of `bytes` (all GPUs of the source) taking `ms` from the handoff.
  void on_transfer(double bytes, double ms);

  int64_t steps() const { return steps_; }
  double mean_batch() const;   // requests per step
  double mean_tokens() const;  // new tokens per step
  // The run's achieved utilization over `duration_s` on `gpus` GPUs.
  ServingMetrics::Utilization mfu(double duration_s, int gpus) const;
  ServingMetrics::Utilization mbu(double duration_s, int gpus) const;
  Summary itl_ms() const;
  int64_t transfers() const { return transfers_; }
  double mean_transfer_MiB() const;
  Summary transfer_ms() const;

 private:
  ServingMetrics::Utilization utilization_over(double peak_gpu_s, const FractionHistogram& per_step, double duration_s,
                                               int gpus) const;
  TimeNs itl_bound_ns_ = 0;
  int64_t steps_ = 0;
  double sum_batch_ = 0, sum_tokens_ = 0;
  FractionHistogram step_mfu_, step_mbu_;
  double compute_peak_gpu_s_ = 0, memory_peak_gpu_s_ = 0, busy_gpu_s_ = 0;
  GapHistogram itl_;
  int64_t transfers_ = 0;
  double transfer_bytes_ = 0;
  std::vector<double> transfer_ms_;
};

}  // namespace sightline::serve
