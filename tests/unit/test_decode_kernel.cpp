// A stack's decode-attention kernel (perf/decode_kernel.hpp): vLLM V1 and
// SGLang run FlashAttention-3's paged decode on Hopper, which vllm-project/vllm
// PR #43232 times at 1.0-1.7x TensorRT-LLM's XQA by batch and context
// (presets/decode_kernels/fa3-paged-hopper.json); the GPU's own decode level is
// the fastest kernels' (tests/unit/test_decode_attention_published.cpp).
#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "perf/cost_setup.hpp"
#include "perf/decode_kernel.hpp"
#include "perf/host_overhead.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace {

StepOperators decode_step(const ModelArch& m, int64_t seqs, int64_t kv) {
  BatchShape b;
  b.seqs.assign(static_cast<size_t>(seqs), SeqChunk{1, kv - 1});  // kv keys after the new token
  return build_forward_step(m, Precision{}, ParallelLayout{}, b, StepOptions{});
}

// The step's decode-attention time (all layers) priced on `gpu` with `stack`.
double decode_attention_s(const ModelArch& m, const std::string& gpu, const json& stack, int64_t seqs, int64_t kv) {
  HardwareSpec hw;
  hw.gpu = read_gpu(json(gpu), "/hardware/gpu");
  CostModelSpec spec;
  spec.software_stack = read_software_stack(stack, "/cost_model/software_stack");
  const CostSetup setup = make_cost_setup(spec, hw);
  const StepCost c = setup.price(decode_step(m, seqs, kv));
  double s = 0;
  for (const PricedOperator& p : c.parts)
    if (p.family == OpFamily::AttentionDecode) s += p.time_s;
  return s;
}

}  // namespace

TEST_CASE("decode kernel: FA3 stacks take the published FA3-over-XQA time on Hopper, by batch and context") {
  const ModelArch m = read_model(json("llama-3-8b"), "/model");
  for (const char* gpu : {"h100-sxm", "h200"}) {
    CAPTURE(gpu);
    const double xqa = decode_attention_s(m, gpu, json("trtllm-like"), 128, 1024);
    for (const char* stack : {"vllm-v1-like", "sglang-overlap-like"}) {
      CAPTURE(stack);
      // The grid's cells, exactly: 1.70 at 128 x 1k, 1.39 at 128 x 32k, 1.01 at 16 x 32k.
      CHECK(decode_attention_s(m, gpu, json(stack), 128, 1024) / xqa == doctest::Approx(1.70));
      CHECK(decode_attention_s(m, gpu, json(stack), 128, 32768) /
                decode_attention_s(m, gpu, json("trtllm-like"), 128, 32768) ==
            doctest::Approx(1.39));
      CHECK(decode_attention_s(m, gpu, json(stack), 16, 32768) /
                decode_attention_s(m, gpu, json("trtllm-like"), 16, 32768) ==
            doctest::Approx(1.01));
      // Between cells, bilinear in log2: 90 sequences of 1,448 tokens lie between 64/128 and 1k/2k.
      const double mid = decode_attention_s(m, gpu, json(stack), 90, 1448) /
                         decode_attention_s(m, gpu, json("trtllm-like"), 90, 1448);
      CHECK(mid > 1.31);
      CHECK(mid < 1.70);
    }
  }
}

TEST_CASE("decode kernel: not on Blackwell, not for MLA, not on stacks that name none") {
  const ModelArch llama = read_model(json("llama-3-8b"), "/model");
  // vLLM puts FlashInfer (trtllm-gen) first on Blackwell: the kernel names Hopper only.
  CHECK(decode_attention_s(llama, "b200", json("vllm-v1-like"), 128, 1024) ==
        decode_attention_s(llama, "b200", json("trtllm-like"), 128, 1024));
  // MLA's latent decode runs other kernels (FlashMLA and its kind).
  const ModelArch dsv3 = read_model(json("deepseek-v3"), "/model");
  CHECK(decode_attention_s(dsv3, "h200", json("vllm-v1-like"), 128, 2048) ==
        decode_attention_s(dsv3, "h200", json("trtllm-like"), 128, 2048));
  // vllm-like (V0 era) names no decode kernel.
  CHECK(decode_attention_s(llama, "h100-sxm", json("vllm-like"), 128, 1024) ==
        decode_attention_s(llama, "h100-sxm", json("trtllm-like"), 128, 1024));
}

TEST_CASE("decode kernel: a stack typed with the preset's values prices as the preset") {
  const ModelArch m = read_model(json("llama-3-8b"), "/model");
  json typed = test::preset("stacks", "vllm-v1-like");
  typed["id"] = "my-vllm";
  typed["decode_attention_kernel"] = test::preset("decode_kernels", "fa3-paged-hopper");
  typed["decode_attention_kernel"]["id"] = "my-fa3";
  CHECK(decode_attention_s(m, "h100-sxm", typed, 200, 3000) ==
        decode_attention_s(m, "h100-sxm", json("vllm-v1-like"), 200, 3000));
}

TEST_CASE("decode kernel: bad kernels are refused where they are wrong") {
  const json base = test::preset("decode_kernels", "fa3-paged-hopper");
  const auto refusal_path = [](const json& k) -> std::string {
    try {
      read_decode_kernel(k, "/cost_model/software_stack/decode_attention_kernel");
    } catch (const SightlineError& e) {
      return e.path();
    }
    return "";
  };
  json k = base;
  k["architectures"] = {"hoper"};  // a misspelt architecture would never apply
  CHECK(refusal_path(k) == "/cost_model/software_stack/decode_attention_kernel/architectures/0");
  k = base;
  k["batch"][3] = 8;  // not increasing
  CHECK(refusal_path(k) == "/cost_model/software_stack/decode_attention_kernel/batch/3");
  k = base;
  k["time_ratio"][2].erase(0);  // a row short of the context axis
  CHECK(refusal_path(k) == "/cost_model/software_stack/decode_attention_kernel/time_ratio/2");
  k = base;
  k["time_ratio"][0][0] = 0;  // a kernel that takes no time
  CHECK(refusal_path(k) == "/cost_model/software_stack/decode_attention_kernel/time_ratio/0/0");
  CHECK(refusal_path(json("no-such-kernel")) == "/cost_model/software_stack/decode_attention_kernel");
}
