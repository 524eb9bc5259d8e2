#pragma once
// GPU power while running a step: idle power plus a share of the headroom to
// TDP that grows with compute and memory utilization, capped at TDP.
// P = idle + (TDP − idle) · min(1, u_compute + 0.5 · u_memory), with u the
// achieved fraction of the dense peak and of HBM bandwidth over the step.
// The weights are assumptions (no power measurements ship with the project):
// a compute-saturated GEMM step draws about TDP; a bandwidth-saturated decode
// step about half the headroom.
#include "hw/hardware.hpp"

namespace sightline {

struct PowerEstimate {
  double watts = 0;
  double joules = 0;
  double compute_utilization = 0;
  double memory_utilization = 0;
};

PowerEstimate step_power(const GpuSpec& gpu, Dtype compute_dtype, double flops, double bytes, double seconds);

// The one power curve every estimate uses: idle + (TDP − idle) · activity,
// activity clamped to [0, 1]. Callers choose the activity: a step's
// utilization (above), the serving simulator's busy fraction, or the training
// step's compute fraction.
double gpu_power_W(const GpuSpec& gpu, double activity);

}  // namespace sightline
