#pragma once
#include <vector>
// Calibrated kernel costs: launch + blend(FLOPs / (peak·η_c), bytes / (BW·η_m))
// with wave quantization, η per kernel class from a KernelCalibration. Each
// cost carries an 80% interval from the class's fit residuals.
#include "perf/calibration.hpp"
#include "perf/kernel_cost.hpp"

namespace sightline {

// The 80% interval of a class as multipliers on its predicted time: the
// 10th/90th percentiles of log(measured / predicted) of its held-out (or, for
// transferred classes, cross-GPU) residuals, never narrower than
// ±kMinIntervalHalfWidth (the repeatability of our own graph-mode timings).
struct IntervalScale {
  double low = 1, high = 1;
};
constexpr double kMinIntervalHalfWidth = 0.02;
IntervalScale interval_scale(const FitResiduals& r);

class CalibratedCostModel : public KernelCostModel {
 public:
  // `tier` is "target-measured" or "cross-generation"; `calibration` is the
  // GPU's own (target-measured) or a transferred copy (cross-generation).
  CalibratedCostModel(KernelCalibration calibration, std::string tier);
  std::string tier() const override { return tier_; }
  OpCost cost(const Operator& op, const CostContext& ctx) const override;
  const KernelCalibration& calibration() const { return cal_; }
  AccuracySummary accuracy() const override;

 private:
  OpCost gemm_cost(const Operator& op, const GpuSpec& g) const;
  OpCost attention_prefill_cost(const Operator& op, const GpuSpec& g) const;
  // `launch_us`: the kernel's fixed time, p's own or a fused kernel's (cost()).
  OpCost memory_kernel_cost(const Operator& op, const GpuSpec& g, KernelClass k, const MemoryKernelParams& p,
                            double launch_us) const;
  OpCost with_launch_floor(OpCost c) const;

  KernelCalibration cal_;
  std::string tier_;

  // Each class's interval multipliers (interval_scale of its residuals: a log
  // and two exps), fixed once the constructor has widened the residuals, so
  // computed there instead of for every operator of every step. Memory-bound
  // classes are indexed by KernelClass; the class params too (a map lookup
  // per operator otherwise).
  static constexpr size_t kClasses = static_cast<size_t>(KernelClass::Collective) + 1;
  IntervalScale gemm_scale_, attention_scale_;
  IntervalScale memory_scale_[kClasses];
  MemoryKernelParams memory_params_[kClasses];  // copies: the model stays safe to copy
  bool has_memory_params_[kClasses] = {};
  const MemoryKernelParams& memory_params(KernelClass k) const {
    const size_t i = static_cast<size_t>(k);
    return i < kClasses && has_memory_params_[i] ? memory_params_[i] : cal_.memory.at(k);
  }

