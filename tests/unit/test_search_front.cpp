// The deployment search's Pareto front is $/Mtok against TTFT at the question's
// own percentile (issue 39: "a P90 search shows P90"): the percentile rule
// (question_percentile), and a P90 question whose P90 front is not its P99
// front, from the central runs of a real search.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/json_text.hpp"
#include "scenario/simulation_spec.hpp"
#include "search/deployment_search.hpp"
#include "test_helpers.hpp"

using namespace sightline;
using namespace sightline::search;

TEST_CASE("deployment search: the question's percentile of a latency, as the runs report it") {
  serve::SloSpec slo;
  slo.ttft_ms = 1000;
  slo.tpot_ms = 50;
  slo.attainment = 0.9;  // the joint share: P90
  CHECK(question_percentile(slo, serve::kSloTtft) == LatencyPercentile::P90);
  slo.attainment = 0.5;
  CHECK(question_percentile(slo, serve::kSloTtft) == LatencyPercentile::P50);
  slo.attainment = 0.8;  // no P80 is reported: the next one up
  CHECK(question_percentile(slo, serve::kSloTtft) == LatencyPercentile::P90);
  slo.ttft_percentile = 0.99;  // the bound's own percentile before the joint share
  CHECK(question_percentile(slo, serve::kSloTtft) == LatencyPercentile::P99);
  slo.ttft_percentile = 0.95;  // no P95 is reported: judged on P99
  CHECK(question_percentile(slo, serve::kSloTtft) == LatencyPercentile::P99);
  CHECK(question_percentile(slo, serve::kSloTpot) == LatencyPercentile::P90);
  slo.itl_ms = 0;  // no bound: P99
  CHECK(question_percentile(slo, serve::kSloItl) == LatencyPercentile::P99);
  CHECK(std::string(percentile_name(LatencyPercentile::P90)) == "p90");
}

