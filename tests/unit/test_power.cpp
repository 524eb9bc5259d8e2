// Achieved utilization (MFU, MBU) of a priced step, the one power model
// (perf/power.hpp), and the promise it keeps: the same decode work costs the
// same energy per output token in a latency run and in a serving run.
#include <doctest/doctest.h>

#include "hw/hardware.hpp"
#include "perf/cost_setup.hpp"
#include "perf/power.hpp"
#include "test_helpers.hpp"

using namespace sightline;
using sightline::test::run;

namespace {

// A GPU with round numbers: 100 TFLOP/s dense BF16, 10 FP32, 1000 GB/s HBM,
// 500 W TDP, 100 W idle.
GpuSpec round_gpu() {
  return read_gpu(json{{"id", "round"},
                       {"peak_tflops", {{"fp32", 10}, {"bf16", 100}, {"fp16", 100}}},
                       {"memory_GiB", 80},
                       {"hbm_bandwidth_GBps", 1000},
                       {"sm_count", 100},
                       {"tdp_W", 500},
                       {"idle_power_W", 100}},
                  "/gpu");
}

Operator gemm(const char* name, double flops, double bytes, Dtype dtype = Dtype::BF16) {
  Operator op;
  op.name = name;
  op.family = OpFamily::Gemm;
  op.count = 1;
  op.flops = flops;
  op.bytes = bytes;
  op.compute_dtype = dtype;
  op.m = op.n = op.k = 4096;
  return op;
}

StepCost price_on_roofline(const GpuSpec& gpu, const StepOperators& step, const InterconnectSpec* link = nullptr) {
  RooflineCostModel model;
  CostContext ctx;
  ctx.gpu = &gpu;
  ctx.tp_link = link;
  return price_step(step, model, ctx);
}

json latency_scenario(const std::string& gpu, int tp, int pp, int prompt, int output) {
  json hw = {{"gpu", gpu}, {"gpus_per_node", tp * pp}};
  if (tp * pp > 1) hw["intra_node"] = gpu == "a100-80g-sxm" ? "nvlink3-nvswitch" : "nvlink4-nvswitch";
  return {{"schema_version", 1},
          {"id", "energy-latency"},
          {"title", "energy: latency mode"},
          {"seed", 1},
          {"model", "llama-2-7b"},
          {"hardware", hw},
          {"precision", {{"weights", "bf16"}, {"activations", "bf16"}, {"kv_cache", "bf16"}}},
          {"serving",
           {{"mode", "latency"},
            {"parallelism", {{"tp", tp}, {"pp", pp}}},
            {"workload", {{"batch_size", 1}, {"prompt_tokens", prompt}, {"output_tokens", output}}}}}};
}

// The same request served alone by the simulator: one request arriving at 0.
json single_request_serving(const json& latency) {
  json s = latency;
  s["id"] = "energy-serving";
  s["title"] = "energy: one request in the serving simulator";
  const json& w = latency["serving"]["workload"];
  s["serving"]["mode"] = "simulate";
  s["serving"]["workload"] = {{"arrival", {{"process", "all_at_once"}}},
                              {"num_requests", 1},
                              {"prompt_tokens", {{"dist", "fixed"}, {"value", w["prompt_tokens"]}}},
                              {"output_tokens", {{"dist", "fixed"}, {"value", w["output_tokens"]}}}};
  return s;
}

json serving_llama7b(double rate_qps, int requests, int prompt, int output) {
  return {{"schema_version", 1},
          {"id", "util"},
          {"title", "utilization"},
          {"seed", 3},
          {"model", "llama-2-7b"},
          {"hardware", {{"gpu", "a100-80g-sxm"}, {"gpus_per_node", 1}}},
          {"precision", {{"weights", "bf16"}, {"activations", "bf16"}, {"kv_cache", "bf16"}}},
          {"serving",
           {{"mode", "simulate"},
            {"parallelism", {{"tp", 1}, {"pp", 1}}},
            {"workload",
             {{"arrival", {{"process", "fixed"}, {"rate_qps", rate_qps}}},
              {"num_requests", requests},
              {"prompt_tokens", {{"dist", "fixed"}, {"value", prompt}}},
              {"output_tokens", {{"dist", "fixed"}, {"value", output}}}}}}}};
}

}  // namespace

