// Framework work of a training step (train/framework_costs.hpp): the gradient
// norm's scalar all-reduce over every rank, Transformer Engine's FP8 amax
// all-reduces per micro-batch, and the input batch's host-to-device copy.
#include <doctest/doctest.h>

#include "test_helpers.hpp"

using namespace sightline::test;

namespace {
json framework_of(const json& scenario) {
  const json r = run(scenario);
  REQUIRE(r.value("ok", false));
  json parts = r["result"]["step_breakdown_ms"]["framework_parts"];
  parts["total"] = r["result"]["step_breakdown_ms"]["framework"];
  return parts;
}
}  // namespace

TEST_CASE("framework costs: scalar all-reduce over every rank, amax only with FP8, copies per micro-batch") {
  json s = preset("scenarios", "T2.1");  // 8 H100, dp 8, 8 micro-batches of 4096 tokens
  const json bf16 = framework_of(s);
  CHECK(bf16["grad_norm_allreduce"].get<double>() > 0);
  CHECK(bf16["fp8_amax_allreduce"].get<double>() == 0);
  // int64 ids and labels of 8 x 4096 tokens over the H100's PCIe (Gen5 x16, 64 GB/s one way).
  CHECK(bf16["input_copy"].get<double>() == doctest::Approx(8 * 4096 * 16.0 / 64e9 * 1e3).epsilon(0.01));
  CHECK(bf16["total"].get<double>() ==
        doctest::Approx(bf16["grad_norm_allreduce"].get<double>() + bf16["input_copy"].get<double>()));

  s["training"]["fp8"] = "layers";
  const json fp8 = framework_of(s);
  CHECK(fp8["fp8_amax_allreduce"].get<double>() > 0);
  // One forward and one backward amax all-reduce per micro-batch: twice the micro-batches, twice the time.
  json twice = s;
  twice["training"]["batch"]["gradient_accumulation"] = 16;
  CHECK(framework_of(twice)["fp8_amax_allreduce"].get<double>() ==
        doctest::Approx(2 * fp8["fp8_amax_allreduce"].get<double>()));

  // One GPU: no collective at all.
  json one = preset("scenarios", "T4.1");
  const json single = framework_of(one);
  CHECK(single["grad_norm_allreduce"].get<double>() == 0);
  CHECK(single["fp8_amax_allreduce"].get<double>() == 0);
}

TEST_CASE("optimizer step: a memory-bound update over the parameters this GPU holds, sharded by ZeRO-1") {
  // Llama-2-7B on 8 H100, TP2 PP2 DP2 (the golden training scenario): the
  // distributed optimizer (ZeRO-1) updates half of what each GPU's replica
  // holds, so its step takes about half as long as without sharding.
  json s = json::parse(read_source_file("tests/golden/llama2-7b-h100-train-tp2-pp2-dp2.json"));
  s["training"].erase("compare");
  s["training"].erase("key_metrics");  // one names the compare variant
  s["training"]["parallelism"]["zero_stage"] = 0;
  auto optimizer_ms = [](const json& sc) {
    const json r = run(sc);
    REQUIRE_MESSAGE(r.value("ok", false), r.dump().substr(0, 400));
    return r["result"]["step_breakdown_ms"]["optimizer"].get<double>();
  };
  const double unsharded = optimizer_ms(s);
  s["training"]["parallelism"]["zero_stage"] = 1;
  const double sharded = optimizer_ms(s);
  CHECK(unsharded / sharded == doctest::Approx(2.0).epsilon(0.05));
  // At least Adam's fp32 moments read and written (16 bytes a parameter) for
  // the quarter of 6.7e9 parameters one GPU of TP2 x PP2 holds, at the H100's
  // 3.35 TB/s.
  CHECK(unsharded >= 16.0 * 6.7e9 / 4 / 3.35e12 * 1e3);
}
