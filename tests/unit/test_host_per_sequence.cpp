// Host time per step as each stack spends it (issue 38, point 5): a per-step
// cost plus a per-sequence cost, counted once per real sequence (not once per
// attention kind of a model with windowed and full layers, not for a graph's
// padding rows), and hidden behind the GPU step by stacks that schedule one
// step ahead. And the front end's time to tokenize a prompt that arrives as
// text, on the arrival path: between a request's arrival and its entry into
// the scheduler's queue.
#include <doctest/doctest.h>

#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "perf/cost_setup.hpp"
#include "perf/host_overhead.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace {

SoftwareStack hps_stack(const std::string& id) { return read_software_stack(json(id), "/cost_model/software_stack"); }

StepOperators hps_decode(const ModelArch& m, int64_t seqs, int64_t kv) {
  BatchShape b;
  b.seqs.assign(static_cast<size_t>(seqs), SeqChunk{1, kv});
  return build_forward_step(m, Precision{}, ParallelLayout{}, b, StepOptions{});
}

// I2.1 (Llama-2-7B at 2 QPS on one A100) with `n` requests, no steady-state
// growth, on the vllm-v1-like stack with `tokenize_us` per prompt token.
json tok_scenario(int n, double tokenize_us) {
  json s = test::preset("scenarios", "I2.1");
  s["serving"].erase("steady_state");
  s["serving"]["workload"]["num_requests"] = n;
  json stack = test::preset("stacks", "vllm-v1-like");
  stack["tokenize_us_per_token"] = tokenize_us;
  s["cost_model"]["software_stack"] = stack;
  return s;
}

json tok_requests(const json& s) {
  const json e = test::run(s);
  if (!e["ok"].get<bool>()) FAIL_CHECK(e["error"].dump());
  REQUIRE(e["ok"].get<bool>());
  return e["result"]["requests"];
}

size_t tok_col(const json& requests, const std::string& name) {
  const json& cols = requests["columns"];
  for (size_t i = 0; i < cols.size(); ++i)
    if (cols[i] == name) return i;
  FAIL("no column " << name);
  return 0;
}

}  // namespace

TEST_CASE("a lone request's TTFT grows by its prompt's tokenization time, and no more") {
  json s = tok_scenario(1, 0);
  s["serving"]["workload"]["prompt_tokens"] = {{"dist", "fixed"}, {"value", 1000}};
  const json without = tok_requests(s);
  s["cost_model"]["software_stack"]["tokenize_us_per_token"] = 50.0;
  const json with = tok_requests(s);
  const size_t first_token = tok_col(with, "first_token_s"), arrival = tok_col(with, "arrival_s");
  const json& a = without["rows"][0];
  const json& b = with["rows"][0];
  CHECK(b[arrival].get<double>() == a[arrival].get<double>());
  const double ttft_a = a[first_token].get<double>() - a[arrival].get<double>();
  const double ttft_b = b[first_token].get<double>() - b[arrival].get<double>();
  CHECK(ttft_b - ttft_a == doctest::Approx(1000 * 50e-6).epsilon(1e-6));  // 50 ms
}

TEST_CASE("an offline batch (all_at_once) tokenizes on no arrival path") {
  json s = tok_scenario(20, 0);
  s["serving"]["workload"]["arrival"] = {{"process", "all_at_once"}};
  const json without = tok_requests(s);
  s["cost_model"]["software_stack"]["tokenize_us_per_token"] = 50.0;
  CHECK(tok_requests(s)["rows"] == without["rows"]);
}

TEST_CASE("no request is scheduled before its prompt is tokenized") {
  const double us = 20.0;
  const json r = tok_requests(tok_scenario(60, us));
  const size_t arrival = tok_col(r, "arrival_s"), scheduled = tok_col(r, "first_scheduled_s"),
               prompt = tok_col(r, "prompt_tokens"), state = tok_col(r, "state");
  REQUIRE(r["rows"].size() == 60);
  int completed = 0;
  for (const json& row : r["rows"]) {
    if (row[state] != "completed") continue;
    ++completed;
    const double tokenize_s = row[prompt].get<double>() * us * 1e-6;
    CHECK(row[scheduled].get<double>() - row[arrival].get<double>() >= tokenize_s - 1e-9);
  }
  CHECK(completed > 0);
  // The stack's field is written back with the resolved scenario.
  const json v = test::validate(tok_scenario(1, us));
  REQUIRE(v["ok"].get<bool>());
  CHECK(v["result"]["cost_model"]["software_stack"]["tokenize_us_per_token"].get<double>() == us);
}

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
  // stacks' host work (38 to 61 ms), so the
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
    REQUIRE(h.scheduler_s > 0.03);       // 0.9 ms + 2,048 x 18.0 us (vLLM V1) to 29.4 us
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
