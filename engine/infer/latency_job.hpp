#pragma once
// Latency of one batch of identical requests on one deployment, with no queue:
// a prefill step for the whole batch, then one decode step per output token,
// each priced operator by operator at its exact KV length.
#include <algorithm>

#include "infer/latency_result.hpp"
#include "run/job.hpp"
#include "scenario/scenario.hpp"
#include "perf/cost_setup.hpp"

namespace sightline {

class LatencyJob : public Job {
 public:
  explicit LatencyJob(Scenario scenario);
  bool step(int64_t max_units) override;
  double progress() const override;
  json result() const override;
  // One unit per sequence priced: steps done x batch_size.
  int64_t units_done() const override { return done_units_ * std::max<int64_t>(1, s_.serving->workload.batch_size); }
  KeyMetrics key_metrics() const override;
  LatencyResult typed_result() const;  // valid once step() returned true

 private:
  StepCost price(const BatchShape& batch) const;
  void add_step_energy(const StepCost& c);

  Scenario s_;
  CostSetup cost_;
  int64_t total_units_ = 0;
  int64_t done_units_ = 0;
  StepCost prefill_;
  double decode_time_s_ = 0;
  double decode_low_s_ = 0, decode_high_s_ = 0;
  double decode_compute_peak_s_ = 0, decode_memory_peak_s_ = 0;  // the decode steps' work at peak
  double energy_J_ = 0;  // per GPU, prefill and every decode step
  BreakdownAccumulator decode_breakdown_;
};

}  // namespace sightline