namespace {

// The central runs of examples/search-llama3-70b-mixed-pools.json (a P90
// question: the joint attainment 0.9), by plan candidate, as `sightline
// search --format json` ranked them on 2026-12-01: $/Mtok, P90 and P99 TTFT.
// All 18 meet the SLO. On P99 the front is 2, 5 and 12; on P90, 7, 8 and 11
// join it (their P90 TTFT is below a cheaper one's, their P99 is not).
struct MixedPoolsRun {
  double usd, p90, p99;
};
const MixedPoolsRun kMixedPoolsRuns[] = {
    {4.418949039891663, 101.3069014, 203.73227405},      {4.9990492995877895, 101.3069014, 203.73227405},
    {3.543849457734404, 101.3168354, 203.7292147999999}, {8.814164970218615, 70.94360870000001, 135.7242542600002},
    {9.984754998444675, 70.94360870000001, 135.7242542600002}, {7.066218825491794, 70.94360870000001, 135.7242542600002},
    {5.587168687733818, 98.37176780000003, 204.36944802}, {5.008139255058261, 98.37176780000003, 204.36944802},
    {4.1344639319584, 98.45055580000002, 204.36659031999997}, {11.159434036623294, 70.48997899999999, 136.23994858000015},
    {9.98938891664157, 70.48997899999999, 136.23994858000015}, {8.24401647767913, 70.48997899999999, 136.23994858000015},
    {2.658130612122014, 300.7738226, 657.49858684},       {3.5354737425148333, 300.8205711, 657.51673049},
    {4.117222268409915, 300.8205711, 657.51673049},       {5.29980369800873, 161.85075989999999, 360.4790825100005},
    {7.051865272212563, 161.85075989999999, 360.4790825100005}, {8.223368964480512, 161.85075989999999, 360.4790825100005}};

// A candidate's run result as the run call writes it (what the page's workers send back).
// `tpot_p90`: its P90 TPOT (the runs' TPOT is not quoted above: any figure).
json mixed_pools_result(const MixedPoolsRun& r, double tpot_p90 = 25.0) {
  return {{"steady_state", {{"verdict", "meets"}, {"meets_slo", true}, {"slo_attainment", 1.0}, {"requests", 2000}}},
          {"metrics",
           {{"ttft_ms", {{"p50", r.p90 / 2}, {"p90", r.p90}, {"p99", r.p99}}},
            {"tpot_ms", {{"p50", tpot_p90 / 2}, {"p90", tpot_p90}, {"p99", 30.0}}},
            {"throughput", {{"output_tokens_per_s", 1000.0}}},
            {"cost", {{"usd_per_million_tokens", r.usd}}}}}};
}

std::vector<size_t> front_of_runs(const DeploymentSearchSpec& spec, const Plan& plan, const std::vector<CandidateOutcome>& central) {
  const DeploymentSearchResult r = rank_deployment_search(spec, plan, central, {}, {});
  std::vector<size_t> out;
  for (size_t k : r.front) out.push_back(r.ranked[k].index);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("deployment search: a P90 question's front is ranked on P90 TTFT, not P99") {
  DeploymentSearchSpec spec = read_deployment_search(parse_json_text(test::read_source_file("examples/search-llama3-70b-mixed-pools.json")));
  REQUIRE(spec.ttft_percentile == LatencyPercentile::P90);
  const Plan plan = plan_deployment_search(spec);
  REQUIRE(plan.candidates.size() == std::size(kMixedPoolsRuns));
  std::vector<CandidateOutcome> central;
  for (const MixedPoolsRun& r : kMixedPoolsRuns) central.push_back(read_candidate_outcome(mixed_pools_result(r)));
  CHECK(front_of_runs(spec, plan, central) == std::vector<size_t>{2, 5, 7, 8, 11, 12});
  // The interval runs go to the same front (at most max_interval_points, cheapest first).
  CHECK(interval_candidates(spec, plan, central) == std::vector<size_t>{12, 2, 8, 7, 5, 11});
  // The answer says which percentile it ranked on, and each row carries that figure.
  const json out = rank_deployment_search(spec, plan, central, {}, {}).to_json();
  CHECK(out["question_percentiles"] == json({{"ttft", "p90"}, {"tpot", "p90"}}));
  CHECK(out["pareto_axes"] == json({"usd_per_million_tokens", "ttft_p90_ms"}));
  for (const json& row : out["ranked"]) CHECK(row["ttft_p90_ms"] == kMixedPoolsRuns[row["candidate"].get<size_t>()].p90);
  // The same runs judged on P99 (a P99 question) give the smaller front.
  spec.ttft_percentile = LatencyPercentile::P99;
  CHECK(front_of_runs(spec, plan, central) == std::vector<size_t>{2, 5, 12});
  CHECK(!rank_deployment_search(spec, plan, central, {}, {}).to_json()["ranked"][0].contains("ttft_p90_ms"));
}

// Issue 39 point 6: every latency of a P90 question's answer is at P90. Each
// row carries TPOT at the question's percentile beside TTFT, and the answer's
// and the front's key metrics are those two, with their 80% intervals from
// the runs at the cost bounds, in place of the P99 figures.
TEST_CASE("deployment search: a P90 question's rows and answer quote TTFT and TPOT at P90, with their intervals") {
  const DeploymentSearchSpec spec =
      read_deployment_search(parse_json_text(test::read_source_file("examples/search-llama3-70b-mixed-pools.json")));
  REQUIRE(spec.tpot_percentile == LatencyPercentile::P90);
  const Plan plan = plan_deployment_search(spec);
  std::vector<CandidateOutcome> central, low, high;
  for (const MixedPoolsRun& r : kMixedPoolsRuns) central.push_back(read_candidate_outcome(mixed_pools_result(r)));
  for (size_t i : interval_candidates(spec, plan, central)) {
    low.push_back(read_candidate_outcome(mixed_pools_result(kMixedPoolsRuns[i], 20.0)));
    high.push_back(read_candidate_outcome(mixed_pools_result(kMixedPoolsRuns[i], 31.0)));
  }
  const json out = rank_deployment_search(spec, plan, central, low, high).to_json();
  for (const json& row : out["ranked"]) CHECK(row["tpot_p90_ms"] == 25.0);
  const auto ids = [](const json& key_metrics) {
    std::vector<std::string> v;
    for (const json& k : key_metrics) v.push_back(k["id"].get<std::string>());
    return v;
  };
  const json& best = out["cheapest_meeting_slo"];
  CHECK(ids(best["key_metrics"]) == std::vector<std::string>{"usd_per_million_tokens", "ttft_p90_ms", "tpot_p90_ms"});
  CHECK(ids(out["key_metrics"]) ==
        std::vector<std::string>{"usd_per_million_tokens", "ttft_p90_ms", "tpot_p90_ms", "gpus", "deployments_simulated"});
  const json& tpot = best["key_metrics"][2];
  CHECK(tpot["value"] == 25.0);
  CHECK(tpot["low"] == 20.0);
  CHECK(tpot["high"] == 31.0);
  CHECK(tpot["label"] == "P90 TPOT at the target rate");
  // A P99 question quotes P99, as before, and no P90 figure.
  DeploymentSearchSpec p99 = spec;
  p99.ttft_percentile = p99.tpot_percentile = LatencyPercentile::P99;
  const json out99 = rank_deployment_search(p99, plan, central, low, high).to_json();
  CHECK(ids(out99["cheapest_meeting_slo"]["key_metrics"]) ==
        std::vector<std::string>{"usd_per_million_tokens", "ttft_p99_ms", "tpot_p99_ms"});
  CHECK(!out99["ranked"][0].contains("tpot_p90_ms"));
  CHECK(latency_id("tpot", LatencyPercentile::P90) == "tpot_p90_ms");
  CHECK(latency_words("tpot", LatencyPercentile::P90) == "P90 TPOT");
}
