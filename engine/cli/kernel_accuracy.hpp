#pragma once
// Accuracy checks of the kernel model over every GPU with development data
// (A100 and A40: Vidur per-operator sweeps; H100 SXM and H200: our own
// microbenchmark sweeps; plus the published kernel figures of each):
// cross-generation error on every GPU pair, the GEMM ceiling sweep, and the
// coverage of the 80% intervals.
#include <map>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "hw/hardware.hpp"
#include "perf/calibrate.hpp"
#include "perf/calibrated_cost.hpp"

namespace sightline::cli {

using DevKernels = std::map<std::string, std::vector<KernelSample>>;  // GPU id → kernel-time samples

// predict_sample_s for many samples of one calibration and GPU: one cost model
// for all of them (predict_sample_s builds one per sample, copying the
// calibration), the same sum of its operators' times, so the same figures to
// the bit (the model's GEMM memo returns the value it first computed). `gpu`
// must outlive the pricer.
class SamplePricer {
 public:
  SamplePricer(const KernelCalibration& calibration, const GpuSpec& gpu) : model_(calibration, "fit") { ctx_.gpu = &gpu; }
  double operator()(const KernelSample& sample) const {
    double t = 0;
    for (const Operator& op : sample.ops) t += model_.cost(op, ctx_).time_s;
    return t;
  }

 private:
  CalibratedCostModel model_;
  CostContext ctx_;
};

DevKernels load_development_kernels(const std::string& vidur_root, const std::string& published_csv,
                                    const std::string& measured_dir);

// Leave-one-GPU-out: fit each GPU alone, transfer it by the spec-sheet rule to
// every other GPU, predict that GPU's kernels. "pairs" holds per-class errors
// of each "from -> to"; "pooled" the per-class residuals over all pairs (the
// transfer error that widens transferred classes' intervals).
json cross_generation_pairs(const DevKernels& dev);

// Leave-one-GPU-out as the product transfers: for each GPU with development
// data, the pair of cross_generation_pairs the cross-generation tier would use
// with that GPU's data removed (the nearest of the other measured GPUs by
// spec_distance). {gpu: {"from": id, "by_class": {...}}}.
json leave_one_gpu_out(const DevKernels& dev, const json& pairs_report);

// The pooled residuals as the presets/transfer_errors/kernels.json preset.
json transfer_error_preset(const json& pairs_report);

// Share of each GPU's kernel measurements inside the shipped calibration's 80% interval.
json interval_coverage(const DevKernels& dev);

// Prices a grid of GEMM shapes on every calibrated GPU and dtype and checks
// none beats the GPU's measured best (its ceiling).
json gemm_ceiling_sweep();

// GPUs with the same compute silicon (same dense bf16 peak, SM count and boost
// clock, e.g. H100 SXM and H200): on GEMM shapes measured on both, the median
// measured time ratio and the ratio their separately fitted calibrations
// predict, by dtype and regime (compute-bound: arithmetic intensity above both
// GPUs' ridge points). Separate fits are justified only where they reproduce a
// measured difference.
json same_silicon_gemms(const DevKernels& dev);

}  // namespace sightline::cli
