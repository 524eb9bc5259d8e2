#pragma once
// The latency job's result, typed: computed by LatencyJob, written once by
// to_json. Key metrics are taken from these fields.
#include <string>

#include "core/dtype.hpp"
#include "mem/inference_memory.hpp"
#include "perf/step_cost.hpp"
#include "run/key_metric.hpp"
#include "run/result_header.hpp"

namespace sightline {

struct LatencyResult {
  ResultHeader header;
  // Deployment.
  std::string gpu;
  int tp = 1, pp = 1;
  Dtype weights = Dtype::BF16, kv_cache = Dtype::BF16;
  // Workload.
  int64_t prompt_tokens = 0, output_tokens = 0, batch_size = 1;

  struct Metrics {
    double ttft_ms = 0, tpot_ms = 0, e2e_ms = 0;
    double output_tokens_per_s = 0, output_tokens_per_s_per_gpu = 0;
    double decode_tokens_per_s = 0, prefill_tokens_per_s = 0;
    double energy_J_per_output_token = 0;
    // Achieved utilization while a step runs (perf/power.hpp): the prefill
    // step's, and the decode steps' together (time-weighted).
    double prefill_mfu = 0, prefill_mbu = 0, decode_mfu = 0, decode_mbu = 0;
    bool has_cost = false;  // a GPU-hour price was given
    double usd_per_million_output_tokens = 0;
  } metrics;

  // 80% intervals from the calibration residuals.
  struct Interval {
    double low_ms = 0, high_ms = 0;
  } ttft_interval, tpot_interval, e2e_interval;

  std::string cost_tier, provenance, software_stack;
  double peak_tflops = 0, hbm_bandwidth_GBps = 0;
  double decode_weight_read_floor_ms = 0, prefill_compute_floor_ms = 0;
  InferenceMemory memory;
  BreakdownAccumulator prefill_breakdown, decode_breakdown;
  double decode_steps = 0;  // decode_breakdown holds this many steps
};

json to_json(const LatencyResult& r);
KeyMetrics key_metrics(const LatencyResult& r);

}  // namespace sightline
