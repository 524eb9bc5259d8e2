// The serving deployment search, checked the way a user would check it: the
// deployment it picks, run again much longer without the steady-state check,
// meets the SLO at the target rate. Named "capacity:" so it runs in the ctest
// entry of the long simulations (tests/CMakeLists.txt).
#include <doctest/doctest.h>

#include <cmath>
#include <iomanip>
#include <sstream>

#include "jobs/make_job.hpp"
#include "core/error.hpp"
#include "search/deployment_search.hpp"
#include "serve/simulation.hpp"
#include "serve/steady_state.hpp"
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
  q["base"] = test::llama3_70b_h100_search_base();
  return q;
}

// docs/search.md quotes what the cases below measure (issue 40: a stale
// figure fails here, where it is computed, at no extra cost).
void check_search_doc_quotes(const std::string& quoted) {
  CHECK_MESSAGE(test::doc_quotes("docs/search.md", quoted), "docs/search.md does not quote \"" << quoted << "\" (update it)");
}

// A figure written as the doc quotes it.
std::string decimals_of(double v, int decimals) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(decimals) << v;
  return o.str();
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
  // At a fixed arrival rate the tokens carried per hour are the arrivals', at
  // every cost bound: a bound run's $/Mtok differs from the central one only
  // by which requests its steady window holds (0.6% here on 2026-11-28).
  CHECK(std::fabs(best.low.usd_per_million_tokens / best.central.usd_per_million_tokens - 1) <= 0.02);
  // The interval the user reads brackets the central value.
  const json cost = r.to_json()["key_metrics"][0];
  CHECK(cost["low"].get<double>() <= cost["value"].get<double>());
  CHECK(cost["high"].get<double>() >= cost["value"].get<double>());
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

namespace {

bool pruned_for(const Plan& plan, const DeploymentSearchSpec& spec, const std::string& label_part, const std::string& reason_part) {
  for (const auto& p : plan.pruned)
    if (candidate_label(spec, p.layout).find(label_part) != std::string::npos && p.reason.find(reason_part) != std::string::npos)
      return true;
  return false;
}

std::string error_path(const json& q) {
  try {
    read_deployment_search(q);
  } catch (const SightlineError& e) {
    return e.path();
  }
  return "(no error)";
}

// The service rate of a scenario with every request arriving at once, as the
// capacity search's probe measures it (the middle half of the completions,
// the prompts untokenized: engine/serve/capacity_search.cpp, start).
double saturated_rate_qps(const json& scenario, int64_t requests) {
  const Scenario s = read_scenario(scenario);
  serve::WorkloadOverride o;
  o.rate_qps = 1e9;
  o.num_requests = requests;
  o.tokenize = false;
  serve::Simulation sim(s, o, false);
  while (!sim.run(int64_t{1} << 30)) {
  }
  return serve::saturated_service_rate(sim.outcomes());
}

}  // namespace

TEST_CASE("deployment search: an optional axis at the base's value changes no candidate") {
  json q = small_question();
  const DeploymentSearchSpec plain = read_deployment_search(q);
  q["weights"] = json::array({"bf16"});
  q["kv_cache"] = json::array({"bf16"});
  q["prefill_decode_ratio"] = json::array({"colocated"});
  const DeploymentSearchSpec explicit_axes = read_deployment_search(q);
  const Plan a = plan_deployment_search(plain), b = plan_deployment_search(explicit_axes);
  REQUIRE(!a.candidates.empty());
  CHECK(a.space_size == b.space_size);
  CHECK(a.pruned.size() == b.pruned.size());
  REQUIRE(a.scenarios.size() == b.scenarios.size());
  for (size_t i = 0; i < a.scenarios.size(); ++i) CHECK(a.scenarios[i] == b.scenarios[i]);
  // Labels name the axes only when the question gives them.
  CHECK(candidate_label(plain, a.candidates[0]).find("w-") == std::string::npos);
  CHECK(candidate_label(explicit_axes, b.candidates[0]).find("w-bf16 kv-bf16") != std::string::npos);
}

