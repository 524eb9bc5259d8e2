// The kernel calibrator recovers known parameters: samples generated from
// t = launch + bytes / (HBM bandwidth · eta) with chosen launch and eta are
// fitted back to those values ("measured" with enough samples), a class with
// one sample keeps the base's launch and fits its level to that sample
// ("anchored"), and residuals of a perfect fit are zero.
#include <doctest/doctest.h>

#include <cmath>

#include "hw/hardware.hpp"
#include "perf/calibrate.hpp"

using namespace sightline;

namespace {

constexpr double kLaunchUs = 4.0;
constexpr double kEta = 0.8;

KernelSample norm_sample(double bytes, const GpuSpec& gpu) {
  Operator op;
  op.name = "rmsnorm";
  op.family = OpFamily::Norm;
  op.count = 1;
  op.bytes = bytes;
  op.flops = bytes / 2;  // a few FLOPs per element: memory-bound by far
  KernelSample s;
  s.ops = {op};
  s.time_s = kLaunchUs * 1e-6 + bytes / (gpu.hbm_bandwidth_GBps * 1e9 * kEta);
  s.model = "synthetic";
  s.label = "rmsnorm";
  return s;
}

}  // namespace

TEST_CASE("calibrate: a memory-bound class with enough samples recovers launch and bandwidth efficiency") {
  const GpuSpec gpu = read_gpu(json("h100-sxm"), "/gpu");
  std::vector<KernelSample> samples;
  for (int i = 0; i < 24; ++i) samples.push_back(norm_sample(1e5 * std::pow(2.0, i * 0.5), gpu));  // 100 KB .. 400 MB
  CalibrationFitOptions options;
  options.source = "synthetic samples (unit test)";
  const KernelCalibration cal = fit_kernel_calibration(gpu, samples, default_calibration(), options);
  const MemoryKernelParams& p = cal.memory.at(KernelClass::Norm);
  CHECK(p.launch_us == doctest::Approx(kLaunchUs).epsilon(1e-6));
  CHECK(p.eta_memory == doctest::Approx(kEta).epsilon(1e-6));
  CHECK(p.provenance.rfind("measured", 0) == 0);
  CHECK(p.residuals.samples == 24);
  CHECK(p.residuals.median_ape < 1e-6);
  for (const KernelSample& s : samples) CHECK(predict_sample_s(s, cal, gpu) == doctest::Approx(s.time_s).epsilon(1e-6));
  // Classes without samples keep the base's parameters.
  CHECK(cal.memory.at(KernelClass::Rope).eta_memory == default_calibration().memory.at(KernelClass::Rope).eta_memory);
}

TEST_CASE("calibrate: one sample anchors the level and keeps the base's launch") {
  const GpuSpec gpu = read_gpu(json("h100-sxm"), "/gpu");
  const KernelSample one = norm_sample(2e8, gpu);
  CalibrationFitOptions options;
  const KernelCalibration base = default_calibration();
  const KernelCalibration cal = fit_kernel_calibration(gpu, {one}, base, options);
  const MemoryKernelParams& p = cal.memory.at(KernelClass::Norm);
  CHECK(p.launch_us == base.memory.at(KernelClass::Norm).launch_us);
  CHECK(p.provenance.rfind("anchored", 0) == 0);
  // The level is fitted so the one measurement is reproduced.
  CHECK(predict_sample_s(one, cal, gpu) == doctest::Approx(one.time_s).epsilon(1e-3));
  const double expected_eta = 2e8 / (gpu.hbm_bandwidth_GBps * 1e9 * (one.time_s - p.launch_us * 1e-6));
  CHECK(p.eta_memory == doctest::Approx(expected_eta).epsilon(1e-3));
}

TEST_CASE("calibrate: errors are summarized as absolute percentages and an 80% log band") {
  const FitResiduals r = summarize_errors({1.1, 0.9, 1.0, 1.2, 0.8}, {1.0, 1.0, 1.0, 1.0, 1.0});
  CHECK(r.samples == 5);
  CHECK(r.median_ape == doctest::Approx(0.1));  // |errors| 0.1 0.1 0 0.2 0.2
  CHECK(r.log_q10 < 0);                         // some predictions are high (meas/pred < 1)
  CHECK(r.log_q90 > 0);                         // and some low
}
