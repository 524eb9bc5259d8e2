// MLA (DeepSeek-V2/V3/R1) decode priced as its kernels run: in the latent
// space, on the tensor cores. Physics properties, not fitted numbers:
// - decode attention's FLOPs run at a tensor-core rate (between the FP32 and
//   the 16-bit dense peaks), so MLA decode at TP1 is not 15x too slow;
// - a speculative verify (MTP's k + 1 tokens) reads the latent cache once and
//   never re-expands it into per-head K/V;
// - the absorbed projections add a fixed two kernels per layer.
#include <doctest/doctest.h>

#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "model/operators.hpp"
#include "perf/cost_setup.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace {

StepOperators mla_step(const ModelArch& m, int seqs, int64_t new_tokens, int64_t cached) {
  BatchShape b;
  b.seqs.assign(static_cast<size_t>(seqs), SeqChunk{new_tokens, cached});
  Precision p;
  p.weights = Dtype::FP8;
  p.activations = Dtype::FP8;
  p.kv_cache = Dtype::BF16;
  return build_forward_step(m, p, ParallelLayout{}, b, StepOptions{});
}

const Operator* mla_find_op(const StepOperators& s, const std::string& name) {
  for (const Operator& op : s.ops)
    if (op.name == name) return &op;
  return nullptr;
}

double mla_kernel_count(const StepOperators& s) {
  double n = 0;
  for (const Operator& op : s.ops) n += op.count;
  return n;
}

}  // namespace

TEST_CASE("MLA decode attention runs on the tensor cores") {
  const ModelArch m = read_model(json("deepseek-r1"), "/model");
  const GpuSpec gpu = read_gpu(json("h200"), "/gpu");
  std::string provenance;
  const auto model = make_kernel_cost_model("auto", gpu, &provenance);
  CostContext ctx;
  ctx.gpu = &gpu;
  // 128 sequences of 2,048 cached tokens at TP1 (attention data parallel).
  const StepOperators s = mla_step(m, 128, 1, 2048);
  const Operator* attn = mla_find_op(s, "attn_decode");
  REQUIRE(attn != nullptr);
  const OpCost c = model->cost(*attn, ctx);
  const double tflops = attn->flops / c.time_s / 1e12;
  INFO("MLA decode achieved " << tflops << " TFLOP/s");
  CHECK(tflops > gpu.peak_tflops.fp32);          // not on the FP32 units
  CHECK(tflops < gpu.peak_tflops_for(Dtype::BF16));  // not above the 16-bit dense peak
  // Never faster than streaming the latent cache once.
  CHECK(c.time_s >= attn->bytes / (gpu.hbm_bandwidth_GBps * 1e9));
}

TEST_CASE("an MLA speculative verify stays in the latent space") {
  const ModelArch m = read_model(json("deepseek-r1"), "/model");
  const StepOperators decode = mla_step(m, 4, 1, 2048);
  const StepOperators verify = mla_step(m, 4, 4, 2048);  // MTP k = 3: 4 new tokens per sequence
  // No per-head K/V expansion of the cache, as a prompt would need.
  CHECK(mla_find_op(verify, "attn_kv_b_proj") == nullptr);
  CHECK(mla_find_op(mla_step(m, 4, 512, 0), "attn_kv_b_proj") != nullptr);
  const Operator* d = mla_find_op(decode, "attn_decode");
  const Operator* v = mla_find_op(verify, "attn_decode");
  REQUIRE(d != nullptr);
  REQUIRE(v != nullptr);
  CHECK(mla_find_op(verify, "attn_prefill") == nullptr);
  // The latent cache is read once per step: bytes grow only by the query rows
  // (per-head K/V, 128 x 320 values per cached token, would be ~70x), FLOPs
  // grow with the rows.
  CHECK(v->bytes < 1.25 * d->bytes);
  CHECK(v->flops > 3.9 * d->flops);
  CHECK(v->q_tokens == 16);
  CHECK(v->seqs == 4);
  // The same kernels per layer: the absorbed projections are two GEMMs either way.
  CHECK(mla_find_op(decode, "attn_q_absorb") != nullptr);
  CHECK(mla_find_op(decode, "attn_v_absorb") != nullptr);
  CHECK(mla_kernel_count(verify) == doctest::Approx(mla_kernel_count(decode)));
}