TEST_CASE("MFU and MBU of a hand-computable step: a compute-bound and a memory-bound GEMM") {
  const GpuSpec gpu = round_gpu();
  StepOperators step;
  // A: 1e11 FLOPs = 1 ms at 100 TFLOP/s; 2.5e8 B = 0.25 ms at 1000 GB/s -> 1 ms, compute-bound.
  step.ops.push_back(gemm("a", 1e11, 2.5e8));
  // B: 1e10 FLOPs = 0.1 ms; 1e9 B = 1 ms -> 1 ms, memory-bound.
  step.ops.push_back(gemm("b", 1e10, 1e9));
  const StepCost c = price_on_roofline(gpu, step);
  CHECK(c.time_s == doctest::Approx(2e-3));
  CHECK(c.compute_peak_s == doctest::Approx(1.1e-3));
  CHECK(c.memory_peak_s == doctest::Approx(1.25e-3));

  const Utilization u = utilization(c.compute_peak_s, c.memory_peak_s, c.time_s);
  CHECK(u.compute == doctest::Approx(0.55));  // 1.1 ms of work at peak in 2 ms
  CHECK(u.memory == doctest::Approx(0.625));  // 1.25 ms of traffic at peak in 2 ms
  CHECK(gpu_activity(u) == doctest::Approx(0.55 + 0.5 * 0.625));
  // 100 W + 400 W x 0.8625 = 445 W for 2 ms.
  CHECK(gpu_power_W(gpu, gpu_activity(u)) == doctest::Approx(445.0));
  CHECK(busy_energy_J(gpu, c.compute_peak_s, c.memory_peak_s, c.time_s) == doctest::Approx(0.89));

  SUBCASE("a collective moves link bytes: time, but neither FLOPs at peak nor HBM traffic") {
    const InterconnectSpec link = read_interconnect(json("nvlink3-nvswitch"), "/link");
    StepOperators with_comm = step;
    Operator ar;
    ar.name = "all_reduce";
    ar.family = OpFamily::Collective;
    ar.collective = CollectiveKind::AllReduce;
    ar.group_size = 2;
    ar.message_bytes = ar.bytes = 64e6;
    with_comm.ops.push_back(ar);
    const StepCost cc = price_on_roofline(gpu, with_comm, &link);
    CHECK(cc.time_s > c.time_s);
    CHECK(cc.compute_peak_s == doctest::Approx(c.compute_peak_s));
    CHECK(cc.memory_peak_s == doctest::Approx(c.memory_peak_s));
    CHECK(utilization(cc.compute_peak_s, cc.memory_peak_s, cc.time_s).compute < u.compute);
  }
  SUBCASE("FLOPs of a dtype the GPU lacks are measured against its FP16/BF16 peak") {
    StepOperators fp8;
    fp8.ops.push_back(gemm("a8", 1e11, 2.5e8, Dtype::FP8));  // no fp8 peak on this GPU
    CHECK(price_on_roofline(gpu, fp8).compute_peak_s == doctest::Approx(1e-3));
  }
}

TEST_CASE("power: the activity is capped at TDP, and a pipeline stage idles for the rest of the step") {
  const GpuSpec gpu = round_gpu();
  // Saturated compute and memory: activity 1.5 is capped at 1 -> TDP.
  CHECK(busy_energy_J(gpu, 1.0, 1.0, 1.0) == doctest::Approx(500.0));
  // Nothing at peak: idle power.
  CHECK(busy_energy_J(gpu, 0.0, 0.0, 2.0) == doctest::Approx(200.0));
  // Below the cap the energy is linear in the work, whatever the step time:
  // idle x t + (TDP - idle) x (compute_peak_s + 0.5 memory_peak_s).
  CHECK(busy_energy_J(gpu, 0.2, 0.4, 1.0) == doctest::Approx(100.0 + 400.0 * 0.4));
  CHECK(busy_energy_J(gpu, 0.2, 0.4, 2.0) == doctest::Approx(200.0 + 400.0 * 0.4));
  // pp = 2: each GPU runs half the layers (half the work) for half the step,
  // then idles: 0.5 s at activity 0.4 (260 W) + 0.5 s at 100 W.
  CHECK(step_energy_per_gpu_J(gpu, 2, 0.2, 0.4, 1.0) == doctest::Approx(0.5 * 260.0 + 0.5 * 100.0));
  CHECK(step_energy_per_gpu_J(gpu, 1, 0.2, 0.4, 1.0) == doctest::Approx(260.0));
}