TEST_CASE("deployment search: the token budget axes set the scheduler key of each policy") {
  json q = small_question();
  q["chunk_size"] = json::array({256, 2048});
  q["max_num_batched_tokens"] = json::array({8192});
  const DeploymentSearchSpec spec = read_deployment_search(q);
  const Plan plan = plan_deployment_search(spec);
  // 2 tp x (1 continuous budget + 2 chunk sizes)
  CHECK(plan.space_size == 6);
  int chunked = 0, continuous = 0;
  for (size_t i = 0; i < plan.candidates.size(); ++i) {
    const Candidate& c = plan.candidates[i];
    const Scenario s = read_scenario(plan.scenarios[i]);
    CHECK(s.serving->simulation->scheduler.max_num_batched_tokens == c.batched_tokens);
    const json& sched = plan.scenarios[i]["serving"]["scheduler"];
    if (c.chunked) {
      ++chunked;
      CHECK(sched["chunk_size"] == c.batched_tokens);
      CHECK(!sched.contains("max_num_batched_tokens"));
    } else {
      ++continuous;
      CHECK(c.batched_tokens == 8192);
      CHECK(!sched.contains("chunk_size"));
    }
  }
  CHECK(chunked > 0);
  CHECK(continuous > 0);
}

TEST_CASE("deployment search: weight and KV dtypes change what fits and what the GPU can run") {
  json q = small_question();
  q["tp"] = json::array({1});
  q["weights"] = json::array({"bf16", "int4"});
  q["gpus"].push_back({{"gpu", "a100-80g-sxm"}, {"usd_per_hour", 1.8}, {"intra_node", "nvlink3-nvswitch"}, {"inter_node", "ib-hdr"}});
  const DeploymentSearchSpec spec = read_deployment_search(q);
  const Plan plan = plan_deployment_search(spec);
  // 70B in bf16 (140 GB) does not fit one 80 GB GPU; in int4 (35 GB) it does.
  CHECK(pruned_for(plan, spec, "h100-sxm 1x(tp1) seqs 128 w-bf16", "does_not_fit"));
  bool int4_h100 = false;
  for (const auto& c : plan.candidates) int4_h100 = int4_h100 || (c.gpu == 0 && c.weights == "int4");
  CHECK(int4_h100);
  // fp8 weights need fp8 tensor cores: the A100 layouts are pruned by the scenario check.
  json q8 = small_question();
  q8["weights"] = json::array({"fp8"});
  q8["kv_cache"] = json::array({"fp8"});
  q8["gpus"] = json::array({{{"gpu", "a100-80g-sxm"}, {"usd_per_hour", 1.8}, {"intra_node", "nvlink3-nvswitch"}, {"inter_node", "ib-hdr"}}});
  const DeploymentSearchSpec spec8 = read_deployment_search(q8);
  const Plan plan8 = plan_deployment_search(spec8);
  CHECK(plan8.candidates.empty());
  CHECK(pruned_for(plan8, spec8, "a100-80g-sxm", "fp8"));
}

TEST_CASE("deployment search: disaggregated prefill:decode layouts split the replicas by the ratio") {
  json q = small_question();
  q["prefill_decode_ratio"] = json::array({"colocated", "1:1", "1:3"});
  q["chunked_prefill"] = json::array({true});
  const DeploymentSearchSpec spec = read_deployment_search(q);
  const Plan plan = plan_deployment_search(spec);
  CHECK(plan.space_size == 6);
  int disaggregated = 0;
  for (size_t i = 0; i < plan.candidates.size(); ++i) {
    const Candidate& c = plan.candidates[i];
    CHECK(c.gpus() <= spec.max_gpus);
    CHECK(c.replicas % c.ratio.unit() == 0);
    const Scenario s = read_scenario(plan.scenarios[i]);
    const auto& cluster = s.serving->simulation->cluster;
    CHECK(cluster.disaggregated == c.ratio.disaggregated());
    if (!c.ratio.disaggregated()) continue;
    ++disaggregated;
    REQUIRE(cluster.pools.size() == 2);
    CHECK(cluster.pools[0].replicas == c.prefill_replicas());
    CHECK(cluster.pools[1].replicas == c.decode_replicas());
    CHECK(c.prefill_replicas() * c.ratio.decode == c.decode_replicas() * c.ratio.prefill);
    CHECK(cluster.pools[0].layout.tp == c.tp);
    CHECK(cluster.pools[1].layout.tp == c.tp);
    // Sized so each pool could carry the target rate by its bound.
    const LayoutBounds lb = layout_bounds(s, c);
    CHECK(c.decode_replicas() * lb.replica_qps >= spec.target_qps);
    CHECK(c.prefill_replicas() * lb.prefill_replica_qps >= spec.target_qps);
  }
  CHECK(disaggregated > 0);
  // 1:3 at tp8 is 32 GPUs a unit: within the 32-GPU budget; tighter, it is pruned.
  q["max_gpus"] = 16;
  const DeploymentSearchSpec tight = read_deployment_search(q);
  CHECK(pruned_for(plan_deployment_search(tight), tight, "1P(tp8)+3D(tp8)", "above max_gpus"));
}