  // GEMM prices by shape. A serving simulation prices the same few GEMM
  // shapes (one per layer kind and batch token count) millions of times, and
  // choosing the tile is most of a step's pricing work. The memo returns the
  // very value computed the first time, so results are unchanged to the bit.
  // A model instance belongs to one job (make_cost_setup makes one per
  // setup), so the memo needs no lock. It is direct-mapped (a shape
  // overwrites the slot its hash picks), so it stays small and a lookup is
  // one probe. (16k slots instead of 4k showed no CPU gain on I5.5 or I2.3
  // beyond the noise, for about 10 MB more peak memory.)
  struct GemmKey {
    int64_t m = 0, n = 0, k = 0;
    double groups = 1;
    int64_t group_row_trials = 0;
    double group_row_p = 0;
    double flops = 0, bytes = 0, serial_bytes = 0, dequant_ops = 0;
    Dtype dtype = Dtype::BF16, weight_dtype = Dtype::BF16;
    // What gemm_cost reads of the GPU (by value: callers may pass different GPUs).
    double peak_flops = 0, fp32_tflops = 0, hbm_GBps = 0;
    int sm_count = 0;
    bool operator==(const GemmKey& o) const {
      return m == o.m && n == o.n && k == o.k && groups == o.groups && group_row_trials == o.group_row_trials &&
             group_row_p == o.group_row_p && flops == o.flops && bytes == o.bytes &&
             serial_bytes == o.serial_bytes &&
             dequant_ops == o.dequant_ops && dtype == o.dtype && weight_dtype == o.weight_dtype &&
             peak_flops == o.peak_flops &&
             fp32_tflops == o.fp32_tflops && hbm_GBps == o.hbm_GBps && sm_count == o.sm_count;
    }
  };
  struct GemmKeyHash {
    size_t operator()(const GemmKey& key) const;
  };
  struct GemmMemoSlot {
    bool used = false;
    GemmKey key;
    OpCost cost;
  };
  static constexpr size_t kGemmMemoSlots = 1 << 12;  // a power of two
  static constexpr size_t kGemmMemoAfterPrices = 4096;  // GEMMs priced before the memo is set up
  mutable std::vector<GemmMemoSlot> gemm_memo_;
  mutable size_t gemm_prices_ = 0;
};


// measured | anchored | transferred, from a class's provenance text.
std::string provenance_kind(const std::string& provenance);

// Wave quantization: ceil(tiles / SMs) · SMs / tiles ≥ 1 for an m×n output.
double wave_quantization(int64_t m, int64_t n, int tile_m, int tile_n, int sm_count);

// The tile configuration a GEMM is priced with: the fastest (by the priced
// time) of the calibration's tiles, each alone or split along K (split-K)
// when K is long and the output tiles too few to fill the SMs.
struct GemmChoice {
  int tile_m = 0, tile_n = 0, split_k = 1;
  double compute_s = 0, memory_s = 0;
  double time_s = 0;  // the blend of max(compute, floor) and memory the choice minimized
};
// The smooth max the GEMM model prices with: (tc^p + tm^p)^(1/p).
double blend_times(double compute_s, double memory_s, double blend_p);
constexpr int kMaxSplitK = 16;
constexpr int64_t kMinSplitKDepth = 256;  // shallower K slices cannot keep a tile's pipeline busy
// The memory time covers op.bytes less op.serial_bytes (written after the main
// loop; the caller adds them, the same for every tile).
// `compute_floor_s` is compute time that runs beside the tensor cores
// (weight dequantization): the tile's compute counts only above it.
// A grouped GEMM whose rows routing draws (Operator::group_row_trials) keeps
// the tile and split chosen for every group at the mean, priced with the draw.
GemmChoice best_gemm_tile(const Operator& op, const GemmParams& p, double flops_per_s, double bytes_per_s,
                          int sm_count, double compute_floor_s = 0);

// The cross-generation transfer rule: a measured GPU's efficiencies, taken as
// fractions of its own spec-sheet peaks, applied to the target's spec sheet
// (values only: `from_gpu` is the GPU `from` was measured on). Each kernel
// family follows the ratio that governs it: compute-bound GEMM and attention
// run at the same fraction of the target's tensor peak (and the best-shape
// ceilings move with it), memory-bound kernels at the same fraction of its
// HBM bandwidth with its own L2 (scaled by the ratio of the two GPUs' measured
// copy-bandwidth efficiencies when both are known), waves on its own SM count,
// and the fixed per-kernel times (launch, the empty-kernel floor) with the
// ratio of the clocks. Every class says which measured GPU it came from.
KernelCalibration transfer_calibration(const KernelCalibration& from, const GpuSpec& from_gpu, const GpuSpec& target,
                                       double target_copy_bandwidth_eta);
// The same for maintainer commands that name GPU presets by id (calibrate,
// report-accuracy): both GPUs' values are read from their presets; a target
// that is no preset keeps the source's ceilings and fixed times.
KernelCalibration transfer_calibration(const KernelCalibration& from, const std::string& target_gpu_id,
                                       double target_copy_bandwidth_eta);

}  // namespace sightline
