#pragma once
// Fits a KernelCalibration from kernel measurements. Classes with enough
// samples are fitted ("measured"); classes with a few samples keep the base
// calibration's shape and fit its level ("anchored"); classes with none are
// taken from the base ("transferred") or derived from a measured class of the
// same GPU, as each class's provenance says.
#include <string>
#include <vector>

#include "hw/hardware.hpp"
#include "perf/calibration.hpp"

namespace sightline {

struct KernelSample {
  std::vector<Operator> ops;  // kernels whose summed time was measured (e.g. attention fwd + bwd)
  double time_s = 0;
  std::string model;          // workload the shape came from, for leave-one-model-out
  std::string source;
  std::string label;          // operator name as measured (attn_pre_proj, flash_fwd, ...)
  std::string mode;           // timing mode of a microbenchmark row: "" (kernel time), graph, eager or sync
};

// A row that times a kernel on the device (no mode, or CUDA-graph replay), as
// opposed to eager/sync rows and empty-kernel launch rows, which time the host.
bool is_kernel_timing(const KernelSample& s);

// The class a sample's errors are reported under: the kernel class, with
// GEMMs split by compute dtype ("gemm fp8") since each dtype has its own ceiling.
std::string sample_class_label(const KernelSample& s);

struct CalibrationFitOptions {
  std::string source;                // recorded in the calibration
  double copy_bandwidth_eta = 0;     // measured device-copy efficiency of the GPU, 0 if unknown
  int min_samples_for_full_fit = 20;
  // Store leave-one-workload-out residuals (the interval of a prediction for an
  // unseen model) instead of in-sample ones; costs one refit per workload.
  bool held_out_residuals = false;
  // Same compute silicon as another calibrated GPU (H200 and H100 SXM): hold
  // its bf16 compute efficiency (eta_compute and the tiles' relative
  // efficiencies) and fit only launch, memory and blend from this GPU's rows.
  const GemmParams* shared_compute = nullptr;
  std::string shared_compute_id;
};

KernelCalibration fit_kernel_calibration(const GpuSpec& gpu, const std::vector<KernelSample>& samples,
                                         const KernelCalibration& base, const CalibrationFitOptions& options);

// Predicted time of a sample under a calibration (sum over its kernels).
double predict_sample_s(const KernelSample& sample, const KernelCalibration& calibration, const GpuSpec& gpu);

// Absolute percentage errors summarized.
FitResiduals summarize_errors(const std::vector<double>& predicted_s, const std::vector<double>& measured_s);

}  // namespace sightline
