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
  p.watts = gpu_power_W(gpu, p.compute_utilization + 0.5 * p.memory_utilization);
  p.joules = p.watts * seconds;
  return p;
}

double gpu_power_W(const GpuSpec& gpu, double activity) {
  return gpu.idle_power_W + (gpu.tdp_W - gpu.idle_power_W) * std::clamp(activity, 0.0, 1.0);
}

}  // namespace sightline
