// A closed loop's throughput interval (serve/headline.cpp): batch means of the
// window's completion rate, not the Poisson interval (Burke's theorem is about
// a queue fed by Poisson arrivals; a closed loop's clients send when served).
// Judged as an interval should be: over independent seeds, the 80% intervals
// cover the loop's long-run throughput about 80% of the time, the standard
// error they report matches the spread of the throughput across seeds, and
// they are narrower than the Poisson intervals of the same runs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "scenario/scenario.hpp"
#include "serve/headline.hpp"
#include "serve/simulation.hpp"
#include "test_helpers.hpp"

using namespace sightline;
using sightline::test::json;

namespace {

// 8 clients on Llama-2-7B / one A100 (max 8 in a batch), lengths drawn
// uniformly: the loop's completions vary with the lengths the seed draws.
Scenario loop_of_8(int64_t seed, int64_t requests) {
  json s = json::parse(R"({"schema_version":1,"model":"llama-2-7b",
    "hardware":{"gpu":"a100-80g-sxm","gpus_per_node":1},
    "precision":{"weights":"bf16","activations":"bf16","kv_cache":"bf16"},
    "serving":{"mode":"simulate","scheduler":{"max_num_seqs":8},
      "workload":{"arrival":{"process":"closed_loop","concurrency":8},
      "prompt_tokens":{"dist":"uniform","min":64,"max":512},"output_tokens":{"dist":"uniform","min":8,"max":128}}}})");
  s["seed"] = seed;
  s["serving"]["workload"]["num_requests"] = requests;
  return read_scenario(s);
}

serve::ServingHeadline loop_headline(int64_t seed, int64_t requests) {
  const Scenario s = loop_of_8(seed, requests);
  serve::Simulation sim(s, serve::WorkloadOverride{}, false);
  while (!sim.run(int64_t{1} << 30)) {
  }
  REQUIRE(sim.all_completed());
  const auto& spec = *s.serving->simulation;
  return serve::serving_headline(sim.outcomes(), spec.slo, spec.workload);
}

}  // namespace

TEST_CASE("closed loop: the throughput interval is the batch means', calibrated across seeds and narrower than Poisson's") {
  const double reference = loop_headline(1000, 8000).throughput_qps;  // the long-run throughput
  constexpr int kSeeds = 30;
  int covered = 0;
  double se_sum = 0, width_batch = 0, width_poisson = 0;
  std::vector<double> rates;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    CAPTURE(seed);
    const serve::ServingHeadline h = loop_headline(seed, 600);
    REQUIRE(h.judged);
    REQUIRE(h.throughput_batches == 10);  // each part outlasts two mean end-to-end times
    double lo = 0, hi = 0;
    REQUIRE(serve::throughput_sampling_interval(h, lo, hi));
    CHECK(lo < h.throughput_qps);
    CHECK(hi > h.throughput_qps);
    covered += lo <= reference && reference <= hi ? 1 : 0;
    width_batch += hi - lo;
    serve::ServingHeadline poisson = h;
    poisson.throughput_batches = 0;
    REQUIRE(serve::throughput_sampling_interval(poisson, lo, hi));
    width_poisson += hi - lo;
    se_sum += h.throughput_batch_se_qps;
    rates.push_back(h.throughput_qps);
  }
  double mean = 0, ss = 0;
  for (double r : rates) mean += r / kSeeds;
  for (double r : rates) ss += (r - mean) * (r - mean);
  const double spread = std::sqrt(ss / (kSeeds - 1));  // the throughput's sampling error, measured
  INFO("covered " << covered << " of " << kSeeds << "; mean se " << se_sum / kSeeds << " vs spread " << spread
                  << "; widths batch " << width_batch / kSeeds << " Poisson " << width_poisson / kSeeds);
  // 80% intervals: 18 or fewer of 30 covering has probability 1% if they are right.
  CHECK(covered >= 19);
  CHECK(se_sum / kSeeds > 0.5 * spread);
  CHECK(se_sum / kSeeds < 2.0 * spread);
  CHECK(width_batch < width_poisson);
}
