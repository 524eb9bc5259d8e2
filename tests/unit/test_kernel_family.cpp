// The AMD Instinct kernel family: AMD GPUs are priced from cited kernel-level
// facts (max-achievable GEMM, copy bandwidth, attention in a shared harness),
// not from NVIDIA efficiency levels, and every class says it is anchored.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "comm/collectives.hpp"
#include "hw/hardware.hpp"
#include "model/operators.hpp"
#include "perf/calibrated_cost.hpp"
#include "perf/cost_setup.hpp"
#include "perf/kernel_family.hpp"
#include "perf/kernel_samples.hpp"

using namespace sightline;

namespace {

GpuSpec family_gpu(const std::string& id) { return read_gpu(json(id), "/hardware/gpu"); }

// A large compute-bound GEMM's achieved TFLOP/s under a cost model.
double big_gemm_tflops(const KernelCostModel& model, const GpuSpec& g, Dtype d) {
  Operator op;
  op.name = "gemm";
  op.family = OpFamily::Gemm;
  op.m = 16384;
  op.n = 16384;
  op.k = 16384;
  op.compute_dtype = d;
  op.flops = 2.0 * op.m * op.n * op.k;
  op.bytes = 2.0 * (op.m * op.k + op.k * op.n + op.m * op.n);
  CostContext ctx;
  ctx.gpu = &g;
  return op.flops / model.cost(op, ctx).time_s / 1e12;
}

}  // namespace

TEST_CASE("AMD Instinct GPUs are priced by their own kernel family, never above the cited max-achievable GEMM") {
  for (const std::string id : {"mi300x", "mi325x", "mi355x"}) {
    CAPTURE(id);
    const GpuSpec g = family_gpu(id);
    const KernelFamily* family = find_kernel_family(g.architecture);
    REQUIRE(family != nullptr);
    std::string provenance;
    auto model = make_kernel_cost_model("auto", g, &provenance);
    REQUIRE(model);
    CHECK(model->tier() == "cross-generation");
    CHECK(provenance.find("AMD Instinct") != std::string::npos);
    const AccuracySummary acc = model->accuracy();
    CHECK(acc.note.find("cross-generation tier") != std::string::npos);
    CHECK(acc.note.find("gemm anchored") != std::string::npos);
    CHECK(acc.expected_error_pct > 2.0);

    const KernelCalibration cal = family_calibration(*family, g);
    // MI300X and MI325X have AMD's own max-achievable figures; MI355X takes
    // MI300X's as the same fraction of its spec sheet.
    const double bf16_maf = id == "mi325x" ? 843.0 : 708.0 / 1307.4 * g.peak_tflops.bf16;
    CHECK(cal.gemm.ceiling_tflops.at("bf16") == doctest::Approx(bf16_maf).epsilon(1e-9));
    const double achieved = big_gemm_tflops(*model, g, Dtype::BF16);
    CHECK(achieved <= bf16_maf * (1 + 1e-9));
    CHECK(achieved > 0.8 * bf16_maf);
    // The same GEMM under the NVIDIA-level transfer would run far faster.
    const auto nvidia = std::make_unique<CalibratedCostModel>(transfer_calibration(*find_calibration("h100-sxm"), id, 0),
                                                              "cross-generation");
    CHECK(big_gemm_tflops(*nvidia, g, Dtype::BF16) > 1.15 * achieved);
    // Memory classes follow the cited copy bandwidth (MI300X 4.11 of 5.3 TB/s).
    const double copy_eta = 4110.0 / 5300.0;
    CHECK(cal.copy_bandwidth_eta == doctest::Approx(copy_eta));
  }
}