TEST_CASE("energy: a batch-1 decode costs the same energy per output token in latency and serving mode") {
  struct Case {
    const char* gpu;
    int tp, pp, prompt, output;
  };
  for (const Case& k : {Case{"a100-80g-sxm", 1, 1, 512, 128}, Case{"h100-sxm", 2, 2, 1024, 64},
                        Case{"h100-sxm", 1, 1, 128, 256}}) {
    CAPTURE(k.gpu);
    CAPTURE(k.tp);
    CAPTURE(k.pp);
    const json lat_s = latency_scenario(k.gpu, k.tp, k.pp, k.prompt, k.output);
    const json lat = run(lat_s);
    const json srv = run(single_request_serving(lat_s));
    REQUIRE(lat["ok"].get<bool>());
    REQUIRE(srv["ok"].get<bool>());
    const double e_lat = lat["result"]["metrics"]["energy_J_per_output_token"].get<double>();
    const json& m = srv["result"]["metrics"];
    const double e_srv = m["energy"]["per_output_token_J"].get<double>();
    CHECK(e_lat > 0);
    // Same steps, same prices, same power model; only the nanosecond rounding
    // of the simulator's clock differs.
    CHECK(e_srv == doctest::Approx(e_lat).epsilon(1e-6));
    // The request saw the latency run's timings.
    CHECK(m["tpot_ms"]["mean"].get<double>() == doctest::Approx(lat["result"]["metrics"]["tpot_ms"].get<double>()).epsilon(1e-6));
    // The GPUs never waited for a request, yet the power is far below TDP:
    // busy fraction 1 (per stage 1/pp), but batch-1 decode uses little compute.
    CHECK(m["gpu"]["busy_fraction"].get<double>() == doctest::Approx(1.0 / k.pp).epsilon(1e-6));
    CHECK(m["gpu"]["mfu"]["over_busy_time"].get<double>() < 0.1);
    CHECK(m["energy"]["mean_power_per_gpu_W"].get<double>() < 0.6 * (k.gpu == std::string("a100-80g-sxm") ? 400 : 700));
  }
}

TEST_CASE("serving: MFU and MBU over the run, while busy and per step, beside the busy fraction") {
  SUBCASE("saturated decode: busy nearly all the time, little of the compute used") {
    // 64 requests at 50 req/s, long outputs: the GPU always has a batch to run.
    const json r = run(serving_llama7b(50, 64, 64, 512));
    REQUIRE(r["ok"].get<bool>());
    const json& g = r["result"]["metrics"]["gpu"];
    const double busy = g["busy_fraction"].get<double>();
    CHECK(busy > 0.99);
    const json& mfu = g["mfu"];
    const json& mbu = g["mbu"];
    CHECK(mfu["over_busy_time"].get<double>() < 0.3);
    CHECK(mbu["over_busy_time"].get<double>() > mfu["over_busy_time"].get<double>());
    // Over wall time = while busy x busy fraction (single replica, no clamping;
    // busy time on the clock's whole-ns steps vs the priced seconds).
    CHECK(mfu["over_wall_time"].get<double>() == doctest::Approx(mfu["over_busy_time"].get<double>() * busy).epsilon(1e-6));
    CHECK(mbu["over_wall_time"].get<double>() == doctest::Approx(mbu["over_busy_time"].get<double>() * busy).epsilon(1e-6));
    // One sample per step, every value a fraction.
    CHECK(mfu["per_step"]["count"].get<int64_t>() == r["result"]["metrics"]["concurrency"]["steps"].get<int64_t>());
    for (const json* u : {&mfu, &mbu}) {
      const json& d = (*u)["per_step"];
      CHECK(d["min"].get<double>() >= 0);
      CHECK(d["max"].get<double>() <= 1);
      CHECK(d["p50"].get<double>() <= d["p90"].get<double>());
      CHECK(d["p90"].get<double>() <= d["p99"].get<double>());
    }
    // The time series carries the per-step values too.
    const json& ts = r["result"]["time_series"];
    REQUIRE(ts["mfu"].size() == ts["t_s"].size());
    REQUIRE(ts["mbu"].size() == ts["t_s"].size());
    const json& e = r["result"]["metrics"]["energy"];
    CHECK(e["total_J"].get<double>() == doctest::Approx(e["busy_J"].get<double>() + e["idle_J"].get<double>()));
    CHECK(e["mean_power_per_gpu_W"].get<double>() > 50.0);   // A100 idle
    CHECK(e["mean_power_per_gpu_W"].get<double>() < 400.0);  // A100 TDP
  }
  SUBCASE("long prompts, one output token: prefill steps use compute, not bandwidth") {
    const json r = run(serving_llama7b(2, 8, 3000, 1));
    REQUIRE(r["ok"].get<bool>());
    const json& g = r["result"]["metrics"]["gpu"];
    CHECK(g["mfu"]["over_busy_time"].get<double>() > 0.4);
    CHECK(g["mfu"]["over_busy_time"].get<double>() > g["mbu"]["over_busy_time"].get<double>());
  }
  SUBCASE("a light load: the GPU waits between requests at idle power") {
    const json light = run(serving_llama7b(0.5, 6, 256, 32));
    REQUIRE(light["ok"].get<bool>());
    const json& m = light["result"]["metrics"];
    CHECK(m["gpu"]["busy_fraction"].get<double>() < 0.5);
    CHECK(m["energy"]["idle_J"].get<double>() > 0);
    // Wall-time utilization is diluted by the waiting; busy-time utilization is not.
    CHECK(m["gpu"]["mbu"]["over_wall_time"].get<double>() < 0.5 * m["gpu"]["mbu"]["over_busy_time"].get<double>());
  }
}