TEST_CASE("deployment search: mixed pools give the decode pool its own GPU and tp, priced and bounded per pool") {
  json q = small_question();
  q["gpus"].push_back({{"gpu", "a100-80g-sxm"}, {"usd_per_hour", 1.8}, {"intra_node", "nvlink3-nvswitch"}, {"inter_node", "ib-hdr"}});
  q["prefill_decode_ratio"] = json::array({"colocated", "1:1"});
  q["chunked_prefill"] = json::array({true});
  const DeploymentSearchSpec plain_spec = read_deployment_search(q);
  const Plan plain = plan_deployment_search(plain_spec);
  q["mixed_pools"] = true;
  const DeploymentSearchSpec spec = read_deployment_search(q);
  const Plan plan = plan_deployment_search(spec);
  // 2 GPUs x 2 tp: colocated 4 + disaggregated 4, each with 4 decode (GPU, tp) choices.
  CHECK(plain.space_size == 8);
  CHECK(plan.space_size == 4 + 4 * 4);
  // Without mixing a pool, a candidate is the same scenario as without mixed_pools.
  size_t same = 0;
  for (size_t i = 0; i < plan.candidates.size(); ++i)
    if (!plan.candidates[i].mixed()) ++same;
  CHECK(same == plain.candidates.size());
  int mixed_gpu = 0, mixed_tp = 0, compared = 0;
  for (size_t i = 0; i < plan.candidates.size(); ++i) {
    const Candidate& c = plan.candidates[i];
    if (!c.mixed()) continue;
    const Scenario s = read_scenario(plan.scenarios[i]);
    const auto& pools = s.serving->simulation->cluster.pools;
    REQUIRE(pools.size() == 2);
    CHECK(pools[0].layout.tp == c.tp);
    CHECK(pools[1].layout.tp == c.decode_tp());
    CHECK(s.hardware.total_gpus() == c.gpus());
    CHECK(c.gpus() == (c.prefill_replicas() * c.tp + c.decode_replicas() * c.decode_tp()) * c.pp);
    // Each pool's GPUs at their own price; the run's per-GPU price is the blend.
    const double usd = spec.gpus[c.gpu].usd_per_hour * c.prefill_replicas() * c.tp +
                       spec.gpus[c.decode_gpu()].usd_per_hour * c.decode_replicas() * c.decode_tp();
    CHECK(candidate_usd_per_hour(spec, c) == doctest::Approx(usd));
    CHECK(s.cost_model.gpu_hour_usd * c.gpus() == doctest::Approx(usd));
    if (c.decode_gpu() != c.gpu) {
      ++mixed_gpu;
      REQUIRE(pools[1].gpu.has_value());
      CHECK(pools[1].gpu->id == spec.gpus[c.decode_gpu()].gpu);
      // Two GPU types share no node: the KV cache crosses the prefill nodes' network.
      REQUIRE(s.serving->simulation->cluster.kv_transfer_link.has_value());
      CHECK(s.serving->simulation->cluster.kv_transfer_link->id == spec.gpus[c.gpu].inter_node);
      // The decode bounds come from the decode pool's GPU: an A100 decode pool
      // is slower per step than the H100 one of the same prefill pool and tp.
      if (c.gpu == 0 && c.decode_gpu() == 1 && c.decode_tp() == c.tp)
        for (size_t j = 0; j < plan.candidates.size(); ++j) {
          const Candidate& h = plan.candidates[j];
          if (h.mixed() || h.gpu != 0 || h.tp != c.tp || !h.ratio.disaggregated()) continue;
          ++compared;
          CHECK(layout_bounds(s, c).decode1_s > layout_bounds(read_scenario(plan.scenarios[j]), h).decode1_s);
          CHECK(layout_bounds(s, c).prefill_s == layout_bounds(read_scenario(plan.scenarios[j]), h).prefill_s);
        }
    } else {
      ++mixed_tp;
    }
    const std::string label = candidate_label(spec, c);
    CAPTURE(label);
    CHECK(label.find("D(tp" + std::to_string(c.decode_tp()) + ")") != std::string::npos);
  }
  CHECK(mixed_gpu > 0);
  CHECK(mixed_tp > 0);
  CHECK(compared > 0);
  // Located errors: not a boolean; nothing to mix.
  q["mixed_pools"] = "yes";
  CHECK(error_path(q) == "/mixed_pools");
  q["mixed_pools"] = true;
  q["prefill_decode_ratio"] = json::array({"colocated"});
  CHECK(error_path(q) == "/mixed_pools");
}

