// Hot experts under expert parallelism (issue 38, point 1): when a scenario
// does not give serving.moe.load_imbalance, expert parallelism is priced at
// the skew of DeepSeek-R1's published per-rank routed-token counts
// (model/moe_hot_experts.hpp) instead of perfectly even routing.
#include <doctest/doctest.h>

#include "model/moe_hot_experts.hpp"
#include "model/moe_routing.hpp"
#include "test_helpers.hpp"

using namespace sightline;
using json = nlohmann::json;

TEST_CASE("hot experts: the default reproduces the published busiest-rank figures it comes from") {
  // At the published layouts (8 experts per rank, 1,024 routed tokens per
  // rank), hot experts times the sampling excess give back the published
  // max / mean: 1 + 1.564272 at EP 32 without EPLB, 1 + 0.115378 at EP 36 with it.
  const double without = default_hot_expert_factor(8, false, 32) * busiest_rank_sampling_factor(1024.0 * 32, 32);
  const double with = default_hot_expert_factor(8, true, 36) * busiest_rank_sampling_factor(1024.0 * 36, 36);
  CHECK(without == doctest::Approx(2.564272).epsilon(1e-9));
  CHECK(with == doctest::Approx(1.115378).epsilon(1e-9));
}

TEST_CASE("hot experts: fewer experts per rank weigh the hot one more; EPLB's replicas weigh it less") {
  double previous = 1.0;
  for (double g : {64.0, 32.0, 16.0, 8.0, 4.0, 2.0}) {
    CAPTURE(g);
    const double f = default_hot_expert_factor(g, false, 1e9);
    CHECK(f > previous);
    CHECK(default_hot_expert_factor(g, true, 1e9) < f);
    CHECK(default_hot_expert_factor(g, true, 1e9) > 1.0);
    previous = f;
  }
  // A rank cannot take more than every token: the caller's bound holds.
  CHECK(default_hot_expert_factor(1, false, 2.0) == doctest::Approx(2.0));
  CHECK(default_hot_expert_basis(8, false).find("ep_load_balancer") != std::string::npos);
}

namespace {

json hot_run(const json& moe) {
  json s = test::preset("scenarios", "I4.2");  // Mixtral-8x7B, TP2 with EP2 on two A100s
  s["serving"]["moe"] = moe;
  s["serving"]["workload"]["num_requests"] = 200;
  s["serving"].erase("steady_state");
  const json r = test::run(s);
  REQUIRE(r["ok"].get<bool>());
  return r["result"]["metrics"]["moe"];
}

}  // namespace

TEST_CASE("hot experts: a scenario under EP without load_imbalance is priced at the published default, and says so") {
  const json fallback = hot_run({{"expert_parallel", 2}});
  const json even = hot_run({{"expert_parallel", 2}, {"load_imbalance", 1.0}});
  // Mixtral: 8 experts over EP 2, 4 per rank.
  CHECK(fallback["load_imbalance"].get<double>() == doctest::Approx(default_hot_expert_factor(4, false, 2)));
  CHECK(fallback["load_imbalance"].get<double>() > 1.0);
  CHECK(fallback["load_imbalance_basis"].get<std::string>().find("default") == 0);
  CHECK(even["load_imbalance"].get<double>() == 1.0);
  CHECK(even["load_imbalance_basis"].get<std::string>().find("given") == 0);
  // Hot experts never make the experts cheaper.
  CHECK(fallback["expert_time_fraction"].get<double>() >= even["expert_time_fraction"].get<double>());
}
