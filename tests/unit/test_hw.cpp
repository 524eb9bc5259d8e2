// GPU and interconnect specifications: the tensor-core rate ladder every
// NVIDIA/AMD part follows, link figures against the spec sheets' raw numbers,
// and located errors for a custom GPU. Hand facts, not snapshots.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>

#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "presets/preset_store.hpp"
#include "test_helpers.hpp"

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

// ---------------------------------------------------------------------------
// One hardware path: a GPU is its values. A copy of any GPU preset under a new
// id and name, without the preset's measured calibration, takes the
// cross-generation path from its spec sheet. Issue 36's acceptance, asserted
// for every figure (TTFT and TPOT of a dense, an MoE and a TP-8 scenario):
//  (a) within the cross-generation tier's measured error (its 80% interval,
//      built from the measured transfer errors) of the preset's
//      cross-generation prediction, and
//  (b) within 20% of the preset's own prediction.
// (Before: a "custom" B200 was 4.87x slower, because the transfer re-read the
// ceilings by the GPU's id and kept the A100's for an id it did not know.)
//
// The copy transfers from the measured GPU nearest by spec sheet, which for a
// copy of a measured GPU is that GPU's data (same values, distance 0), so the
// copy predicts exactly the preset's own figure. (a) then asks that the
// preset's cross-generation interval hold the preset's own prediction. One
// figure does not, by up to 9% beyond the interval's edge; it is not the copy
// being off (the copy equals the preset, (b) holds with ratio 1.000), nor a
// disagreement with a measurement. It is listed with its reason and asserted
// to be outside, so a fix (or a new miss) fails here:
//  - A100-80G, MoE TPOT: the step's decode attention and MoE gate / top-k /
//    permute kernels are 40% and 36% cheaper at the A100's own tier than
//    transferred from the H100. The A100's own figures for those two classes
//    are not measurements either ("derived" from its GEMM weight streaming and
//    residual adds: Vidur profiled no decode attention), and there is no A100
//    decode measurement to measure the transfer's error on, so the pooled
//    transfer error (Hopper pairs) sets the interval.
// (The B200's MoE TPOT was a second one while its calibration took its
// unmeasured classes from the A100 and its cross-generation tier from the
// H200; both now transfer from the nearest measured GPU, `calibrate --base
// nearest` in presets/calibrations/regenerate.sh.)

namespace {

struct Figures {
  bool ok = false;
  std::string error_code;
  double ttft_ms = 0, tpot_ms = 0;
  json result;
};

Figures latency_figures(const json& scenario) {
  const json e = sightline::test::run(scenario);
  Figures f;
  f.ok = e["ok"] == true;
  if (!f.ok) {
    f.error_code = e["error"]["code"].get<std::string>();
    return f;
  }
  f.result = e["result"];
  f.ttft_ms = e["result"]["metrics"]["ttft_ms"].get<double>();
  f.tpot_ms = e["result"]["metrics"]["tpot_ms"].get<double>();
  return f;
}

// The scenario on `gpu` (a preset id or an object) with the node its own link allows.
json one_hardware_scenario(const std::string& kind, const json& gpu_value, const GpuSpec& g) {
  json s = {{"schema_version", 1}, {"seed", 1}, {"precision", {{"weights", "bf16"}, {"activations", "bf16"}, {"kv_cache", "bf16"}}}};
  if (g.peak_tflops.bf16 <= 0) s["precision"] = {{"weights", "fp16"}, {"activations", "fp16"}, {"kv_cache", "fp16"}};
  int tp = 1;
  if (kind == "dense") s["model"] = "llama-2-7b";
  if (kind == "moe") s["model"] = "qwen3-30b-a3b";
  if (kind == "tp8") {
    s["model"] = "llama-3-70b";
    tp = 8;
  }
  s["hardware"] = {{"gpu", gpu_value}, {"gpus_per_node", tp}};
  if (tp > 1) s["hardware"]["intra_node"] = g.default_intra_node;
  s["serving"] = {{"mode", "latency"},
                  {"parallelism", {{"tp", tp}, {"pp", 1}}},
                  {"workload", {{"prompt_tokens", 2000}, {"output_tokens", 128}, {"batch_size", 1}}}};
  return s;
}

// The 80% interval of a key metric as multipliers on its value (1, 1 when the result gives none).
std::pair<double, double> key_interval(const json& result, const std::string& id) {
  if (result.contains("key_metrics"))
    for (const json& k : result["key_metrics"])
      if (k["id"] == id && k.contains("low") && k.contains("high") && k["low"].is_number() && k["value"].get<double>() > 0)
        return {k["low"].get<double>() / k["value"].get<double>(), k["high"].get<double>() / k["value"].get<double>()};
  return {1, 1};
}

}  // namespace

