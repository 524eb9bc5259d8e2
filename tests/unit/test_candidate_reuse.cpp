// Reusing a search candidate's run for a sibling that differs only in
// max_num_seqs (search/candidate_reuse.hpp, serve/limit_facts.hpp): the rule
// on recorded facts, real runs where the batch limit binds (no reuse) and
// where it never does (reuse, and the sibling's own run is the same), and a
// search whose every outcome is the same with reuse on and off.
#include <doctest/doctest.h>

#include "search/candidate_reuse.hpp"
#include "search/deployment_search.hpp"
#include "test_helpers.hpp"

using namespace sightline;
using namespace sightline::search;

namespace {

serve::RunLimits limits(int64_t seqs, std::vector<int64_t> blocks, double watermark = 0.01) {
  serve::RunLimits l;
  l.max_num_seqs = seqs;
  l.kv_blocks = std::move(blocks);
  l.watermark = watermark;
  return l;
}

// Every field a candidate's outcome has, compared exactly.
void check_same(const CandidateOutcome& a, const CandidateOutcome& b) {
  CHECK(a.ok == b.ok);
  CHECK(a.error == b.error);
  CHECK(a.meets_slo == b.meets_slo);
  CHECK(a.verdict == b.verdict);
  CHECK(a.attainment == b.attainment);
  CHECK(a.attainment_low == b.attainment_low);
  CHECK(a.attainment_high == b.attainment_high);
  CHECK(a.requests == b.requests);
  CHECK(a.ttft_p99_ms == b.ttft_p99_ms);
  CHECK(a.tpot_p99_ms == b.tpot_p99_ms);
  CHECK(a.output_tokens_per_s == b.output_tokens_per_s);
  CHECK(a.usd_per_million_tokens == b.usd_per_million_tokens);
  CHECK(a.capacity == b.capacity);
  CHECK(a.max_qps == b.max_qps);
  CHECK(a.max_qps_upper == b.max_qps_upper);
  CHECK(a.service_rate_qps == b.service_rate_qps);
}

// Llama-3-70B chat on H100 (the canonical search's workload), `seqs` values, chunked prefill.
json question(double qps, std::vector<int> tp, std::vector<int64_t> seqs) {
  json q = json::parse(R"({
    "max_gpus": 32, "chunked_prefill": [true], "replica_options": 2, "requests": 1000, "max_requests": 4000,
    "gpus": [{"gpu": "h100-sxm", "usd_per_hour": 3.0, "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr"}]
  })");
  q["target_qps"] = qps;
  q["tp"] = tp;
  q["max_num_seqs"] = seqs;
  q["base"] = test::llama3_70b_h100_search_base();
  return q;
}

json with_seqs(json scenario, int64_t seqs) {
  scenario["serving"]["scheduler"]["max_num_seqs"] = seqs;
  return scenario;
}

}  // namespace

TEST_CASE("candidate reuse: the rule reuses only a run whose every limit check answers the same") {
  serve::LimitFacts f;
  // Running counts 0..40 were compared with the limit 256; none reached it.
  f.seqs.below = 40;
  f.kv.demand = 900;
  f.kv.watermarked = 880;
  const serve::RunLimits ran = limits(256, {1000});
  CHECK(serve::runs_alike(f, ran, limits(64, {1000})));
  CHECK(serve::runs_alike(f, ran, limits(41, {1000})));
  CHECK_FALSE(serve::runs_alike(f, ran, limits(40, {1000})));  // 40 running would have reached it
  // A larger pool (smaller activation reserve) answers the KV checks the same.
  CHECK(serve::runs_alike(f, ran, limits(64, {1200})));
  // A smaller one: within the demand and its own watermark (1% of 895 = 8 blocks) or not.
  CHECK(serve::runs_alike(f, ran, limits(64, {900})));
  CHECK_FALSE(serve::runs_alike(f, ran, limits(64, {899})));
  CHECK_FALSE(serve::runs_alike(f, ran, limits(64, {1000, 850})));  // one pool per engine, each checked
  // The batch limit bound: 64 running met the limit 64, so 128 would admit more.
  serve::LimitFacts bound;
  bound.seqs.below = 63;
  bound.seqs.at_or_above = 64;
  CHECK_FALSE(serve::runs_alike(bound, limits(64, {1000}), limits(128, {1000})));
  CHECK(serve::runs_alike(bound, limits(64, {1000}), limits(64, {1000})));
  // A short pool: reused only by a sibling with the very same pools.
  serve::LimitFacts short_kv = f;
  short_kv.kv.refused = true;
  CHECK(serve::runs_alike(short_kv, ran, limits(64, {1000})));
  CHECK_FALSE(serve::runs_alike(short_kv, ran, limits(64, {1200})));
  serve::LimitFacts sized = f;
  sized.capacity_read = true;  // the least_kv_load router divides by the pool's size
  CHECK_FALSE(serve::runs_alike(sized, ran, limits(64, {1200})));
  serve::LimitFacts opaque = f;
  opaque.opaque = true;
  CHECK_FALSE(serve::runs_alike(opaque, ran, limits(256, {1000})));
}