TEST_CASE("A family GPU's classes name the kernel-level figures they come from, and the family what it lacks") {
  const GpuSpec g = family_gpu("mi300x");
  const KernelFamily* family = find_kernel_family(g.architecture);
  REQUIRE(family != nullptr);
  const KernelCalibration cal = family_calibration(*family, g);
  // The citations reach each class's provenance (explain-step shows them),
  // and the classes stay anchored, so their intervals stay widened.
  CHECK(cal.gemm.provenance.find(family->citations.gemm) != std::string::npos);
  CHECK(cal.attention.provenance.find(family->citations.attention) != std::string::npos);
  const std::string& decode = cal.memory.at(KernelClass::AttentionDecode).provenance;
  CHECK(decode.find(family->citations.decode_attention) != std::string::npos);
  const std::string& norm = cal.memory.at(KernelClass::Norm).provenance;
  CHECK(norm.find(family->citations.copy) != std::string::npos);
  for (const std::string* p : {&cal.gemm.provenance, &cal.attention.provenance, &decode, &norm})
    CHECK(provenance_kind(*p) == "anchored");
  // Every mechanism the family has no figure for is said: what is missing,
  // then (after the colon) the price it falls back to.
  for (const std::string& k : family_uncited_mechanisms()) {
    CAPTURE(k);
    REQUIRE(family->not_cited.count(k) == 1);
    const std::string& said = family->not_cited.at(k);
    CHECK(said.rfind("no ", 0) == 0);
    CHECK(said.find(": ") != std::string::npos);
  }
}

TEST_CASE("MI355X decode attention runs at AITER's cited paged-decode bandwidth") {
  // presets/kernel_families/amd-instinct.json: AITER's paged decode on an
  // MI350X plateaus at 3938 GB/s (median of 3.915, 3.964, 3.938 TB/s,
  // facebookexperimental/triton PR #2778), 49% of the 8 TB/s HBM3E.
  const GpuSpec g = family_gpu("mi355x");
  const KernelFamily* family = find_kernel_family(g.architecture);
  REQUIRE(family != nullptr);
  CHECK(family_cites_for(*family, g, "decode_attention"));
  const KernelCalibration cal = family_calibration(*family, g);
  const MemoryKernelParams& decode = cal.memory.at(KernelClass::AttentionDecode);
  CHECK(decode.eta_memory == doctest::Approx(3938.0 / 8000.0).epsilon(1e-12));
  CHECK(provenance_kind(decode.provenance) == "anchored");
  CHECK(decode.provenance.find(family->citations.decode_attention) != std::string::npos);
  // A long-KV GQA decode (32 sequences x 32K, 64/8 heads, head dim 128, bf16:
  // 4.3 GB of KV) streams at the cited bandwidth, the shape GPU's launch on
  // top (under 1% of it).
  std::string provenance;
  auto model = make_kernel_cost_model("auto", g, &provenance);
  REQUIRE(model);
  const Operator op = decode_attention_op(32, 32768, 64, 8, 128, Dtype::BF16);
  CostContext ctx;
  ctx.gpu = &g;
  const double achieved_GBps = op.bytes / model->cost(op, ctx).time_s / 1e9;
  CHECK(achieved_GBps <= 3938.0 * (1 + 1e-9));
  CHECK(achieved_GBps >= 3938.0 * 0.99);
}

