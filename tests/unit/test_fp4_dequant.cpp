// FP4 experts as engines run them (issue 38, "What to build" 1): MXFP4
// experts on Hopper, which has no FP4 tensor cores, are dequantised inside
// the GEMM kernel (the engines' Triton MoE kernels) and multiply at the 16-bit
// peak; on Blackwell they run on the FP4 tensor cores with no dequantisation.
#include <doctest/doctest.h>

#include "model/operators.hpp"
#include "perf/cost_setup.hpp"
#include "scenario/scenario.hpp"

using namespace sightline;

namespace {

Scenario mxfp4_scenario(const std::string& gpu) {
  const json s = {{"schema_version", 1},
                  {"id", "mxfp4"},
                  {"model", "gpt-oss-120b"},
                  {"hardware", {{"gpu", gpu}, {"gpus_per_node", 1}}},
                  {"precision", {{"weights", "mxfp4"}, {"activations", "bf16"}}},
                  {"serving", {{"mode", "latency"}, {"workload", {{"prompt_tokens", 128}, {"output_tokens", 8}}}}}};
  return read_scenario(s);
}

const Operator& expert_gemm(const StepOperators& step) {
  for (const Operator& o : step.ops)
    if (o.family == OpFamily::Gemm && o.name.rfind("moe_expert_", 0) == 0) return o;
  FAIL("no routed-expert GEMM");
  return step.ops.front();
}

}  // namespace

TEST_CASE("fp4 experts: dequantised in-kernel at the 16-bit peak on Hopper, native FP4 on Blackwell") {
  BatchShape b;
  b.seqs.assign(256, SeqChunk{1, 2048});
  const Scenario hopper = mxfp4_scenario("h100-sxm");
  const Scenario blackwell = mxfp4_scenario("b200");
  const StepOperators sh = build_forward_step(hopper.model, hopper.precision, ParallelLayout{}, b, StepOptions{});
  const StepOperators sb = build_forward_step(blackwell.model, blackwell.precision, ParallelLayout{}, b, StepOptions{});
  const Operator& h = expert_gemm(sh);
  const Operator& w = expert_gemm(sb);
  // Hopper: bf16 math on the same FP4 weight bytes, plus ALU work to
  // dequantise every weight of every expert the batch hits.
  CHECK(h.compute_dtype == Dtype::BF16);
  CHECK(h.weight_bytes == doctest::Approx(w.weight_bytes));
  CHECK(h.dequant_ops >= 4.0 * static_cast<double>(h.k) * static_cast<double>(h.n));
  // Blackwell: the FP4 tensor cores take the weights as they are.
  CHECK(w.compute_dtype == Dtype::MXFP4);
  CHECK(w.dequant_ops == 0);
  // The same GEMM priced on Hopper costs at least its dequantisation on the
  // FP32 units (67 TFLOP/s on an H100 SXM).
  const CostSetup setup = make_cost_setup(hopper.cost_model, hopper.hardware);
  StepOperators one;
  one.ops.push_back(h);
  const double t = setup.price_kernels(one).gpu_time_s;
  CHECK(t >= h.dequant_ops / (hopper.hardware.gpu.peak_tflops.fp32 * 1e12));
}
