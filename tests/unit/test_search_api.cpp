// The deployment search as the page drives it through the API: plan, central
// runs, the interval runs search_intervals names (sliced, at a cost bound),
// then search_rank, which runs nothing. Its answer is the one `sightline
// search` gives (engine/cli/cmd_search.cpp takes the same steps with
// search::evaluate_candidate).
#include <doctest/doctest.h>

#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "error_checks.hpp"
#include "fit/calibration_apply.hpp"
#include "search/candidate_reuse.hpp"
#include "search/deployment_search.hpp"
#include "serve/limit_facts.hpp"
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

// The small question at batch limits 4, 64 and 256: 4 binds (that sibling runs and fails), 64 and 256
// never do (one takes the other's run).
json sibling_question() {
  json q = small_question();
  q["max_num_seqs"] = json::array({4, 64, 256});
  return q;
}

// A search candidate run through the Engine, as the page's worker runs one: its result and its limit facts.
std::pair<json, json> run_candidate_sliced(api::Engine& engine, const json& scenario) {
  const json s = envelope(engine.start_search_candidate(scenario.dump()));
  REQUIRE(s["ok"] == true);
  const int handle = s["result"]["handle"].get<int>();
  while (!envelope(engine.step(handle, 1 << 14))["result"]["done"].get<bool>()) {
  }
  const json facts = envelope(engine.limit_facts(handle));
  REQUIRE(facts["ok"] == true);
  const json result = envelope(engine.result(handle));
  REQUIRE(result["ok"] == true);
  return {result["result"], facts["result"]};
}

}  // namespace

TEST_CASE("limit facts survive their JSON; a failed run's are opaque") {
  serve::LimitFacts f;
  f.seqs.below = 40;
  f.kv.demand = 900;
  f.kv.watermarked = 880;
  f.capacity_read = true;
  for (int64_t at : {int64_t{64}, std::numeric_limits<int64_t>::max()}) {  // reached, and never reached (null)
    f.seqs.at_or_above = at;
    const json j = json::parse(serve::limit_facts_to_json(f).dump());
    const serve::LimitFacts back = serve::read_limit_facts(j, "/runs/0");
    CHECK(back.seqs.below == f.seqs.below);
    CHECK(back.seqs.at_or_above == at);
    CHECK(back.kv.demand == 900);
    CHECK(back.kv.watermarked == 880);
    CHECK(back.kv.refused == false);
    CHECK(back.capacity_read == true);
    CHECK(back.opaque == false);
  }
  CHECK(serve::read_limit_facts(json{{"opaque", true}}, "/runs/3").opaque);
}

TEST_CASE("search_reuse: the page's rounds through the API reuse the runs the CLI reuses, with the same outcomes") {
  const json q = sibling_question();
  const search::DeploymentSearchSpec spec = search::read_deployment_search(q);
  const search::Plan plan = search::plan_deployment_search(spec);
  const size_t n = plan.scenarios.size();
  std::vector<int> cli_from;
  const std::vector<search::CandidateOutcome> cli = search::run_central_reusing(
      plan, [](size_t m, const std::function<void(size_t)>& task) { for (size_t k = 0; k < m; ++k) task(k); }, &cli_from);

  api::Engine engine;
  json runs = json::array();
  for (size_t k = 0; k < n; ++k) runs.push_back(nullptr);
  std::vector<json> results(n);
  json round = envelope(api::search_reuse(q.dump(), runs.dump(), "null"));
  int rounds = 0;
  while (round["ok"] == true && !round["result"]["next"].empty()) {
    for (const json& k : round["result"]["next"]) {
      const size_t i = k.get<size_t>();
      REQUIRE(runs[i].is_null());  // a candidate runs once
      std::tie(results[i], runs[i]) = run_candidate_sliced(engine, plan.scenarios[i]);
    }
    round = envelope(api::search_reuse(q.dump(), runs.dump(), "null"));
    ++rounds;
  }
  REQUIRE(round["ok"] == true);
  CHECK(rounds >= 2);  // the largest limits first, then the siblings they do not settle
  CHECK(round["result"]["reused_from"] == json(cli_from));
  int reused = 0;
  for (size_t k = 0; k < n; ++k) {
    CAPTURE(search::candidate_label(spec, plan.candidates[k]));
    const int from = cli_from[k];
    CHECK(runs[k].is_null() == (from >= 0));  // ran, or took a run: never both
    reused += from >= 0 ? 1 : 0;
    const search::CandidateOutcome page = search::read_candidate_outcome(results[from >= 0 ? static_cast<size_t>(from) : k]);
    CHECK(page.ok == cli[k].ok);
    CHECK(page.meets_slo == cli[k].meets_slo);
    CHECK(page.requests == cli[k].requests);
    CHECK(page.ttft_p99_ms == cli[k].ttft_p99_ms);
    CHECK(page.usd_per_million_tokens == cli[k].usd_per_million_tokens);
  }
  CHECK(reused > 0);
  CHECK(reused < static_cast<int>(n) - 1);  // and a binding limit's sibling ran
  // The budget question reuses nothing: its first round is every candidate (a rate question's, one per family).
  json budget = q;
  budget.erase("target_qps");
  const json budget_plan = envelope(api::search_plan(budget.dump()));
  REQUIRE(budget_plan["ok"] == true);
  const json none(json::array_t(budget_plan["result"]["candidates"].size(), nullptr));
  const json all = envelope(api::search_reuse(budget.dump(), none.dump(), "null"));
  REQUIRE(all["ok"] == true);
  CHECK(all["result"]["next"].size() == none.size());
  // The runs must be one per candidate, each null or whole facts.
  check_error(envelope(api::search_reuse(q.dump(), "[null]", "null")), "constraint_violation", "/runs");
  json torn = runs;
  torn[0] = {{"opaque", false}};
  check_error(envelope(api::search_reuse(q.dump(), torn.dump(), "null")), "missing_key", "/runs/0/seqs");
}

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
  // Limit facts are a search candidate's, once it is finished.
  const int bound = envelope(engine.start_at_bound(scenario, "low"))["result"]["handle"].get<int>();
  check_error(envelope(engine.limit_facts(bound)), "constraint_violation", "");
  const int candidate = envelope(engine.start_search_candidate(scenario))["result"]["handle"].get<int>();
  check_error(envelope(engine.limit_facts(candidate)), "constraint_violation", "");
}

