// The training configuration search, checked against an independent brute
// force: every configuration of the same space written by hand as a scenario
// and run through the public API (the ordinary run call, central bound only).
// The search's answer must be the fastest of those that fit, everything it
// ranks must fit, and what it prunes must be what the API rejects or what does
// not fit.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "search/training_search.hpp"
#include "test_helpers.hpp"

using namespace sightline;
using namespace sightline::search;

namespace {

// Llama-2-7B on one node of 8 H100s, global batch 64 × 4096 tokens (T3.5).
json small_training_question() {
  json q = json::parse(R"({
    "kind": "training_search", "base": "T3.5",
    "tp": [1, 2, 4, 16], "pp": [1, 2, 4], "micro_batch": [1, 2, 8, 16], "virtual_stages": [1, 2],
    "recompute": ["none", "full"], "zero_stage": [0, 1, 3], "sequence_parallel": [true]
  })");
  return q;
}

TrainingSearchResult run_search(const TrainingSearchSpec& spec, const TrainPlan& plan, bool reverse = false) {
  std::vector<TrainOutcome> central(plan.candidates.size());
  for (size_t k = 0; k < central.size(); ++k) {
    const size_t i = reverse ? central.size() - 1 - k : k;
    central[i] = evaluate_training_candidate(spec, plan, i, CostBound::Central);
  }
  const std::vector<size_t> picked = training_interval_candidates(spec, plan, central);
  std::vector<TrainOutcome> low, high;
  for (size_t i : picked) {
    low.push_back(evaluate_training_candidate(spec, plan, i, CostBound::Low));
    high.push_back(evaluate_training_candidate(spec, plan, i, CostBound::High));
  }
  return rank_training_search(spec, plan, central, low, high);
}

