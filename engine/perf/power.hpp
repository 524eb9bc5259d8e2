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

}  // namespace sightline