TEST_CASE("CDNA 3 decode attention: the MI325X's cited unified-attention level, carried to the MI300X as a fraction of HBM") {
  // presets/kernel_families/amd-instinct.json: AITER's Triton unified
  // attention on an MI325X (ROCm/aiter PR #5415) streams a 1024-token window
  // of 16 KV heads x 256 (bf16) at 3.458 TB/s (16 sequences, 77.62 us) and
  // 3.326 TB/s (32, 161.44 us): level 3392 GB/s of 6 TB/s.
  const GpuSpec mi325x = family_gpu("mi325x");
  const KernelFamily* family = find_kernel_family(mi325x.architecture);
  REQUIRE(family != nullptr);
  const double fraction = 3392.0 / 6000.0;
  for (const std::string id : {"mi325x", "mi300x"}) {
    CAPTURE(id);
    const GpuSpec g = family_gpu(id);
    CHECK(family_cites_for(*family, g, "decode_attention"));
    const MemoryKernelParams& decode = family_calibration(*family, g).memory.at(KernelClass::AttentionDecode);
    CHECK(decode.eta_memory == doctest::Approx(fraction).epsilon(1e-12));
    CHECK(decode.provenance.find("level from mi325x") != std::string::npos);
    CHECK(decode.provenance.find("ROCm/aiter pull request #5415") != std::string::npos);
  }
  // The PR's own shape, priced against its kernel timings: within 3% at its
  // plateau (32 sequences) and 11% at 16 (the shape GPU's curve below it).
  std::string provenance;
  auto model = make_kernel_cost_model("auto", mi325x, &provenance);
  REQUIRE(model);
  CostContext ctx;
  ctx.gpu = &mi325x;
  const double us_16 = model->cost(decode_attention_op(16, 1024, 32, 16, 256, Dtype::BF16), ctx).time_s * 1e6;
  const double us_32 = model->cost(decode_attention_op(32, 1024, 32, 16, 256, Dtype::BF16), ctx).time_s * 1e6;
  CHECK(us_32 == doctest::Approx(161.44).epsilon(0.03));
  CHECK(us_16 == doctest::Approx(77.62).epsilon(0.11));
  // The figures do not cross architectures: CDNA 4's is the MI355X's own.
  const GpuSpec mi355x = family_gpu("mi355x");
  CHECK(family_calibration(*family, mi355x).memory.at(KernelClass::AttentionDecode).eta_memory ==
        doctest::Approx(3938.0 / 8000.0).epsilon(1e-12));
}

TEST_CASE("NVIDIA GPUs keep the transfer rule; no family claims their architecture") {
  for (const std::string id : {"h20", "rtx-4090", "gb200", "l40s"}) {
    CAPTURE(id);
    CHECK(find_kernel_family(family_gpu(id).architecture) == nullptr);
  }
}

TEST_CASE("The xGMI mesh is priced from RCCL's measured all-reduce, CDNA 4's mesh by transfer from it") {
  const InterconnectSpec mesh3 = read_interconnect(json("xgmi3-mesh8"), "/i");
  const InterconnectSpec mesh4 = read_interconnect(json("xgmi4-mesh8"), "/i");
  const CommCalibration c3 = *comm_calibration_for(mesh3);
  CHECK(c3.ring.samples == 24);
  CHECK(c3.ring.provenance.rfind("measured", 0) == 0);
  CHECK(comm_calibration_for(mesh4)->source.find("xgmi3-mesh8") != std::string::npos);
  // RCCL all_reduce_perf on 8 MI300X: 316.8 GB/s bus bandwidth at 8 GiB,
  // 0.04 GB/s (about 45 us) at 1 KiB.
  const CollectiveCost big = flat_collective_cost(CollectiveKind::AllReduce, 8589934592.0, 8, mesh3, c3);
  CHECK(big.busbw_GBps == doctest::Approx(316.8).epsilon(0.05));
  const CollectiveCost small = flat_collective_cost(CollectiveKind::AllReduce, 1024.0, 8, mesh3, c3);
  CHECK(small.time_s > 30e-6);
  CHECK(small.time_s < 70e-6);
}

TEST_CASE("A transfer source is the GPU nearest by spec sheet; ties go to the larger sweep, then the earlier one") {
  // One rule for the product (nearest_measured_gpu) and report-accuracy's
  // leave-one-GPU-out: both call nearest_by_spec.
  const GpuSpec h100 = read_gpu(json("h100-sxm"), "/gpu");
  const GpuSpec h200 = read_gpu(json("h200"), "/gpu");
  const GpuSpec a100 = read_gpu(json("a100-80g-sxm"), "/gpu");
  CHECK(nearest_by_spec(h100, {}) == SIZE_MAX);
  CHECK(nearest_by_spec(h100, {{&a100, 1000}, {&h200, 10}}) == 1);  // same generation wins over a larger sweep
  CHECK(nearest_by_spec(h100, {{&h200, 10}, {&h200, 20}}) == 1);    // a tie: the larger sweep
  CHECK(nearest_by_spec(h100, {{&h200, 20}, {&h200, 20}}) == 0);    // a full tie: the earlier one
  const MeasuredGpu* from = nearest_measured_gpu(h100);
  REQUIRE(from != nullptr);
  CHECK(from->calibration->id != h100.calibration);  // never the target's own data
}
