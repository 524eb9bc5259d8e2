// Power and clock limits (issue 36, "power and clocks"): a limit lowers the
// peaks it governs through the sustained clock, never makes a GPU faster,
// leaves a memory-bound decode nearly where it was, and a limit at or above
// the part's own figure changes nothing at all.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "test_helpers.hpp"

using namespace sightline;
using namespace sightline::test;

namespace {

// I1.1 (one GPU, latency mode) on an inlined H100 SXM with `limits` merged
// into the GPU object.
json limited_scenario(const json& limits, int prompt_tokens, int batch) {
  json s = preset("scenarios", "I1.1");  // Llama-2-7B: 4k context
  json g = preset("gpus", "h100-sxm");
  for (auto it = limits.begin(); it != limits.end(); ++it) g[it.key()] = it.value();
  s["hardware"] = {{"gpu", g}, {"gpus_per_node", 1}};
  s["serving"]["workload"] = {{"prompt_tokens", prompt_tokens}, {"output_tokens", 64}, {"batch_size", batch}};
  return s;
}

json metrics_of(const json& scenario) {
  const json e = run(scenario);
  REQUIRE_MESSAGE(e["ok"] == true, e.dump());
  return e["result"]["metrics"];
}

}  // namespace

TEST_CASE("power limits: the clock follows the cube root of the power above idle") {
  const GpuSpec h100 = read_gpu(json("h100-sxm"), "/hardware/gpu");
  // Half the dynamic power (above idle) allows 2^(-1/3) = 0.794 of the clock.
  const double half_dynamic_W = h100.idle_power_W + (h100.tdp_W - h100.idle_power_W) / 2;
  CHECK(limited_clock_ratio(h100, {half_dynamic_W, 0}, "/gpu") == doctest::Approx(0.7937).epsilon(1e-3));
  CHECK(limited_clock_ratio(h100, {h100.tdp_W, 0}, "/gpu") == 1.0);
  CHECK(limited_clock_ratio(h100, {0, h100.boost_clock_MHz / 2}, "/gpu") == doctest::Approx(0.5));
  const GpuSpec capped = apply_operating_limits(h100, {half_dynamic_W, 0}, "/gpu");
  CHECK(capped.peak_tflops.bf16 == doctest::Approx(h100.peak_tflops.bf16 * 0.7937).epsilon(1e-3));
  CHECK(capped.hbm_bandwidth_GBps == h100.hbm_bandwidth_GBps);
  CHECK(capped.tdp_W == doctest::Approx(half_dynamic_W));
  CHECK(capped.calibration.empty());  // priced by transfer, not from the unlimited part's measurements
  CHECK(capped.name.find("limited to") != std::string::npos);
}

TEST_CASE("power limits: a limit at or above the part's own TDP and clock is the same GPU, byte for byte") {
  const json plain = run(limited_scenario(json::object(), 2048, 8));
  const json same = run(limited_scenario({{"power_limit_W", 700}, {"clock_limit_MHz", 5000}}, 2048, 8));
  REQUIRE(plain["ok"] == true);
  CHECK(plain.dump() == same.dump());
}

TEST_CASE("power limits: a lower limit never predicts a shorter time; compute-bound prefill slows, batch-1 decode barely") {
  double previous_ttft = 0, previous_tpot = 0;
  json first, last;
  for (double watts : {700.0, 600.0, 500.0, 400.0, 300.0, 200.0}) {
    const json m = metrics_of(limited_scenario({{"power_limit_W", watts}}, 4000, 1));
    INFO(watts << " W: TTFT " << m["ttft_ms"] << " ms, TPOT " << m["tpot_ms"] << " ms");
    CHECK(m["ttft_ms"].get<double>() >= previous_ttft * (1 - 1e-9));
    CHECK(m["tpot_ms"].get<double>() >= previous_tpot * (1 - 1e-9));
    previous_ttft = m["ttft_ms"].get<double>();
    previous_tpot = m["tpot_ms"].get<double>();
    if (first.is_null()) first = m;
    last = m;
  }
  // 200 W of a 700 W H100 (idle 70 W): clock x0.59. A 4k-token prefill is
  // compute-bound (1.3x-1.7x slower); a batch-1 decode reads weights (< 1.25x).
  const double ttft_ratio = last["ttft_ms"].get<double>() / first["ttft_ms"].get<double>();
  const double tpot_ratio = last["tpot_ms"].get<double>() / first["tpot_ms"].get<double>();
  CHECK(ttft_ratio > 1.3);
  CHECK(ttft_ratio < 1.8);
  CHECK(tpot_ratio < 1.25);
  CHECK(tpot_ratio < ttft_ratio);
}

TEST_CASE("power limits: a limit at or below idle power, or a clock below any GPU's, is a located error") {
  const json e = run(limited_scenario({{"power_limit_W", 50}}, 512, 1));
  REQUIRE(e["ok"] == false);
  CHECK(e["error"]["path"] == "/hardware/gpu/power_limit_W");
  CHECK(e["error"]["code"] == "out_of_range");
  const json c = run(limited_scenario({{"clock_limit_MHz", 5}}, 512, 1));
  REQUIRE(c["ok"] == false);
  CHECK(c["error"]["path"] == "/hardware/gpu/clock_limit_MHz");
}