TEST_CASE("deployment search: wide expert parallelism for MoE models (attention_data_parallel axis)") {
  json q = small_question();
  q["base"]["model"] = "qwen3-30b-a3b";
  q["base"]["serving"]["moe"] = {{"load_imbalance", 1.2}};
  q["tp"] = json::array({1, 2});
  q["chunked_prefill"] = json::array({true});
  q["attention_data_parallel"] = json::array({1, 4});
  const DeploymentSearchSpec spec = read_deployment_search(q);
  const Plan plan = plan_deployment_search(spec);
  CHECK(plan.space_size == 4);
  int wide = 0;
  for (size_t i = 0; i < plan.candidates.size(); ++i) {
    const Candidate& c = plan.candidates[i];
    const Scenario s = read_scenario(plan.scenarios[i]);
    const auto& moe = s.serving->simulation->moe;
    CHECK(moe.load_imbalance == 1.2);  // the base's serving.moe keys stay
    if (c.attention_dp == 1) {
      CHECK(moe.expert_parallel == 1);
      continue;
    }
    ++wide;
    // Whole data-parallel groups, the experts over all of a group's GPUs.
    CHECK(c.replicas % c.attention_dp == 0);
    CHECK(moe.attention_data_parallel == c.attention_dp);
    CHECK(moe.expert_parallel == c.attention_dp * c.tp);
    CHECK(s.serving->simulation->cluster.pools.front().layout.ep == c.attention_dp * c.tp);
    const std::string label = candidate_label(spec, c);
    CHECK(label.find(" adp4 ep" + std::to_string(4 * c.tp)) != std::string::npos);
  }
  CHECK(wide > 0);
  // Located errors: a dense base, a value out of range.
  json dense = small_question();
  dense["attention_data_parallel"] = json::array({1, 8});
  CHECK(error_path(dense) == "/attention_data_parallel");
  q["attention_data_parallel"] = json::array({0});
  CHECK(error_path(q) == "/attention_data_parallel/0");
}

TEST_CASE("deployment search: the throughput bounds hold against a saturated run") {
  // The plan prunes and sizes with upper bounds on a replica's rate; a run
  // with every request arriving at once must not beat them, or the plan
  // could prune a deployment that meets the SLO.
  json q = small_question();
  q["tp"] = json::array({8});
  q["max_num_seqs"] = json::array({64});
  q["chunked_prefill"] = json::array({true});
  q["prefill_decode_ratio"] = json::array({"colocated", "1:1"});
  q["target_qps"] = 1;
  q["replica_options"] = 1;
  const DeploymentSearchSpec spec = read_deployment_search(q);
  const Plan plan = plan_deployment_search(spec);
  REQUIRE(plan.candidates.size() == 2);
  for (size_t i = 0; i < plan.candidates.size(); ++i) {
    const Candidate& c = plan.candidates[i];
    const LayoutBounds lb = layout_bounds(read_scenario(plan.scenarios[i]), c);
    const double bound = c.ratio.disaggregated()
                             ? std::min(c.prefill_replicas() * lb.prefill_replica_qps, c.decode_replicas() * lb.replica_qps)
                             : c.replicas * lb.replica_qps;
    const double measured = saturated_rate_qps(plan.scenarios[i], 400);
    MESSAGE(candidate_label(spec, c) << ": saturated " << measured << " req/s, bound " << bound << " req/s");
    CHECK(measured > 0);
    CHECK(measured <= bound);
    check_search_doc_quotes(candidate_label(spec, c) + ": " + decimals_of(measured, 1) + " against " + decimals_of(bound, 1) +
                            " req/s");
  }
}

