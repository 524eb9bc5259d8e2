#include "perf/power.hpp"

#include <algorithm>

namespace sightline {

PowerEstimate step_power(const GpuSpec& gpu, Dtype compute_dtype, double flops, double bytes, double seconds) {
  PowerEstimate p;
  if (seconds <= 0) return p;
  double peak = gpu.peak_tflops_for(compute_dtype);
  if (peak <= 0) peak = std::max(gpu.peak_tflops.fp16, gpu.peak_tflops.bf16);
  p.compute_utilization = std::min(1.0, flops / seconds / (peak * 1e12));
  p.memory_utilization = std::min(1.0, bytes / seconds / (gpu.hbm_bandwidth_GBps * 1e9));
  const double activity = std::min(1.0, p.compute_utilization + 0.5 * p.memory_utilization);
  p.watts = gpu.idle_power_W + (gpu.tdp_W - gpu.idle_power_W) * activity;
  p.joules = p.watts * seconds;
  return p;
}

}  // namespace sightline
