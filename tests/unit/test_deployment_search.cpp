// The serving deployment search, checked the way a user would check it: the
// deployment it picks, run again much longer without the steady-state check,
// meets the SLO at the target rate. Named "capacity:" so it runs in the ctest
// entry of the long simulations (tests/CMakeLists.txt).
#include <doctest/doctest.h>

#include "api/make_job.hpp"
#include "core/error.hpp"
#include "search/deployment_search.hpp"
#include "test_helpers.hpp"

using namespace sightline;
using namespace sightline::search;

namespace {

json small_question() {
  json q = json::parse(R"({
    "target_qps": 20, "max_gpus": 32,
    "gpus": [{"gpu": "h100-sxm", "usd_per_hour": 3.0, "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr"}],
    "tp": [4, 8], "max_num_seqs": [128], "chunked_prefill": [false, true], "replica_options": 2
  })");
  q["base"] = test::preset("scenarios", "I2.3");
  q["base"]["model"] = "llama-3-70b";
  q["base"]["hardware"] = {{"gpu", "h100-sxm"}, {"gpus_per_node", 8}, {"intra_node", "nvlink4-nvswitch"}};
  q["base"]["serving"]["parallelism"] = {{"tp", 8}, {"pp", 1}};
  q["base"]["serving"].erase("cluster");
  q["base"]["serving"]["slo"] = {{"ttft_ms", 1000}, {"tpot_ms", 50}, {"attainment", 0.9}};
  return q;
}

}  // namespace

TEST_CASE("capacity: deployment search: the cheapest deployment it picks meets the SLO in a long confirmation run") {
  const DeploymentSearchSpec spec = read_deployment_search(small_question());
  const Plan plan = plan_deployment_search(spec);
  REQUIRE(!plan.candidates.empty());
  std::vector<CandidateOutcome> central;
  for (const json& s : plan.scenarios) central.push_back(evaluate_candidate(s, CostBound::Central));
  const std::vector<size_t> picked = interval_candidates(spec, plan, central);
  std::vector<CandidateOutcome> low, high;
  for (size_t i : picked) {
    low.push_back(evaluate_candidate(plan.scenarios[i], CostBound::Low));
    high.push_back(evaluate_candidate(plan.scenarios[i], CostBound::High));
  }
  const DeploymentSearchResult r = rank_deployment_search(spec, plan, central, low, high);
  REQUIRE(r.cheapest == 0);
  const RankedCandidate& best = r.ranked.front();
  CHECK(best.has_interval);
  CHECK(best.low.usd_per_million_tokens <= best.central.usd_per_million_tokens + 1e-9);
  // Nothing that meets the SLO is cheaper.
  for (const auto& c : r.ranked)
    if (c.central.ok && c.central.meets_slo) CHECK(c.central.usd_per_million_tokens >= best.central.usd_per_million_tokens);
  const json out = r.to_json();
  CHECK(out["key_metrics"].is_array());
  CHECK(out["key_metrics"][0]["id"] == "usd_per_million_tokens");
  CHECK(out["key_metrics"][0].contains("low"));
  CHECK(out["accuracy"].contains("tier"));

  // The confirmation run: the same deployment, 2x the deciding run and at
  // least 30000 requests, judged on its whole goodput.
  json s = plan.scenarios[best.index];
  const int64_t n = std::max<int64_t>(30000, 2 * best.central.requests);
  s["serving"].erase("steady_state");
  s["serving"]["workload"]["num_requests"] = n;
  s["serving"]["limits"] = {{"max_requests", n}, {"max_sim_time_s", 1e7}};
  const Scenario sc = read_scenario(s);
  auto job = make_single_job(sc);
  while (!job->step(1 << 20)) {
  }
  const json m = job->result()["metrics"];
  MESSAGE("search picked " << best.label << " at " << best.central.usd_per_million_tokens << " $/Mtok; " << n
                           << " requests: attainment " << m["goodput"]["slo_attainment"] << ", TTFT p99 " << m["ttft_ms"]["p99"]
                           << " ms, TPOT p99 " << m["tpot_ms"]["p99"] << " ms");
  CHECK(m["requests"]["completed"] == n);
  CHECK(m["goodput"]["slo_attainment"].get<double>() >= 0.9);
}

TEST_CASE("deployment search: bad questions get located errors") {
  json q = small_question();
  q["tp"] = json::array({4, "eight"});
  CHECK_THROWS_AS(read_deployment_search(q), SightlineError);
  try {
    read_deployment_search(q);
  } catch (const SightlineError& e) {
    CHECK(std::string(e.path()) == "/tp/1");
  }
  json q2 = small_question();
  q2["gpus"][0]["gpu"] = "no-such-gpu";
  try {
    read_deployment_search(q2);
    FAIL("expected an error");
  } catch (const SightlineError& e) {
    CHECK(std::string(e.path()) == "/gpus/0/gpu");
  }
}
