#pragma once
// The fixed time of a single-pass (fused) kernel, fitted from timings of such
// kernels (presets/calibrations/measured/fused_<gpu>_<date>.csv).
//
// A fused RoPE, SiLU-and-mul or add + RMSNorm on few tokens is far from
// bandwidth-bound: it takes its launch plus one program's chain of dependent
// loads (RoPE: the position, then its cos/sin row, then q and k; add + RMSNorm:
// x and the residual, the reduction, the weight), whatever its bytes. That
// chain depends on the kernel, so each class gets its own fixed time, and the
// kernel's bytes stream on top of it (CalibratedCostModel::cost).
#include <cstdint>
#include <string>
#include <vector>

#include "hw/hardware.hpp"
#include "perf/calibration.hpp"

namespace sightline {

// One timed single-pass kernel.
struct SinglePassTiming {
  KernelClass kernel_class = KernelClass::Elementwise;  // Rope, Activation or Norm
  double bytes = 0;          // its minimum traffic (every input read once, every output written once)
  int64_t row_programs = 0;  // programs of one token row each (RoPE, RMSNorm); 0: not counted
  double time_s = 0;
};

// Seconds `row_programs` one-row programs take at the GPU's bounded program
// rate (calibrated_cost.cpp, kSmCyclesPerRowProgram); 0 when not counted.
double row_programs_s(int64_t row_programs, const GpuSpec& g);

// The time a single-pass kernel takes past its fixed time: its bytes at the
// streaming (elementwise) class's efficiency with no L2 hits, or its programs
// at their bounded rate, whichever is slower.
double single_pass_streaming_s(const SinglePassTiming& t, const KernelCalibration& cal, const GpuSpec& g);

// Sets each measured class's single_pass_fixed_us in `cal` to the median of
// (measured − streaming) over its kernels far from bandwidth-bound: those
// whose streaming time is under half the elementwise class's launch. Classes
// with no such kernel are left as they are. `source` names the measurement.
void fit_single_pass_fixed_times(KernelCalibration& cal, const GpuSpec& g, const std::vector<SinglePassTiming>& timings,
                                 const std::string& source);

}  // namespace sightline
