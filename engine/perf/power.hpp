#pragma once
// The one GPU power model every energy figure uses (latency runs, the serving
// simulator, training runs), driven by achieved utilization.
//
// Utilization of a span of busy time t (one step on one GPU):
//   u_compute = compute_peak_s / t   (MFU: the step's FLOPs at dense peak / t)
//   u_memory  = memory_peak_s / t    (MBU: the step's HBM bytes at peak bandwidth / t)
// with compute_peak_s and memory_peak_s from the priced step (StepCost).
//
// Power while busy:
//   P = idle_power_W + (tdp_W − idle_power_W) · activity,
//   activity = min(1, u_compute + 0.5 · u_memory)
// and idle_power_W while no step runs.
//
// Why this form: board power is a static floor (leakage, fans, memory refresh:
// the preset's idle_power_W) plus dynamic power that grows with switching
// activity, capped by the power limit (TDP). Tensor-core work dominates the
// dynamic part, so a step at dense peak reaches the cap; streaming HBM at full
// bandwidth keeps the memory system and part of the SMs busy and is taken as
// half the headroom. This is the static + compute + memory split of
// GenZ's power.py (reference/anchors.md, "Energy"); the weights 1 and 0.5 are
// assumptions, not fitted: no power measurements ship with the project, and no
// constant here is tuned toward an end-to-end row. Because the dynamic term is
// linear in work below the cap, a step's energy is
//   idle_power_W · t + (tdp_W − idle_power_W) · (compute_peak_s + 0.5 · memory_peak_s),
// so the same work costs the same energy however it is scheduled, and time a
// GPU spends waiting (queue empty, host overhead, pipeline bubbles) costs idle
// power only.
#include "hw/hardware.hpp"

namespace sightline {

// Dense peak (TFLOP/s) a FLOP of compute dtype `d` is measured against: the
// tensor-core peak of that dtype, or the FP16/BF16 peak where the GPU has none
// for it (e.g. FP8 on Ampere runs as BF16). 0 only for a GPU without either.
double dense_peak_tflops(const GpuSpec& gpu, Dtype d);

// Achieved fractions of peak over `seconds` of busy time, each in [0, 1].
struct Utilization {
  double compute = 0;  // MFU
  double memory = 0;   // MBU
};
Utilization utilization(double compute_peak_s, double memory_peak_s, double seconds);

// min(1, u_compute + 0.5 · u_memory).
double gpu_activity(const Utilization& u);

// idle_power_W + (tdp_W − idle_power_W) · activity, activity clamped to [0, 1].
double gpu_power_W(const GpuSpec& gpu, double activity);

// Energy of one GPU busy for `seconds` on work that takes `compute_peak_s` at
// dense peak and `memory_peak_s` at HBM peak.
double busy_energy_J(const GpuSpec& gpu, double compute_peak_s, double memory_peak_s, double seconds);

// Energy of one GPU over one step of `step_s` wall time on a replica of
// tp × pp GPUs, `compute_peak_s` and `memory_peak_s` being the step's (all
// layers, one tensor-parallel rank): each stage's GPU runs its 1/pp of the
// layers for step_s / pp and idles the rest of the step.
double step_energy_per_gpu_J(const GpuSpec& gpu, int pp, double compute_peak_s, double memory_peak_s, double step_s);

}  // namespace sightline
