// Blackwell's block-scaled FP4 GEMMs stream their weights far below the
// 16-bit level: vLLM's CUTLASS NVFP4 GEMM at M=1 on a B200 (pytorch/helion
// PR #3046, L2 cleared per its harness) moves 9-132 MB of weights at 1.0-2.7 TB/s, where the
// B200's 16-bit GEMMs are priced at 88% of its 8 TB/s.
// presets/calibrations/data/published_fp4_gemv.csv sets B200's NVFP4
// weight-streaming level (gemm.dtype_memory_scale): these tests hold the
// shipped calibration to those timings and the calibrator to its rules.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "hw/hardware.hpp"
#include "perf/calibrate.hpp"
#include "perf/calibrated_cost.hpp"
#include "perf/calibration.hpp"
#include "perf/kernel_samples.hpp"

using namespace sightline;

namespace {

std::vector<KernelSample> published_fp4_rows() {
  std::ifstream in(std::string(SIGHTLINE_SOURCE_DIR) + "/presets/calibrations/data/published_fp4_gemv.csv");
  std::stringstream text;
  text << in.rdbuf();
  return read_kernel_csv(text.str(), "b200", "published_fp4_gemv.csv");
}

double priced_s(const Operator& op, const KernelCalibration& cal, const GpuSpec& gpu) {
  const CalibratedCostModel model(cal, "test");
  CostContext ctx;
  ctx.gpu = &gpu;
  return model.cost(op, ctx).time_s;
}

}  // namespace

TEST_CASE("fp4 streaming: B200's NVFP4 decode GEMMs are priced at the published CUTLASS timings") {
  const std::vector<KernelSample> rows = published_fp4_rows();
  REQUIRE(rows.size() == 9);
  const GpuSpec gpu = read_gpu(json("b200"), "/gpu");
  const KernelCalibration* cal = find_calibration("b200");
  REQUIRE(cal != nullptr);
  REQUIRE(cal->gemm.dtype_memory_scale.count("nvfp4") == 1);
  CHECK(cal->gemm.dtype_memory_scale.at("nvfp4") < 0.6);
  // Fitted, not typed: no compute multiplier or ceiling from weight-streaming rows.
  CHECK(cal->gemm.dtype_scale.count("nvfp4") == 0);
  CHECK(cal->gemm.ceiling_tflops.count("nvfp4") == 0);
  std::vector<double> ape;
  for (const KernelSample& s : rows) {
    CAPTURE(s.source);
    const double err = predict_sample_s(s, *cal, gpu) / s.time_s - 1;
    CHECK(std::fabs(err) < 0.35);
    ape.push_back(std::fabs(err));
  }
  std::sort(ape.begin(), ape.end());
  CHECK(ape[ape.size() / 2] < 0.10);
  // The largest row (8192 x 28672, 132 MB): 59.06 us measured; the 16-bit
  // streaming level would price it under 30 us.
  const Operator& largest = rows.back().ops.front();
  KernelCalibration no_fp4_level = *cal;
  no_fp4_level.gemm.dtype_memory_scale.clear();
  CHECK(priced_s(largest, no_fp4_level, gpu) < 30e-6);
  CHECK(priced_s(largest, *cal, gpu) > 45e-6);
}

TEST_CASE("fp4 streaming: only plain FP4 GEMMs take the level; 16-bit and grouped GEMMs keep eta_memory") {
  const GpuSpec gpu = read_gpu(json("b200"), "/gpu");
  const KernelCalibration* cal = find_calibration("b200");
  REQUIRE(cal != nullptr);
  const double scale = cal->gemm.dtype_memory_scale.at("nvfp4");
  // A BF16 GEMV of the same shape streams 3.6x the bytes at the 16-bit level.
  const Operator bf16 = make_gemm_operator("gemm", 1, 1, 8192, 28672, 2, 2, Dtype::BF16);
  const Operator fp4 = make_gemm_operator("gemm", 1, 1, 8192, 28672, 0.5625, 0.5625, Dtype::NVFP4);
  const double bf16_GBps = bf16.bytes / priced_s(bf16, *cal, gpu) / 1e9;
  const double fp4_GBps = fp4.bytes / priced_s(fp4, *cal, gpu) / 1e9;
  CHECK(fp4_GBps < bf16_GBps * scale * 1.05);
  CHECK(fp4_GBps > bf16_GBps * scale * 0.8);
  // A grouped (MoE) FP4 GEMM has no figure: it keeps the 16-bit level.
  Operator grouped = fp4;
  grouped.groups = 8;
  grouped.bytes *= 8;
  grouped.flops *= 8;
  KernelCalibration no_fp4_level = *cal;
  no_fp4_level.gemm.dtype_memory_scale.clear();
  CHECK(priced_s(grouped, *cal, gpu) == doctest::Approx(priced_s(grouped, no_fp4_level, gpu)));
  // The GPUs measured with 16-bit and FP8 GEMMs of both kinds carry no such level.
  for (const std::string id : {"h100-sxm", "h200", "a100-80g-sxm"}) {
    CAPTURE(id);
    CHECK(find_calibration(id)->gemm.dtype_memory_scale.empty());
  }
}

TEST_CASE("fp4 streaming: the calibrator fits a streaming level only for a dtype whose GEMMs all stream") {
  const GpuSpec gpu = read_gpu(json("b200"), "/gpu");
  // Synthetic FP4 GEMVs streaming at exactly a third of the base's 16-bit level.
  const KernelCalibration base = *find_calibration("h200");
  std::vector<KernelSample> samples;
  for (int64_t n : {4096, 8192, 16384, 28672}) {
    KernelSample s;
    s.ops = {make_gemm_operator("gemm", 1, 1, n, 8192, 0.5625, 0.5625, Dtype::NVFP4)};
    KernelCalibration third = base;
    third.gemm.dtype_memory_scale["nvfp4"] = 1.0 / 3.0;
    s.time_s = priced_s(s.ops[0], third, gpu);
    s.label = "gemm";
    samples.push_back(s);
  }
  CalibrationFitOptions options;
  options.source = "synthetic FP4 GEMVs (unit test)";
  const KernelCalibration cal = fit_kernel_calibration(gpu, samples, base, options);
  REQUIRE(cal.gemm.dtype_memory_scale.count("nvfp4") == 1);
  CHECK(cal.gemm.dtype_memory_scale.at("nvfp4") == doctest::Approx(1.0 / 3.0).epsilon(1e-3));
  CHECK(cal.gemm.dtype_scale.count("nvfp4") == 0);
  CHECK(cal.gemm.ceiling_tflops.count("nvfp4") == 0);  // a GEMV's TFLOP/s is no ceiling
  // Four GEMM rows fit no 16-bit launch or streaming efficiency, so decode
  // attention is not derived from them: it keeps the base's.
  CHECK(cal.memory.at(KernelClass::AttentionDecode).provenance.find("derived from this GPU's GEMM") ==
        std::string::npos);
  // The round trip through the calibration file keeps the level.
  const KernelCalibration back = KernelCalibration::from_json(cal.to_json(), "/calibration");
  CHECK(back.gemm.dtype_memory_scale == cal.gemm.dtype_memory_scale);
}