TEST_CASE("deployment search: the wide-EP bounds hold against a saturated run and a lone request") {
  // Attention data-parallel candidates are pruned and sized with the same
  // three bounds, priced with each GPU's whole experts serving its group's
  // tokens but without the all-to-all and the expert-load imbalance that the
  // simulation adds. They must stay bounds of what the simulation does: the
  // group's saturated rate at most replicas x replica_qps (else the plan
  // would size too few replicas), and a lone request's TTFT and TPOT at
  // least the lone-prefill and batch-1 decode floors (else the plan could
  // prune a layout that meets the SLO).
  json q = small_question();
  q["base"]["model"] = "qwen3-30b-a3b";
  q["base"]["serving"]["moe"] = {{"load_imbalance", 1.2}};
  q["tp"] = json::array({1, 2});
  q["max_gpus"] = 8;
  q["max_num_seqs"] = json::array({64});
  q["chunked_prefill"] = json::array({true});
  q["attention_data_parallel"] = json::array({2, 4});
  q["target_qps"] = 1;
  q["replica_options"] = 1;
  const DeploymentSearchSpec spec = read_deployment_search(q);
  const Plan plan = plan_deployment_search(spec);
  REQUIRE(plan.candidates.size() == 4);
  for (size_t i = 0; i < plan.candidates.size(); ++i) {
    const Candidate& c = plan.candidates[i];
    REQUIRE(c.attention_dp > 1);
    const std::string label = candidate_label(spec, c);
    CAPTURE(label);
    const LayoutBounds lb = layout_bounds(read_scenario(plan.scenarios[i]), c);
    const double bound = c.replicas * lb.replica_qps;
    const double measured = saturated_rate_qps(plan.scenarios[i], 400);
    MESSAGE(label << ": saturated " << measured << " req/s, bound " << bound << " req/s");
    CHECK(measured > 0);
    CHECK(measured <= bound);
    const std::string short_label = "adp" + std::to_string(c.attention_dp) + " tp" + std::to_string(c.tp);
    check_search_doc_quotes(short_label + ": " + decimals_of(measured, 1) + " against " + decimals_of(bound, 1) + " req/s");
    // A lone request of the mean lengths (fixed, so the bounds price exactly its prompt).
    json lone_doc = plan.scenarios[i];
    lone_doc["serving"]["workload"]["prompt_tokens"] = 512;
    lone_doc["serving"]["workload"]["output_tokens"] = 64;
    const Scenario lone = read_scenario(lone_doc);
    const LayoutBounds floors = layout_bounds(lone, c);
    serve::WorkloadOverride o;
    o.num_requests = 1;
    serve::Simulation sim(lone, o, false);
    while (!sim.run(int64_t{1} << 30)) {
    }
    const std::vector<serve::RequestOutcome> out = sim.outcomes();
    REQUIRE(out.size() == 1);
    const serve::RequestOutcome& r = out.front();
    REQUIRE(r.completion > r.first_token);
    const double ttft_s = static_cast<double>(r.first_token - r.arrival) * 1e-9;
    const double tpot_s = static_cast<double>(r.completion - r.first_token) * 1e-9 / static_cast<double>(r.output_tokens - 1);
    MESSAGE(label << ": lone TTFT " << ttft_s * 1e3 << " ms (floor " << floors.prefill_s * 1e3 << "), TPOT " << tpot_s * 1e3
                  << " ms (floor " << floors.decode1_s * 1e3 << ")");
    CHECK(ttft_s >= floors.prefill_s);
    CHECK(tpot_s >= floors.decode1_s);
    check_search_doc_quotes(short_label + ": TTFT " + decimals_of(ttft_s * 1e3, 1) + " ms against " +
                            decimals_of(floors.prefill_s * 1e3, 1) + ", TPOT " + decimals_of(tpot_s * 1e3, 2) +
                            " ms against " + decimals_of(floors.decode1_s * 1e3, 2));
  }
}

