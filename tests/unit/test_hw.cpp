// GPU and interconnect specifications: the tensor-core rate ladder every
// NVIDIA/AMD part follows, link figures against the spec sheets' raw numbers,
// and located errors for a custom GPU. Hand facts, not snapshots.
#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "hw/hardware.hpp"

using namespace sightline;

namespace {

GpuSpec gpu(const std::string& id) { return read_gpu(json(id), "/hardware/gpu"); }
InterconnectSpec link(const std::string& id) { return read_interconnect(json(id), "/hardware/intra_node"); }

}  // namespace

TEST_CASE("hw: tensor-core peaks follow the dtype ladder (tf32 = bf16/2, fp16 = bf16, fp8 = 2 x bf16)") {
  for (const char* id : {"a100-40g-sxm", "a100-80g-sxm", "a40", "b200", "h100-pcie", "h100-sxm", "h200", "l4", "l40s",
                         "mi300x"}) {
    CAPTURE(id);
    const GpuSpec g = gpu(id);
    const PeakTflops& p = g.peak_tflops;
    REQUIRE(p.bf16 > 0);
    CHECK(p.fp16 == p.bf16);
    CHECK(p.tf32 == doctest::Approx(p.bf16 / 2).epsilon(0.03));  // B200's sheet rounds tf32 to 1.1 PF
    if (p.fp8 > 0) CHECK(p.fp8 == doctest::Approx(2 * p.bf16).epsilon(0.02));  // L40S: 733 vs 2 x 362
    CHECK(p.int8 == doctest::Approx(2 * p.bf16).epsilon(0.03));
    CHECK(p.fp32 < p.tf32);  // CUDA-core fp32 is slower than tensor-core tf32
    CHECK(g.idle_power_W < g.tdp_W);
    CHECK(g.peak_tflops_for(Dtype::BF16) == p.bf16);
    CHECK(g.peak_tflops_for(Dtype::FP32) == p.tf32);  // fp32 GEMMs run on tf32 tensor cores
  }
  // T4 (Turing) has no bf16 and no tf32: fp32 GEMMs fall back to the CUDA cores.
  const GpuSpec t4 = gpu("t4");
  CHECK(t4.peak_tflops_for(Dtype::BF16) == 0);
  CHECK(t4.peak_tflops_for(Dtype::FP32) == t4.peak_tflops.fp32);
  CHECK(t4.peak_tflops.int8 == 2 * t4.peak_tflops.fp16);
}

TEST_CASE("hw: HBM bandwidth and capacity grow from A100 to H100 to H200 to B200") {
  const GpuSpec a100 = gpu("a100-80g-sxm"), h100 = gpu("h100-sxm"), h200 = gpu("h200"), b200 = gpu("b200");
  CHECK(a100.hbm_bandwidth_GBps < h100.hbm_bandwidth_GBps);
  CHECK(h100.hbm_bandwidth_GBps < h200.hbm_bandwidth_GBps);
  CHECK(h200.hbm_bandwidth_GBps < b200.hbm_bandwidth_GBps);
  // H200 is the H100 die with more and faster HBM: same compute, 141 GB of HBM3e.
  CHECK(h200.peak_tflops.bf16 == h100.peak_tflops.bf16);
  CHECK(h200.memory_GiB > h100.memory_GiB);
}

TEST_CASE("hw: one direction of a GPU's NVLink is half its bidirectional figure") {
  CHECK(link("nvlink3-nvswitch").bandwidth_per_gpu_GBps == gpu("a100-80g-sxm").nvlink_bandwidth_GBps / 2);  // 300
  CHECK(link("nvlink4-nvswitch").bandwidth_per_gpu_GBps == gpu("h100-sxm").nvlink_bandwidth_GBps / 2);      // 450
  CHECK(link("nvlink5-nvswitch").bandwidth_per_gpu_GBps == gpu("b200").nvlink_bandwidth_GBps / 2);          // 900
}

TEST_CASE("hw: network links carry their line rate in bytes (Gb/s / 8)") {
  CHECK(link("ib-hdr").bandwidth_per_gpu_GBps == 200.0 / 8);
  CHECK(link("ib-ndr").bandwidth_per_gpu_GBps == 400.0 / 8);
  CHECK(link("roce-400g").bandwidth_per_gpu_GBps == 400.0 / 8);
  // PCIe x16, one direction: gen4 16 GT/s x 16 lanes ~ 32 GB/s, gen5 twice that.
  CHECK(link("pcie5").bandwidth_per_gpu_GBps == 2 * link("pcie4").bandwidth_per_gpu_GBps);
  CHECK(link("nvlink4-nvswitch").sharp);  // NVLS in-switch reduction from NVLink 4 on
  CHECK_FALSE(link("nvlink3-nvswitch").sharp);
}

TEST_CASE("hw: a custom GPU takes defaults for optional fields and locates its errors") {
  const json base = {{"peak_tflops", {{"bf16", 100}}}, {"memory_GiB", 24}, {"hbm_bandwidth_GBps", 900},
                     {"sm_count", 60}, {"tdp_W", 300}};
  const GpuSpec g = read_gpu(base, "/hardware/gpu");
  CHECK(g.id == "custom-gpu");
  CHECK(g.idle_power_W == doctest::Approx(30));  // 10% of TDP when not given
  CHECK(g.peak_tflops_for(Dtype::FP8) == 0);     // a dtype the GPU lacks has no peak

  auto error_of = [](const json& spec) -> std::pair<std::string, std::string> {
    try {
      read_gpu(spec, "/hardware/gpu");
    } catch (const SightlineError& e) {
      return {e.code(), e.path()};
    }
    return {"", ""};
  };
  json no_peak = base;
  no_peak["peak_tflops"] = {{"fp32", 10}};
  CHECK(error_of(no_peak) == std::pair<std::string, std::string>{"constraint_violation", "/hardware/gpu/peak_tflops"});
  json no_memory = base;
  no_memory.erase("memory_GiB");
  CHECK(error_of(no_memory).second == "/hardware/gpu/memory_GiB");
  json negative = base;
  negative["hbm_bandwidth_GBps"] = -1;
  CHECK(error_of(negative) == std::pair<std::string, std::string>{"out_of_range", "/hardware/gpu/hbm_bandwidth_GBps"});
}
