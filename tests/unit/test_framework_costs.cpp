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
