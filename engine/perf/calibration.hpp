#pragma once
// Calibrated kernel-efficiency parameters for one GPU, as stored under
// presets/calibrations/. Every kernel class records where its numbers come
// from ("measured" on this GPU, "anchored" = shape transferred and level fitted
// to a few measurements of this GPU, or "transferred" from another GPU) and the
// residuals of its fit, which give each prediction its 80% interval.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "hw/hardware.hpp"
#include "model/operators.hpp"

namespace sightline {

// Kernel classes priced by separate calibrated curves.
enum class KernelClass {
  Gemm,
  AttentionPrefill,
  AttentionDecode,
  Norm,
  Rope,
  Activation,
  ResidualAdd,
  Embedding,
  Elementwise,  // other memory-bound kernels (KV-cache write, MoE permute, sampling, router softmax)
  Collective,
};

KernelClass kernel_class_of(const Operator& op);
std::string kernel_class_name(KernelClass k);
const std::vector<KernelClass>& memory_bound_classes();

struct FitResiduals {
  int samples = 0;
  double median_ape = 0;   // median |pred − meas| / meas on the fitted samples
  double p90_ape = 0;
  double log_q10 = 0;      // 10th / 90th percentile of log(meas / pred): the 80% band
  double log_q90 = 0;
  json to_json() const;
  static FitResiduals from_json(const json& j, const std::string& path);
};

// One output-tile configuration a GEMM library may choose. `efficiency` is the
// tile's compute efficiency relative to the largest tile (smaller tiles reuse
// operands less, so they run each FLOP slower but quantize waves more finely).
struct GemmTile {
  int m = 128, n = 128;
  double efficiency = 1.0;
};

struct GemmParams {
  std::string provenance;
  double launch_us = 5;
  double eta_compute = 0.75;  // fraction of the dtype's dense peak for the largest tile
  double eta_memory = 0.75;   // fraction of HBM bandwidth when weight-streaming
  double blend_p = 4;         // smooth max: (tc^p + tm^p)^(1/p); large p → plain max
  // Candidate tiles; a GEMM is priced as the fastest tile (with split-K where
  // K is long and the tiles are few), and wave quantization follows that tile.
  // The 16-row tile stands for the skinny (GEMV-like, mma m16) kernels
  // libraries pick for a few tokens: no 64-row padding, lower per-FLOP rate.
  std::vector<GemmTile> tiles = {{128, 256, 1.0}, {128, 128, 0.9}, {64, 128, 0.8}, {64, 64, 0.6}, {16, 128, 0.4}};
  std::map<std::string, double> dtype_scale;  // eta_compute multiplier per dtype (fp8 ...)
  // eta_memory multiplier per math dtype, for a dtype whose measured GEMMs
  // all stream their weights (Blackwell's block-scaled FP4 GEMVs): those
  // rows identify how fast it streams, not a compute multiplier. Plain GEMMs
  // only; a grouped (MoE) GEMM of the dtype keeps eta_memory (no figure).
  std::map<std::string, double> dtype_memory_scale;
  // eta_memory multiplier of grouped (MoE) GEMMs whose weights, stored in
  // the named format, a weight-only kernel dequantizes in its main loop
  // (MXFP4 experts on Hopper, triton_kernels' matmul_ogs): fitted from that
  // kernel's published timings, which stream the weights.
  std::map<std::string, double> grouped_weight_only_memory_scale;
  // The best achieved TFLOP/s measured on this GPU per dtype, over all shapes
  // (mamf-finder figures and our sweeps' maxima): no shape is priced faster.
  std::map<std::string, double> ceiling_tflops;
  std::string ceiling_source;
  FitResiduals residuals;
};

struct MemoryKernelParams {
  std::string provenance;
  double launch_us = 3;
  double eta_memory = 0.7;
  // How much faster the kernel streams a working set that fits in the GPU's
  // L2 cache than one that streams from HBM (>= 1; 1 = no L2 term). Only the
  // classes of l2_resident_class() use it: their input is the activation the
  // previous kernel just wrote, so it is still in L2 when small enough.
  double l2_speedup = 1;
  FitResiduals residuals;
  // The fixed time (µs) of this class's single-pass (fused) kernel: launch
  // plus one program's chain of dependent loads, what it takes when far from
  // bandwidth-bound (perf/single_pass_fit.hpp). 0: none measured, and the
  // fused kernel starts at the elementwise class's launch.
  double single_pass_fixed_us = 0;
  std::string single_pass_source;  // how it was fitted, with its measurement file
};

// Classes whose operands are activations produced by the kernel just before
// (norm, rope, activation, residual add, other elementwise): their traffic is
// served from L2 when it fits. Not decode attention (each layer reads its own
// KV cache from HBM) nor embedding (a gather from a table in HBM).
bool l2_resident_class(KernelClass k);
// The bytes of a kernel's traffic served from the GPU's L2 (`l2_cache_MiB`)
// when the same working set is streamed again and again (the next layer's
// kernel, the next replay): all of it up to half the capacity, a share falling
// linearly to none at the capacity, none past it.
// - Half: the L2 is two partitions, each caching the lines its own SMs touch
//   (A100 whitepaper, "L2 Cache"; Hopper keeps the split), so a line read by
//   SMs on both sides is held twice.
// - None past the capacity: a set streamed cyclically through an LRU-like
//   cache it does not fit in is evicted line by line before its reuse.
// Measured so on H100: cudaMemcpy D2D runs at its L2 peak at 26 MB moved and
// at plain HBM speed from about 40 MB (bandwidthTest shmoo, the raw log behind
// measurements.md's B1: github.com/ZiyanIshani/vpbenchmarking,
// results/stream_nvbench/bandwidth_d2d_20260225_183138.txt), and our 64 MiB
// copies (1.28x the H100/H200 L2) run at plain HBM speed. Continuous, and the
// time never falls as bytes grow (the hit share falls no faster than bytes grow).
double l2_hit_bytes(double bytes, double l2_cache_MiB);

// Efficiency as a piecewise-linear function of log2(x), clamped at both ends.
struct EtaCurve {
  std::vector<double> log2_x;
  std::vector<double> eta;
  double at(double x) const;
  bool empty() const { return eta.empty(); }
  json to_json() const;
  static EtaCurve from_json(const json& j, const std::string& path);
};

struct AttentionParams {
  std::string provenance;
  double launch_us = 10;
  EtaCurve flash_fwd;   // causal FlashAttention forward, x = context length per sequence
  EtaCurve flash_bwd;   // causal FlashAttention backward
  EtaCurve standard;    // materialized-scores attention (fwd and bwd alike)
  FitResiduals residuals;
};

struct KernelCalibration {
  std::string id;      // the GPU preset id it calibrates
  std::string source;
  std::string notes;
  GemmParams gemm;
  AttentionParams attention;
  std::map<KernelClass, MemoryKernelParams> memory;  // every class in memory_bound_classes()
  // Achieved fraction of HBM bandwidth of a plain device copy, when measured:
  // the anchor that scales memory efficiencies when transferring to another GPU.
  double copy_bandwidth_eta = 0;
  // Device time of one almost empty kernel in a CUDA graph (our launch rows):
  // no kernel is priced below it. 0 when not measured on this GPU or its base.
  double kernel_floor_us = 0;