TEST_CASE("deployment search: bad optional axis values get located errors") {
  json q = small_question();
  q["weights"] = json::array({"bf16", "fp7"});
  CHECK(error_path(q) == "/weights/1");
  q = small_question();
  q["kv_cache"] = json::array({"int4"});
  CHECK(error_path(q) == "/kv_cache/0");
  q = small_question();
  q["prefill_decode_ratio"] = json::array({"colocated", "2-1"});
  CHECK(error_path(q) == "/prefill_decode_ratio/1");
  q["prefill_decode_ratio"] = json::array({"0:1"});
  CHECK(error_path(q) == "/prefill_decode_ratio/0");
  q["prefill_decode_ratio"] = json::array({1});
  CHECK(error_path(q) == "/prefill_decode_ratio/0");
  q = small_question();
  q["chunk_size"] = json::array({0});
  CHECK(error_path(q) == "/chunk_size/0");
  q = small_question();
  q["max_num_batched_tokens"] = json::array();
  CHECK(error_path(q) == "/max_num_batched_tokens");
}

namespace {

json budget_question() {
  json q = small_question();
  q.erase("target_qps");
  q["max_gpus"] = 16;
  q["gpus"].push_back({{"gpu", "a100-80g-sxm"}, {"usd_per_hour", 1.8}, {"intra_node", "nvlink3-nvswitch"}, {"inter_node", "ib-hdr"}});
  q["chunked_prefill"] = json::array({true});
  return q;
}

}  // namespace

TEST_CASE("deployment search: without target_qps, max_gpus asks for the best deployment under that budget") {
  json none = small_question();
  none.erase("target_qps");
  none.erase("max_gpus");
  CHECK(error_path(none) == "/target_qps");
  const DeploymentSearchSpec spec = read_deployment_search(budget_question());
  CHECK(spec.budget());
  CHECK(spec.max_requests == 60000);
  const Plan plan = plan_deployment_search(spec);
  REQUIRE(plan.candidates.size() == 4);  // 2 GPUs x tp 4/8
  for (size_t i = 0; i < plan.candidates.size(); ++i) {
    const Candidate& c = plan.candidates[i];
    // Each layout fills the budget: 16 GPUs as 4 x tp4 or 2 x tp8.
    CHECK(c.gpus() == 16);
    const json& sv = plan.scenarios[i]["serving"];
    CHECK(sv.contains("max_qps_search"));
    CHECK(!sv.contains("steady_state"));
    CHECK(sv["max_qps_search"]["max_requests_per_run"] == 60000);
  }
  // The workload's mean tokens per request: its draws are lognormal, clipped
  // (prompt mean 256 in [8, 2048], output mean 256 in [8, 1024]).
  CHECK(plan.tokens_per_request > 400);
  CHECK(plan.tokens_per_request < 560);
}

