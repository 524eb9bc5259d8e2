// Host time per step as each stack spends it (issue 38, point 5): a per-step
// cost plus a per-sequence cost, counted once per real sequence (not once per
// attention kind of a model with windowed and full layers, not for a graph's
// padding rows), and hidden behind the GPU step by stacks that schedule one
// step ahead.
#include <doctest/doctest.h>

#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "perf/cost_setup.hpp"
#include "perf/host_overhead.hpp"

using namespace sightline;

namespace {

SoftwareStack hps_stack(const std::string& id) { return read_software_stack(json(id), "/cost_model/software_stack"); }

StepOperators hps_decode(const ModelArch& m, int64_t seqs, int64_t kv) {
  BatchShape b;
  b.seqs.assign(static_cast<size_t>(seqs), SeqChunk{1, kv});
  return build_forward_step(m, Precision{}, ParallelLayout{}, b, StepOptions{});
}

}  // namespace

TEST_CASE("host time per step grows with the running sequences at the stack's per-sequence cost") {
  const ModelArch m = read_model(json("llama-3-8b"), "/model");
  for (const char* id : {"vllm-like", "vllm-v1-like", "sglang-overlap-like", "trtllm-like", "torch-compile-like"}) {
    CAPTURE(id);
    const SoftwareStack s = hps_stack(id);
    const double h100 = host_time(hps_decode(m, 100, 1000), s).scheduler_s;
    const double h101 = host_time(hps_decode(m, 101, 1000), s).scheduler_s;
    const double h2000 = host_time(hps_decode(m, 2000, 1000), s).scheduler_s;
    CHECK((h101 - h100) * 1e6 == doctest::Approx(s.scheduler_us_per_sequence));
    CHECK(h2000 * 1e6 == doctest::Approx(s.scheduler_us_per_step + 2000 * s.scheduler_us_per_sequence));
  }
}

TEST_CASE("a model with windowed and full attention layers pays each sequence once") {
  // gpt-oss alternates 128-token sliding-window layers with full ones: two
  // decode attention operators, one batch of sequences.
  const ModelArch m = read_model(json("gpt-oss-20b"), "/model");
  const StepOperators step = hps_decode(m, 512, 4000);
  int attention_ops = 0;
  for (const Operator& op : step.ops) attention_ops += op.family == OpFamily::AttentionDecode ? 1 : 0;
  REQUIRE(attention_ops == 2);
  const SoftwareStack s = hps_stack("trtllm-like");
  const HostTime h = host_time(step, s);
  CHECK(h.sequences == 512);
  CHECK(h.scheduler_s * 1e6 == doctest::Approx(s.scheduler_us_per_step + 512 * s.scheduler_us_per_sequence));
}

TEST_CASE("at 2k sequences host time paces the step only where it is longer than the GPU step") {
  // Llama-3-8B, 2,048 sequences of 2k context on one H200: reading their
  // KV caches (about 0.55 TB, over 0.1 s) takes longer than the overlapped
  // stacks' host work (about 61 ms), so the
  // step is the GPU's; a stack that schedules between steps adds its host
  // time in full.
  const ModelArch m = read_model(json("llama-3-8b"), "/model");
  HardwareSpec hw;
  hw.gpu = read_gpu(json("h200"), "/hardware/gpu");
  const StepOperators step = hps_decode(m, 2048, 2048);
  for (const char* id : {"vllm-v1-like", "sglang-overlap-like", "trtllm-like", "vllm-like"}) {
    CAPTURE(id);
    CostModelSpec spec;
    spec.software_stack = hps_stack(id);
    const CostSetup setup = make_cost_setup(spec, hw);
    const StepCost c = setup.price(step);
    const HostTime h = host_time(step, spec.software_stack);
    REQUIRE(h.scheduler_s > 0.05);       // 0.9 ms + 2,048 x 29.4 us
    REQUIRE(c.gpu_time_s > h.scheduler_s);
    if (spec.software_stack.overlap_scheduler) {
      CHECK(c.time_s == doctest::Approx(c.gpu_time_s));  // hidden behind the GPU step
    } else {
      CHECK(c.time_s == doctest::Approx(c.gpu_time_s + h.scheduler_s));
    }
    // With the KV short enough that the GPU step is shorter than the host
    // work, the host paces an overlapped stack: wall = host time.
    const StepOperators short_kv = hps_decode(m, 2048, 64);
    const StepCost sc = setup.price(short_kv);
    const HostTime sh = host_time(short_kv, spec.software_stack);
    if (spec.software_stack.overlap_scheduler && sh.scheduler_s > sc.gpu_time_s) {
      CHECK(sc.time_s == doctest::Approx(std::max(sh.scheduler_s, sh.launch_s)));
    }
    CHECK(sc.time_s >= sc.gpu_time_s);
  }
}