  json to_json() const;
  static KernelCalibration from_json(const json& j, const std::string& path);
};

// The measured cross-GPU transfer error per kernel class
// (presets/transfer_errors/kernels.json); empty when not generated yet.
const std::map<KernelClass, FitResiduals>& kernel_transfer_errors();

// The calibration shipped under a calibration id, or nullptr. The engine
// reaches a GPU's own data through own_calibration (the GPU's `calibration`
// value), never by the GPU's id; maintainer commands name calibrations directly.
const KernelCalibration* find_calibration(const std::string& calibration_id);
// The measured calibration a GPU's values name (its `calibration` field), or nullptr.
const KernelCalibration* own_calibration(const GpuSpec& gpu);
// Starting values of a fit when nothing is known (every provenance "default").
const KernelCalibration& default_calibration();

// A shipped calibration with the spec-sheet values of the GPU it was measured on.
struct MeasuredGpu {
  const KernelCalibration* calibration = nullptr;
  GpuSpec gpu;
};
// Every shipped calibration whose GPU preset ships too.
const std::vector<MeasuredGpu>& measured_gpus();
// How far apart two GPUs' spec sheets are: the sum of |log ratio| of the
// values that govern kernel time (16-bit tensor peak, HBM bandwidth, L2, SMs,
// clock), plus one per mismatch of vendor and of architecture generation, so a
// GPU of the same generation is nearer than any other. 0 for equal values.
double spec_distance(const GpuSpec& a, const GpuSpec& b);
// A GPU that cross-generation transfer may start from, with the size of its
// measured GEMM sweep (the tie-break: the most complete efficiencies win).
struct SpecCandidate {
  const GpuSpec* gpu = nullptr;
  int64_t sweep_samples = 0;
};
// The index of the candidate nearest `gpu` by spec_distance; ties go to the
// larger sweep, then to the earlier candidate. The one rule for choosing a
// transfer source: the product (nearest_measured_gpu) and report-accuracy's
// leave-one-GPU-out both call it. SIZE_MAX when there is no candidate.
std::size_t nearest_by_spec(const GpuSpec& gpu, const std::vector<SpecCandidate>& candidates);
// The measured GPU cross-generation transfer starts from for `gpu`: the one
// nearest by spec_distance, leaving out the calibration `gpu` itself names
// (the cross-generation tier uses no measurement of the target). Ties go to
// the larger sweep. nullptr when nothing is measured.
const MeasuredGpu* nearest_measured_gpu(const GpuSpec& gpu);
// The measured GPU with the largest GEMM sweep (the roofline tier's interval
// reaches up to its efficiencies).
const KernelCalibration& reference_calibration();

}  // namespace sightline
