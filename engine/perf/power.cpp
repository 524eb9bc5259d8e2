#include "perf/power.hpp"

#include <algorithm>

namespace sightline {

double dense_peak_tflops(const GpuSpec& gpu, Dtype d) {
  const double peak = gpu.peak_tflops_for(d);
  if (peak > 0) return peak;
  return gpu.peak_tflops.fp16 > 0 ? gpu.peak_tflops.fp16 : gpu.peak_tflops.bf16;
}

Utilization utilization(double compute_peak_s, double memory_peak_s, double seconds) {
  Utilization u;
  if (seconds <= 0) return u;
  u.compute = std::clamp(compute_peak_s / seconds, 0.0, 1.0);
  u.memory = std::clamp(memory_peak_s / seconds, 0.0, 1.0);
  return u;
}

double gpu_activity(const Utilization& u) { return std::min(1.0, u.compute + 0.5 * u.memory); }

double gpu_power_W(const GpuSpec& gpu, double activity) {
  return gpu.idle_power_W + (gpu.tdp_W - gpu.idle_power_W) * std::clamp(activity, 0.0, 1.0);
}

double busy_energy_J(const GpuSpec& gpu, double compute_peak_s, double memory_peak_s, double seconds) {
  if (seconds <= 0) return 0;
  return gpu_power_W(gpu, gpu_activity(utilization(compute_peak_s, memory_peak_s, seconds))) * seconds;
}

double step_energy_per_gpu_J(const GpuSpec& gpu, int pp, double compute_peak_s, double memory_peak_s, double step_s) {
  const double stages = static_cast<double>(std::max(1, pp));
  const double busy_s = step_s / stages;
  return busy_energy_J(gpu, compute_peak_s / stages, memory_peak_s / stages, busy_s) +
         gpu.idle_power_W * (step_s - busy_s);
}

}  // namespace sightline