TEST_CASE("deployment search: the budget answer is priced at each layout's highest rate within the SLO") {
  const DeploymentSearchSpec spec = read_deployment_search(budget_question());
  const Plan plan = plan_deployment_search(spec);
  REQUIRE(plan.candidates.size() == 4);
  // Capacity results as the run call returns them (the max_qps block).
  const std::vector<double> qps = {20.0, 12.0, 4.0, 0.0};
  std::vector<CandidateOutcome> central;
  for (double q : qps) {
    const json result = {{"max_qps", {{"qps", q}, {"upper_qps", q * 1.03 + 0.1}, {"service_rate_qps", q * 1.2 + 1}, {"requests_simulated", 5000}}},
                         {"metrics", json::object()}};
    central.push_back(read_candidate_outcome(result));
    CHECK(central.back().capacity);
  }
  const std::vector<size_t> picked = interval_candidates(spec, plan, central);
  std::vector<CandidateOutcome> low, high;
  for (size_t i : picked) {
    low.push_back(central[i]);
    high.push_back(central[i]);
    high.back().max_qps *= 0.5;
  }
  const DeploymentSearchResult r = rank_deployment_search(spec, plan, central, low, high);
  REQUIRE(r.cheapest == 0);
  double last = 0;
  for (const RankedCandidate& c : r.ranked) {
    if (!c.central.meets_slo) {
      CHECK(c.central.max_qps == 0);
      continue;
    }
    const double usd_per_hour = spec.gpus[c.c.gpu].usd_per_hour * c.c.gpus();
    CHECK(c.central.usd_per_million_tokens ==
          doctest::Approx(usd_per_hour / (c.central.max_qps * plan.tokens_per_request * 3600) * 1e6));
    CHECK(c.central.usd_per_million_tokens >= last);
    last = c.central.usd_per_million_tokens;
  }
  CHECK(!r.ranked.back().central.meets_slo);
  const json out = r.to_json();
  CHECK(out["target_qps"].is_null());
  CHECK(out["pareto_axes"][1] == "max_qps");
  CHECK(out["cheapest_meeting_slo"]["max_qps"].get<double>() > 0);
  // The slower-kernel bound halves the rate, so it doubles the price.
  const json& km = out["key_metrics"];
  CHECK(km[1]["id"] == "max_qps");
  CHECK(km[0]["high"].get<double>() == doctest::Approx(2 * km[0]["value"].get<double>()));
  // Every front point: no other layout is both cheaper per token and faster.
  for (const json& f : out["pareto_front"])
    for (const json& c : out["ranked"])
      if (c["meets_slo"].get<bool>())
        CHECK(!(c["usd_per_million_tokens"].get<double>() < f["usd_per_million_tokens"].get<double>() &&
                c["max_qps"].get<double>() > f["max_qps"].get<double>()));
}

TEST_CASE("capacity: deployment search: a disaggregated answer meets the SLO in a long confirmation run") {
  // Near the decode pool's limit (a 1P+1D tp8 unit at max_num_seqs 64
  // saturates near 14.4 req/s, docs/search.md), so the verdict has something to decide.
  json q = small_question();
  q["target_qps"] = 10;
  q["tp"] = json::array({8});
  q["max_num_seqs"] = json::array({64});
  q["chunked_prefill"] = json::array({true});
  q["prefill_decode_ratio"] = json::array({"1:1"});
  q["replica_options"] = 2;
  q["max_interval_points"] = 0;
  const DeploymentSearchSpec spec = read_deployment_search(q);
  const Plan plan = plan_deployment_search(spec);
  REQUIRE(!plan.candidates.empty());
  std::vector<CandidateOutcome> central;
  for (const json& sc : plan.scenarios) central.push_back(evaluate_candidate(sc, CostBound::Central));
  const DeploymentSearchResult r = rank_deployment_search(spec, plan, central, {}, {});
  REQUIRE(r.cheapest == 0);
  const RankedCandidate& best = r.ranked.front();
  CHECK(best.c.ratio.disaggregated());
  json s = plan.scenarios[best.index];
  const int64_t n = std::max<int64_t>(20000, 2 * best.central.requests);
  s["serving"].erase("steady_state");
  s["serving"]["workload"]["num_requests"] = n;
  s["serving"]["limits"] = {{"max_requests", n}, {"max_sim_time_s", 1e7}};
  auto job = make_single_job(read_scenario(s));
  while (!job->step(1 << 20)) {
  }
  const json m = job->result()["metrics"];
  MESSAGE("search picked " << best.label << " at 10 req/s (" << plan.candidates.size() << " candidates): attainment "
                           << best.central.attainment << " over " << best.central.requests << " requests; " << n
                           << " requests: " << m["goodput"]["slo_attainment"] << ", TPOT p99 " << m["tpot_ms"]["p99"] << " ms");
  CHECK(m["requests"]["completed"] == n);
  CHECK(m["goodput"]["slo_attainment"].get<double>() >= 0.9);
  check_search_doc_quotes("at 10 req/s the search picks " + best.label + " (attainment " +
                          decimals_of(best.central.attainment, 4) + " over " + std::to_string(best.central.requests) +
                          " requests), and a " + std::to_string(n) + "-request run there meets the SLO (" +
                          decimals_of(m["goodput"]["slo_attainment"].get<double>(), 4) + ", P99 TPOT " +
                          decimals_of(m["tpot_ms"]["p99"].get<double>(), 0) + " ms)");
}
