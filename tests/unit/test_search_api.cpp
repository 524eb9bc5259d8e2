// The deployment search as the page drives it through the API: plan, central
// runs, the interval runs search_intervals names (sliced, at a cost bound),
// then search_rank, which runs nothing. Its answer is the one `sightline
// search` gives (engine/cli/cmd_search.cpp takes the same steps with
// search::evaluate_candidate).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "error_checks.hpp"
#include "search/deployment_search.hpp"
#include "test_helpers.hpp"

using namespace sightline;
using namespace sightline::test;

namespace {

// Llama-2-7B at 4 req/s within two H100s: three layouts.
json small_question() {
  json q = json::parse(read_source_file("tests/golden/search-deployment-llama2-7b-h100-a100.search.json"));
  q["gpus"] = json::array({q["gpus"][0]});
  REQUIRE(q["gpus"][0]["gpu"] == "h100-sxm");
  return q;
}

// A sliced run to its end through the Engine, as the page's worker does it.
json run_sliced(api::Engine& engine, const std::string& started) {
  const json s = envelope(started);
  REQUIRE(s["ok"] == true);
  const int handle = s["result"]["handle"].get<int>();
  for (;;) {
    const json st = envelope(engine.step(handle, 1 << 14));
    REQUIRE(st["ok"] == true);
    if (st["result"]["done"].get<bool>()) break;
  }
  return envelope(engine.result(handle));
}

}  // namespace

TEST_CASE("deployment search through the API: sliced interval runs and a pure ranking give the CLI's answer") {
  const json q = small_question();
  const std::string question = q.dump();
  const json plan = envelope(api::search_plan(question));
  REQUIRE(plan["ok"] == true);
  api::Engine engine;
  json central = json::array();
  for (const json& c : plan["result"]["candidates"])
    central.push_back(run_sliced(engine, engine.start_central_only(c["scenario"].dump())));
  const json intervals = envelope(api::search_intervals(question, central.dump()));
  REQUIRE(intervals["ok"] == true);
  const json& points = intervals["result"]["points"];
  REQUIRE(points.size() >= 2);
  json bound = json::array();
  for (size_t k = 0; k < points.size(); ++k) {
    CHECK(points[k]["bound"] == (k % 2 == 0 ? "low" : "high"));  // low then high, point by point
    bound.push_back(run_sliced(engine, engine.start_at_bound(points[k]["scenario"].dump(), points[k]["bound"])));
  }
  const json ranked = envelope(api::search_rank(question, central.dump(), bound.dump()));
  REQUIRE(ranked["ok"] == true);

  // The CLI's steps, with the search layer's own runs.
  const search::DeploymentSearchSpec spec = search::read_deployment_search(q);
  const search::Plan p = search::plan_deployment_search(spec);
  std::vector<search::CandidateOutcome> c;
  for (const json& s : p.scenarios) c.push_back(search::evaluate_candidate(s, CostBound::Central));
  std::vector<search::CandidateOutcome> low, high;
  for (size_t i : search::interval_candidates(spec, p, c)) {
    low.push_back(search::evaluate_candidate(p.scenarios[i], CostBound::Low));
    high.push_back(search::evaluate_candidate(p.scenarios[i], CostBound::High));
  }
  CHECK(low.size() * 2 == points.size());
  const json cli = search::rank_deployment_search(spec, p, c, low, high).to_json();
  CHECK(ranked["result"].dump() == cli.dump());
  // Each interval point carries its low and high in the answer.
  int with_interval = 0;
  for (const json& r : ranked["result"]["ranked"])
    if (r.contains("interval_80pct")) ++with_interval;
  CHECK(with_interval * 2 == static_cast<int>(points.size()));
}

TEST_CASE("search_rank refuses bound results that do not match search_intervals' points; start_at_bound its bound") {
  const json q = small_question();
  const json plan = envelope(api::search_plan(q.dump()));
  REQUIRE(plan["ok"] == true);
  json central = json::array();
  for (const json& c : plan["result"]["candidates"]) {
    (void)c;
    central.push_back({{"error", "not run"}});  // failed runs: no Pareto point, no interval run
  }
  const json none = envelope(api::search_intervals(q.dump(), central.dump()));
  REQUIRE(none["ok"] == true);
  CHECK(none["result"]["points"].empty());
  check_error(envelope(api::search_rank(q.dump(), central.dump(), "[{}]")), "constraint_violation", "/bound_results");
  check_error(envelope(api::search_rank(q.dump(), central.dump(), "{}")), "type_error", "/bound_results");
  api::Engine engine;
  const std::string scenario = plan["result"]["candidates"][0]["scenario"].dump();
  check_error(envelope(engine.start_at_bound(scenario, "middle")), "invalid_value", "/bound");
}