TEST_CASE("candidate reuse: a run whose batch limit binds is not reused, one whose limit never binds is the same run") {
  const DeploymentSearchSpec spec = read_deployment_search(question(20, {8}, {256}));
  const Plan plan = plan_deployment_search(spec);
  REQUIRE(!plan.scenarios.empty());
  const json base = plan.scenarios.front();
  // 20 req/s of Llama-3-70B on one tp8 replica holds dozens of sequences: 8 binds.
  const CandidateRun r8 = run_candidate(with_seqs(base, 8), CostBound::Central);
  const CandidateRun r256 = run_candidate(with_seqs(base, 256), CostBound::Central);
  REQUIRE(r8.outcome.ok);
  CHECK(r8.facts.seqs.at_or_above == 8);
  CHECK_FALSE(serve::runs_alike(r8.facts, r8.limits, r256.limits));
  CHECK_FALSE(serve::runs_alike(r256.facts, r256.limits, r8.limits));
  CHECK(r8.outcome.ttft_p99_ms != r256.outcome.ttft_p99_ms);  // and indeed the runs differ
  // At 1 req/s a few sequences run at once: 64 and 256 never bind, the pools
  // (which differ by the activation reserve) are never short.
  json light = with_seqs(base, 256);
  light["serving"]["workload"]["arrival"]["rate_qps"] = 1.0;
  const CandidateRun l256 = run_candidate(light, CostBound::Central);
  const CandidateRun l64 = run_candidate(with_seqs(light, 64), CostBound::Central);
  REQUIRE(l256.outcome.ok);
  CHECK(l256.facts.seqs.below < 64);
  CHECK(l256.limits.kv_blocks != l64.limits.kv_blocks);
  CHECK(serve::runs_alike(l256.facts, l256.limits, l64.limits));
  check_same(l256.outcome, l64.outcome);
}

TEST_CASE("capacity: candidate reuse: every outcome and the answer are the same with reuse on and off") {
  const DeploymentSearchSpec spec = read_deployment_search(question(20, {4, 8}, {64, 128, 256}));
  const Plan plan = plan_deployment_search(spec);
  const ForEach sequential = [](size_t n, const std::function<void(size_t)>& task) {
    for (size_t k = 0; k < n; ++k) task(k);
  };
  std::vector<int> reused_from;
  RunOptions on;
  on.reused_from = &reused_from;
  RunOptions off;
  off.reuse_runs = false;
  const auto with = run_deployment_plan(spec, plan, sequential, on);
  const auto without = run_deployment_plan(spec, plan, sequential, off);
  REQUIRE(with.central.size() == without.central.size());
  size_t reused = 0;
  for (size_t k = 0; k < with.central.size(); ++k) {
    CAPTURE(candidate_label(spec, plan.candidates[k]));
    check_same(with.central[k], without.central[k]);
    if (reused_from[k] < 0) continue;
    ++reused;
    // Reused only from a sibling: the same deployment but for max_num_seqs.
    Candidate c = plan.candidates[static_cast<size_t>(reused_from[k])];
    CHECK(c.max_num_seqs != plan.candidates[k].max_num_seqs);
    c.max_num_seqs = plan.candidates[k].max_num_seqs;
    CHECK(candidate_label(spec, c) == candidate_label(spec, plan.candidates[k]));
  }
  CHECK(reused > 0);  // the question has siblings that run alike: the comparison is not empty
  CHECK(reused < with.central.size());
  const json a = rank_deployment_search(spec, plan, with.central, with.low, with.high).to_json();
  const json b = rank_deployment_search(spec, plan, without.central, without.low, without.high).to_json();
  CHECK(a == b);
}
