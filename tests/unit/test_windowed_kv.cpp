// Windowed and chunked attention KV as engines page it (issue 38, point 6):
// the pages of a sliding-window or chunked layer come from the same pool as
// the full-attention blocks, at most the window (plus the page being filled)
// per sequence, and pages that slide out return to the pool. No sequence slot
// reserves a window up front: Llama-4-Maverick used to reserve 256 slots of
// 8K-token chunks and "not fit" a GPU with most of its memory free.
#include <doctest/doctest.h>

#include "scenario/memory_plan.hpp"
#include "test_helpers.hpp"

using namespace sightline;
using namespace sightline::serve;

TEST_CASE("windowed KV: pages grow with the context up to the window, then stay; full blocks keep growing") {
  const int64_t block = 16;
  CHECK(kv_blocks_for({}, block, 1) == 1);
  CHECK(kv_blocks_for({}, block, 16) == 1);
  CHECK(kv_blocks_for({}, block, 17) == 2);
  // Three windowed layers per full-attention layer (Llama-4: chunked 8192, every 4th layer global).
  const std::vector<WindowedKv> w = windowed_pages(1000.0, {CappedKv{8192, 3000.0}});
  REQUIRE(w.size() == 1);
  CHECK(w[0].blocks_per_block == doctest::Approx(3.0));
  CHECK(kv_blocks_for(w, block, 1024) == 64 + 3 * 64);
  const int64_t at_cap = kv_blocks_for(w, block, 8192 + block);
  CHECK(kv_blocks_for(w, block, 131072) == 131072 / block + (at_cap - (8192 + block) / block));
  int64_t previous = 0;
  for (int64_t t = 1; t < 40000; t += 37) {
    const int64_t b = kv_blocks_for(w, block, t);
    CHECK(b >= previous);  // never falls as the context grows
    previous = b;
  }
  // Past the window only the full-attention blocks grow.
  CHECK(kv_blocks_for(w, block, 50000) - kv_blocks_for(w, block, 40000) == (50000 + 15) / 16 - (40000 + 15) / 16);
}

TEST_CASE("windowed KV: a chunked-attention model reserves no window per sequence slot and fits") {
  json s = test::preset("scenarios", "I2.2");
  s["model"] = "llama-4-scout";
  s["hardware"] = {{"gpu", "h100-sxm"}, {"gpus_per_node", 8}, {"intra_node", "nvlink4-nvswitch"}};
  s["serving"]["parallelism"]["tp"] = 4;
  s["serving"]["workload"]["num_requests"] = 200;
  s["serving"]["scheduler"]["max_num_seqs"] = 1024;
  s["serving"]["kv_cache"]["max_model_len"] = 131072;
  const json v = test::validate(s);
  INFO(v.dump().substr(0, 600));
  REQUIRE(v.at("ok") == true);
  const json r = test::run(s);
  REQUIRE(r.at("ok") == true);
  INFO(r.at("result").dump().substr(0, 400));
  const json& memory = r.at("result").at("memory_per_gpu");
  REQUIRE(memory.is_array());
  for (const json& pool : memory) CHECK_FALSE(pool.contains("kv_fixed_per_sequence_GiB"));
}

TEST_CASE("windowed KV: Llama-4-Maverick fp8 on 8 B200 at 1,024 slots and a 1M-token context fits") {
  // The case: with each chunked layer's window reserved for every
  // max_num_seqs slot, Maverick "did not fit" a B200 with 96 GiB free. Pages
  // of chunked layers are freed as they slide out, so the pool is what is
  // left after weights and activations, none of it reserved per slot.
  json s = test::preset("scenarios", "I2.2");
  s["model"] = "llama-4-maverick";
  s["hardware"] = {{"gpu", "b200"}, {"gpus_per_node", 8}, {"intra_node", "nvlink5-nvswitch"}};
  s["precision"] = {{"weights", "fp8"}, {"activations", "fp8"}, {"kv_cache", "fp8"}};
  s["serving"]["parallelism"]["tp"] = 8;
  s["serving"]["workload"]["num_requests"] = 200;
  s["serving"]["scheduler"]["max_num_seqs"] = 1024;
  s["serving"]["kv_cache"]["max_model_len"] = 1048576;
  const json e = test::envelope(sightline::api::run_scenario_central_only(s.dump()));
  INFO(e.dump().substr(0, 600));
  REQUIRE(e.at("ok") == true);
  const json& pool = e.at("result").at("memory_per_gpu").at(0);
  CHECK_FALSE(pool.contains("kv_fixed_per_sequence_GiB"));
  const double free_GiB = pool.at("usable_GiB").get<double>() - pool.at("weights_GiB").get<double>() -
                          pool.at("activations_GiB").get<double>() - pool.at("runtime_overhead_GiB").get<double>();
  CHECK(free_GiB > 90.0);
  CHECK(pool.at("kv_cache_GiB").get<double>() == doctest::Approx(free_GiB).epsilon(0.01));
}