TEST_CASE("hw: a custom GPU with any preset's values predicts what the preset's spec sheet does") {
  // (gpu, scenario, metric) whose preset's own figure lies outside the
  // preset's cross-generation interval; the reasons are above.
  const std::set<std::string> outside_with_reason = {"a100-80g-sxm moe tpot_ms"};
  int compared = 0, refused = 0, figures = 0, inside_band = 0;
  for (const json* p : list_presets("gpus")) {
    const GpuSpec g = read_gpu(*p, "/gpu");
    json custom = *p;
    custom["id"] = "my-" + g.id;
    custom["name"] = "My own " + g.name;
    custom.erase("calibration");
    double worst = 1;
    std::string worst_at;
    for (const std::string kind : {"dense", "moe", "tp8"}) {
      const Figures own = latency_figures(one_hardware_scenario(kind, g.id, g));
      json cross_s = one_hardware_scenario(kind, g.id, g);
      cross_s["cost_model"] = {{"tier", "cross-generation"}};
      const Figures cross = latency_figures(cross_s);
      const Figures mine = latency_figures(one_hardware_scenario(kind, custom, g));
      INFO(g.id << " " << kind);
      // A scenario the preset cannot run (too little memory, no link for 8 GPUs), the copy cannot either.
      REQUIRE(own.ok == mine.ok);
      REQUIRE(own.error_code == mine.error_code);
      if (!own.ok) {
        ++refused;
        continue;
      }
      REQUIRE(cross.ok);
      for (const auto& figure : {std::make_tuple(std::string("ttft_ms"), own.ttft_ms, cross.ttft_ms, mine.ttft_ms),
                                 std::make_tuple(std::string("tpot_ms"), own.tpot_ms, cross.tpot_ms, mine.tpot_ms)}) {
        // Named copies, not a structured binding: INFO's lambda cannot capture
        // a binding before C++20, and clang refuses it.
        const std::string& metric = std::get<0>(figure);
        const double a = std::get<1>(figure), b = std::get<2>(figure), c = std::get<3>(figure);
        const std::pair<double, double> interval = key_interval(cross.result, metric);
        const double low = interval.first, high = interval.second;
        INFO(metric << ": preset " << a << ", preset cross-generation " << b << " [" << b * low << ", " << b * high
                    << "], custom " << c);
        // (a): inside the preset's cross-generation interval, or one of the
        // listed figures, which must still be outside (each miss is printed).
        const bool inside = c >= b * low * (1 - 1e-9) && c <= b * high * (1 + 1e-9);
        const bool listed = outside_with_reason.count(g.id + " " + kind + " " + metric) > 0;
        ++figures;
        if (inside) ++inside_band;
        else MESSAGE(g.id << " " << kind << " " << metric << ": custom " << c << " outside the preset's cross-generation "
                           << b << " [" << b * low << ", " << b * high << "]" << std::string(listed ? " (listed, with its reason)" : ""));
        CHECK(inside != listed);
        // (b): within 20% of the preset's own prediction.
        CHECK(c == doctest::Approx(a).epsilon(0.20));
        const double ratio = std::max(c / a, a / c);
        if (ratio > worst) {
          worst = ratio;
          worst_at = kind + " " + metric;
        }
      }
      ++compared;
    }
    MESSAGE(g.id << ": worst custom/preset ratio " << worst << (worst_at.empty() ? "" : " (" + worst_at + ")"));
  }
  MESSAGE(inside_band << " of " << figures << " custom figures inside the preset's cross-generation 80% interval; "
                      << compared << " GPU x scenario pairs compared, " << refused
                      << " refused alike for preset and copy (the weights do not fit, or no link joins 8)");
  CHECK(inside_band == figures - static_cast<int>(outside_with_reason.size()));
  CHECK(compared >= 40);
}

// ---------------------------------------------------------------------------
// Physics floors for any hardware: figures past what silicon does are located
// errors, every NVLink switch joins a known number of GPUs, and a pool on
// another GPU gets the scenario GPU's precision checks.

namespace {

json llama_latency_on(const json& gpu) {
  return {{"schema_version", 1},
          {"model", "llama-2-7b"},
          {"hardware", {{"gpu", gpu}, {"gpus_per_node", 1}}},
          {"serving",
           {{"mode", "latency"},
            {"parallelism", {{"tp", 1}, {"pp", 1}}},
            {"workload", {{"prompt_tokens", 512}, {"output_tokens", 32}, {"batch_size", 1}}}}}};
}

std::string run_error_path(const json& scenario) {
  const json e = sightline::test::run(scenario);
  if (e["ok"] == true) return "(accepted)";
  return e["error"]["path"].get<std::string>();
}

}  // namespace