std::string error_path(const json& q) {
  try {
    read_training_search(q);
  } catch (const SightlineError& e) {
    return e.path();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("training search: the answer is the fastest fitting configuration of a brute force through the run API") {
  const TrainingSearchSpec spec = read_training_search(small_training_question());
  const TrainPlan plan = plan_training_search(spec);
  const TrainingSearchResult r = run_search(spec, plan);

  // The brute force: the same axes, each configuration written as a plain
  // scenario from T3.5 and run by the public API.
  json base = test::preset("scenarios", "T3.5");
  base["training"].erase("compare");
  base["training"].erase("key_metrics");
  const int64_t gbs = 8 * 2 * 4;  // T3.5: dp 8 × micro-batch 2 × gradient accumulation 4
  int64_t space = 0, rejected = 0, not_fitting = 0, fitting = 0;
  double best_tokens_per_s = -1;
  json best;
  for (int tp : {1, 2, 4, 16})
    for (int pp : {1, 2, 4})
      for (int vs : {1, 2})
        for (int mb : {1, 2, 8, 16})
          for (const char* rc : {"none", "full"})
            for (int zero : {0, 1, 3}) {
              ++space;
              json s = base;
              s["training"]["parallelism"] = {{"dp", std::max(1, 8 / (tp * pp))}, {"tp", tp},           {"pp", pp},
                                              {"virtual_stages", vs},                {"zero_stage", zero}, {"sequence_parallel", tp > 1}};
              s["training"]["batch"] = {{"seq_len", 4096}, {"micro_batch_size", mb}, {"global_batch_size", gbs}};
              s["training"]["schedule"] = vs > 1 ? "interleaved_1f1b" : "1f1b";
              s["training"]["recompute"] = rc;
              const json env = test::envelope(api::run_scenario_central_only(s.dump()));
              if (tp * pp > 8 || !env["ok"].get<bool>()) {
                ++rejected;
                continue;
              }
              const json& res = env["result"];
              if (!res["memory_per_gpu"]["fits"].get<bool>()) {
                ++not_fitting;
                continue;
              }
              ++fitting;
              const double tps = res["metrics"]["tokens_per_s"].get<double>();
              if (tps > best_tokens_per_s) {
                best_tokens_per_s = tps;
                best = s["training"];
              }
            }
  CHECK(r.space.planned == space);
  CHECK(r.space.pruned == rejected);
  CHECK(r.pruned_memory == not_fitting);
  CHECK(static_cast<int64_t>(r.ranked.size()) == fitting);
  REQUIRE(fitting > 0);
  REQUIRE(!r.ranked.empty());
  const RankedTrainCandidate& top = r.ranked.front();
  MESSAGE("search: " << top.label << " at " << top.central.tokens_per_s << " tokens/s; brute force: " << best["parallelism"].dump() << " "
                           << best["batch"].dump() << " " << best["recompute"].dump());
  CHECK(top.central.tokens_per_s == doctest::Approx(best_tokens_per_s).epsilon(1e-12));
  CHECK(top.c.tp == best["parallelism"]["tp"].get<int>());
  CHECK(top.c.pp == best["parallelism"]["pp"].get<int>());
  CHECK(top.c.virtual_stages == best["parallelism"]["virtual_stages"].get<int>());
  CHECK(top.c.micro_batch == best["batch"]["micro_batch_size"].get<int64_t>());

  // Everything ranked fits, best first.
  for (size_t k = 0; k < r.ranked.size(); ++k) {
    const TrainOutcome& o = r.ranked[k].central;
    CHECK(o.fits);
    CHECK(o.memory_GiB <= o.capacity_GiB);
    CHECK(o.ok);
    CHECK(r.ranked[k].c.gpus == r.ranked[k].c.dp * r.ranked[k].c.tp * r.ranked[k].c.pp * r.ranked[k].c.cp);
    CHECK(r.ranked[k].c.dp * r.ranked[k].c.micro_batch * r.ranked[k].c.ga == gbs);
    if (k > 0) CHECK(o.tokens_per_s <= r.ranked[k - 1].central.tokens_per_s);
  }

  // The answer carries its 80% interval from the low and high cost bounds.
  REQUIRE(top.has_interval);
  CHECK(top.low.step_time_ms < top.central.step_time_ms);
  CHECK(top.high.step_time_ms > top.central.step_time_ms);
  const json out = r.to_json();
  CHECK(out["kind"] == "training_search");
  CHECK(out["best"]["configuration"] == top.label);
  CHECK(out["key_metrics"][0]["id"] == "step_time_ms");
  CHECK(out["key_metrics"][0].contains("low"));
  CHECK(out["accuracy"].contains("tier"));

  // Pruning reasons: tp 16 on 8 GPUs, virtual stages without a pipeline, a
  // global batch of 64 that 8 × 16 does not divide, fewer micro-batches than
  // stages (pp 4, dp 2, micro-batch 16: 2 per pipeline), and memory (ZeRO-0
  // at tp 1 holds the whole 7B model's optimizer states).
  std::set<std::string> keys;
  int64_t counted = 0;
  for (const auto& reason : r.reasons) {
    keys.insert(reason.key);
    counted += reason.count;
  }
  CHECK(counted == r.space.pruned + r.pruned_memory);
  CHECK(keys.count("virtual_stages > 1 needs pp ≥ 2") == 1);
  CHECK(keys.count("tp × pp × cp does not divide the GPU count") == 1);
  CHECK(keys.count("the global batch is not a multiple of dp × micro_batch") == 1);
  CHECK(keys.count("constraint_violation at /training/batch/global_batch_size") == 1);
  CHECK(keys.count("does not fit in GPU memory (the estimator's memory block)") == 1);
  CHECK(static_cast<int64_t>(r.pruned.size()) == r.space.pruned + r.pruned_memory);

  // Deterministic: the evaluation order (threads finish in any order) changes nothing.
  CHECK(run_search(spec, plan, true).to_json().dump() == out.dump());
}

TEST_CASE("training search: tokens per dollar over two GPU options ranks by tokens per dollar") {
  json q = json::parse(R"({
    "kind": "training_search", "base": "T3.5", "objective": "tokens_per_usd",
    "gpus": [{"gpu": "h100-sxm", "usd_per_hour": 3.0, "count": [8, 16]},
             {"gpu": "a100-80g-sxm", "usd_per_hour": 1.5, "intra_node": "nvlink3-nvswitch", "inter_node": "ib-hdr", "count": 8}],
    "tp": [1, 2], "pp": [1, 2], "micro_batch": [1, 2], "virtual_stages": [1], "recompute": ["none", "full"], "zero_stage": [1, 3]
  })");
  const TrainingSearchSpec spec = read_training_search(q);
  const TrainPlan plan = plan_training_search(spec);
  const TrainingSearchResult r = run_search(spec, plan);
  REQUIRE(r.ranked.size() > 2);
  std::set<std::string> gpus;
  for (size_t k = 0; k < r.ranked.size(); ++k) {
    const RankedTrainCandidate& c = r.ranked[k];
    gpus.insert(c.gpu + "x" + std::to_string(c.c.gpus));
    const double price = (c.gpu == "h100-sxm" ? 3.0 : 1.5) * c.c.gpus;
    CHECK(c.usd_per_hour == doctest::Approx(price));
    CHECK(c.central.tokens_per_usd == doctest::Approx(c.central.tokens_per_s * 3600.0 / price));
    if (k > 0) CHECK(c.central.tokens_per_usd <= r.ranked[k - 1].central.tokens_per_usd);
  }
  CHECK(gpus.size() == 3);  // h100 ×8, h100 ×16, a100 ×8 all ranked
  const json out = r.to_json();
  CHECK(out["objective"] == "tokens_per_usd");
  CHECK(out["key_metrics"][0]["id"] == "tokens_per_usd");
}

TEST_CASE("training search: bad questions get located errors") {
  json q = small_training_question();
  q["tp"] = json::array({2, "four"});
  CHECK(error_path(q) == "/tp/1");
  q = small_training_question();
  q["recompute"] = json::array({"none", "partial"});
  CHECK(error_path(q) == "/recompute/1");
  q = small_training_question();
  q["tpp"] = json::array({1});
  CHECK(error_path(q) == "/tpp");
  q = small_training_question();
  q["kind"] = "trainingsearch";
  CHECK(error_path(q) == "/kind");
  q = small_training_question();
  q["base"] = "I1.1";  // a serving scenario
  CHECK(error_path(q) == "/base/training");
  q = small_training_question();
  q["gpus"] = 12;  // T3.5 has 8 GPUs per node
  CHECK(error_path(q) == "/gpus");
  q = small_training_question();
  q["gpus"] = 16;  // two nodes, and T3.5 has no inter_node
  CHECK(error_path(q) == "/gpus/inter_node");
  q = small_training_question();
  q["objective"] = "tokens_per_usd";  // T3.5 has no price
  CHECK(error_path(q) == "/objective");
  q = small_training_question();
  q["objective"] = "tokens_per_usd";
  q["gpus"] = json::array({{{"gpu", "h100-sxm"}, {"count", 8}}});
  CHECK(error_path(q) == "/gpus/0/usd_per_hour");
  q = small_training_question();
  q["gpus"] = json::array({{{"gpu", "h100-sxm"}, {"usd_per_hour", 2}, {"count", json::array({8, 8})}}});
  CHECK(error_path(q) == "/gpus/0/count/1");
  q = small_training_question();
  q["gpus"] = json::array({{{"gpu", "h100-sxm"}, {"intra_node", "ib-ndr"}}});
  CHECK(error_path(q) == "/gpus/0/intra_node");
  q = small_training_question();
  q["zero_stage"] = json::array({4});
  CHECK(error_path(q) == "/zero_stage/0");
}