// A search candidate runs the same way natively (search::evaluate_candidate,
// `sightline search`) as on the page (the API's sliced run, read back by
// read_candidate_outcome): a cluster calibration's per-request client latency
// is in both runs' TTFT, and both stop at the scenario's work budget.
TEST_CASE("a search candidate runs natively as on the page: its calibration's request latency, its work budget") {
  json q = small_question();
  q["gpus"] = json::array({json::parse(read_source_file("tests/golden/search-deployment-llama2-7b-h100-a100.search.json"))["gpus"][1]});
  REQUIRE(q["gpus"][0]["gpu"] == "a100-80g-sxm");
  const search::DeploymentSearchSpec spec = search::read_deployment_search(q);
  const search::Plan p = search::plan_deployment_search(spec);
  REQUIRE(!p.scenarios.empty());
  json calibration = json::parse(read_source_file("tests/data/calibration/fit_fixtures_on_a100.json"));
  calibration["factors"]["request_latency_ms"] = 150.0;
  json scenario = fit::with_calibration(p.scenarios[0], calibration, "candidate");
  api::Engine engine;
  const search::CandidateOutcome page = search::read_candidate_outcome(run_sliced(engine, engine.start_central_only(scenario.dump()))["result"]);
  const search::CandidateOutcome native = search::evaluate_candidate(scenario, CostBound::Central);
  REQUIRE(page.ok);
  REQUIRE(native.ok);
  const search::CandidateOutcome raw = search::evaluate_candidate(p.scenarios[0], CostBound::Central);
  CHECK(page.ttft_p50_ms > raw.ttft_p50_ms + 100.0);  // the 150 ms is in the page's TTFT
  CHECK(native.ttft_p50_ms == page.ttft_p50_ms);
  CHECK(native.ttft_p90_ms == page.ttft_p90_ms);
  CHECK(native.ttft_p99_ms == page.ttft_p99_ms);
  CHECK(native.tpot_p99_ms == page.tpot_p99_ms);
  CHECK(native.attainment == page.attainment);
  CHECK(native.verdict == page.verdict);
  CHECK(native.requests == page.requests);

  // A budget the run cannot finish in: the page's run and the native candidate both stop, located.
  scenario["limits"] = {{"max_work_units", 2000}};
  const json stopped = run_sliced(engine, engine.start_central_only(scenario.dump()));
  CHECK(stopped["ok"] == false);
  const search::CandidateOutcome over = search::evaluate_candidate(scenario, CostBound::Central);
  CHECK(!over.ok);
  CHECK(over.error.rfind("limit_exceeded at '/limits/max_work_units'", 0) == 0);
}