TEST_CASE("hw floors: a peak far below any real GPU's is a located error, not a GPU faster than a B200") {
  // Issue 34: an FP4 peak of 1e-200 TFLOP/s was priced faster than a real B200,
  // and 1e-300 TFLOP/s gave an MFU of 629%.
  json g = sightline::test::preset("gpus", "b200");
  g["id"] = "tiny-fp4";
  g.erase("calibration");
  g["peak_tflops"]["fp4"] = 1e-200;
  CHECK(run_error_path(llama_latency_on(g)) == "/hardware/gpu/peak_tflops/fp4");
  g["peak_tflops"]["fp4"] = 9000;
  g["peak_tflops"]["bf16"] = 1e-300;
  CHECK(run_error_path(llama_latency_on(g)) == "/hardware/gpu/peak_tflops/bf16");
  g["peak_tflops"]["bf16"] = 2e6;  // 2 EFLOP/s on one GPU
  CHECK(run_error_path(llama_latency_on(g)) == "/hardware/gpu/peak_tflops/bf16");
  g["peak_tflops"]["bf16"] = 2250;
  g["hbm_bandwidth_GBps"] = 1e-3;
  CHECK(run_error_path(llama_latency_on(g)) == "/hardware/gpu/hbm_bandwidth_GBps");
  g["hbm_bandwidth_GBps"] = 8000;
  g["boost_clock_MHz"] = 1e-9;
  CHECK(run_error_path(llama_latency_on(g)) == "/hardware/gpu/boost_clock_MHz");
  g["boost_clock_MHz"] = 1965;
  CHECK(run_error_path(llama_latency_on(g)) == "(accepted)");
  // A format the GPU lacks is 0, as before.
  g["peak_tflops"]["int4"] = 0;
  CHECK(run_error_path(llama_latency_on(g)) == "(accepted)");
}

TEST_CASE("hw floors: custom hardware is never faster than its own bytes and FLOPs allow") {
  // Every kernel of a prefill and a decode on a custom GPU is no faster than
  // its FLOPs at the GPU's peak and its bytes at the GPU's HBM bandwidth
  // allow, L2 aside (the kernels' L2 hits are the only traffic served faster):
  // so the step is no faster than the roofline of the L2-free kernels.
  json g = sightline::test::preset("gpus", "h100-sxm");
  g["id"] = "my-h100";
  g.erase("calibration");
  g["l2_cache_MiB"] = 0;
  json roof = llama_latency_on(g);
  roof["cost_model"] = {{"tier", "roofline"}};
  const json r = sightline::test::run(roof);
  const json c = sightline::test::run(llama_latency_on(g));
  REQUIRE(r["ok"] == true);
  REQUIRE(c["ok"] == true);
  for (const char* m : {"ttft_ms", "tpot_ms"}) {
    CAPTURE(m);
    CHECK(c["result"]["metrics"][m].get<double>() >= r["result"]["metrics"][m].get<double>());
  }
}

TEST_CASE("hw floors: every NVLink switch and bridge preset says how many GPUs one domain joins") {
  for (const json* p : list_presets("interconnects")) {
    const InterconnectSpec l = read_interconnect(*p, "/interconnect");
    CAPTURE(l.id);
    if (l.kind == "nvswitch" || l.kind == "nvlink_p2p" || l.kind == "xgmi") CHECK(l.domain_gpus >= 2);
  }
  // A custom switch without one is refused, not priced as one domain of any size.
  json sw = sightline::test::preset("interconnects", "nvlink4-nvswitch");
  sw.erase("domain_gpus");
  CHECK_THROWS_AS(read_interconnect(sw, "/hardware/intra_node"), SightlineError);
  try {
    read_interconnect(sw, "/hardware/intra_node");
  } catch (const SightlineError& e) {
    CHECK(e.path() == "/hardware/intra_node/domain_gpus");
  }
}

TEST_CASE("hw floors: 64 H100s at TP 64 are not priced as one NVLink node") {
  json s = sightline::test::preset("scenarios", "I1.1");
  s["model"] = "llama-3.1-405b";
  s["hardware"] = {{"gpu", "h100-sxm"}, {"gpus_per_node", 64}, {"intra_node", "nvlink4-nvswitch"}};
  s["serving"]["parallelism"] = {{"tp", 64}, {"pp", 1}};
  CHECK(run_error_path(s) == "/hardware/gpus_per_node");
  // Eight HGX nodes of 8: tensor parallelism does not span the network.
  s["hardware"] = {{"gpu", "h100-sxm"}, {"gpus_per_node", 8}, {"nodes", 8}, {"intra_node", "nvlink4-nvswitch"}, {"inter_node", "ib-ndr"}};
  CHECK(run_error_path(s) != "(accepted)");
}

TEST_CASE("hw floors: a pool on another GPU gets the scenario GPU's precision checks") {
  // Issue 34: fp8 weights on an A100 pool were accepted.
  json s = sightline::test::preset("scenarios", "I5.3");
  json& pools = s["serving"]["cluster"]["pools"];
  REQUIRE(pools.is_array());
  s["precision"] = {{"weights", "fp8"}, {"activations", "bf16"}, {"kv_cache", "bf16"}};
  s["hardware"]["gpu"] = "h100-sxm";
  pools[0]["gpu"] = "a100-80g-sxm";
  CHECK(run_error_path(s) == "/serving/cluster/pools/0/gpu");
}
