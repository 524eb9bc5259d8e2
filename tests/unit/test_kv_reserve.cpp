// KV capacity as engines size it (issue 38, "What to build" 2): what the
// engine reserves besides the weights (the memory fraction it may use, the
// runtime's own reserve: CUDA context, allocator, graphs) comes out of the KV
// pool, and a smaller pool holds fewer running sequences.
#include <doctest/doctest.h>

#include "test_helpers.hpp"

using namespace sightline::test;

namespace {

json kv_reserve_run(const json& s) {
  const json e = envelope(sightline::api::run_scenario_central_only(s.dump()));
  REQUIRE_MESSAGE(e["ok"].get<bool>(), e.dump());
  return e["result"];
}

double kv_at(const json& r, const char* pointer) { return r.at(json::json_pointer(pointer)).get<double>(); }

}  // namespace

TEST_CASE("a KV reserve lowers the running batch: 8 GiB less pool, 4 fewer 4k-token Llama-2-7B sequences") {
  // I3.1: Llama-2-7B bf16 on one A100-80G, 64 requests of 4,096 tokens at
  // once, so the running batch is what the KV pool holds (0.5 MiB a token:
  // 2 GiB a sequence).
  const json base = preset("scenarios", "I3.1");
  json reserve = base;
  reserve["serving"]["runtime_overhead_GiB"] = 9.0;  // the default 1 GiB plus 8
  json fraction = base;
  fraction["serving"]["kv_cache"]["gpu_memory_utilization"] = 0.8;  // 0.9 by default: 8 GiB of 80 less

  const json r0 = kv_reserve_run(base), r1 = kv_reserve_run(reserve), r2 = kv_reserve_run(fraction);
  const double tokens0 = kv_at(r0, "/capacity/kv_tokens_per_replica");
  const double tokens1 = kv_at(r1, "/capacity/kv_tokens_per_replica");
  const double tokens2 = kv_at(r2, "/capacity/kv_tokens_per_replica");
  const double bytes_per_token = 2.0 * 32 * 4096 * 2;  // K and V, 32 layers, 4096 wide, bf16
  const double reserve_tokens = 8.0 * 1024 * 1024 * 1024 / bytes_per_token;  // 16,384
  // The pool shrinks by the reserve, to within one 16-token block.
  CHECK(tokens0 - tokens1 == doctest::Approx(reserve_tokens).epsilon(16.0 / reserve_tokens));
  CHECK(tokens2 == doctest::Approx(tokens1).epsilon(16.0 / tokens1));
  // Whole 4,096-token sequences: 4 fewer fit, and 4 fewer run at once.
  CHECK(kv_at(r0, "/capacity/max_concurrent_at_max_len") - kv_at(r1, "/capacity/max_concurrent_at_max_len") == 4);
  CHECK(kv_at(r0, "/metrics/concurrency/running_max") - kv_at(r1, "/metrics/concurrency/running_max") == 4);
  CHECK(kv_at(r1, "/metrics/concurrency/running_max") == kv_at(r2, "/metrics/concurrency/running_max"));
  // A smaller running batch serves the same requests more slowly.
  CHECK(kv_at(r1, "/metrics/concurrency/running_mean") < kv_at(r0, "/metrics/concurrency/running_mean"));
}

TEST_CASE("a larger sampler reserve lowers the KV blocks by rows x vocabulary x its bytes, in whole blocks") {
  // I3.1 (Llama-2-7B, one A100-80G) with max_num_seqs 1024: the start-up
  // profile samples 1,024 rows of the 32,000-entry vocabulary. A stack whose
  // sampler keeps 38 B an entry live (vLLM's sort, presets/stacks/vllm-v1-like.json)
  // reserves 22 B an entry more than one keeping 16 B (both above the
  // forward's own peak, so the sampler sets the reserve in both).
  json base = preset("scenarios", "I3.1");
  base["serving"]["scheduler"]["max_num_seqs"] = 1024;
  base["cost_model"]["software_stack"] = preset("stacks", "vllm-v1-like");
  json lean = base;
  base["cost_model"]["software_stack"]["sampler_bytes_per_logit"] = 38.0;
  lean["cost_model"]["software_stack"]["sampler_bytes_per_logit"] = 16.0;
  const json r38 = kv_reserve_run(base), r16 = kv_reserve_run(lean);
  const double extra_GiB = 1024.0 * 32000 * 22 / (1024.0 * 1024 * 1024);
  CHECK(kv_at(r38, "/memory_per_gpu/0/activations_GiB") - kv_at(r16, "/memory_per_gpu/0/activations_GiB") ==
        doctest::Approx(extra_GiB));
  const double bytes_per_token = 2.0 * 32 * 4096 * 2;
  const double fewer = kv_at(r16, "/capacity/kv_tokens_per_replica") - kv_at(r38, "/capacity/kv_tokens_per_replica");
  CHECK(fewer == doctest::Approx(extra_GiB * 1024 * 1024 * 1024 / bytes_per_token).epsilon(16.0 / fewer));
}
