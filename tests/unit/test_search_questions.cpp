// What the deployment and the training search share: one reader rule for the
// axes of a question (a value listed twice is a located error at its second
// place, in both searches alike), and key metrics that carry the catalogue's
// label and unit, found in the result at the catalogue's pointer.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "scenario/metric_catalogue.hpp"
#include "scenario/simulation_spec.hpp"
#include "search/deployment_search.hpp"
#include "search/training_search.hpp"
#include "test_helpers.hpp"

using namespace sightline;
using namespace sightline::search;

namespace {

// Llama-2-7B on A100-80Gs at 2 req/s (I2.2's workload and SLO): small enough
// to run the whole search in a unit test.
json deployment_question() {
  json q = json::parse(R"({
    "target_qps": 2, "max_gpus": 2,
    "gpus": [{"gpu": "a100-80g-sxm", "usd_per_hour": 2.0}],
    "tp": [1], "max_num_seqs": [64], "chunked_prefill": [false], "replica_options": 1, "requests": 200,
    "max_interval_points": 1
  })");
  q["base"] = test::preset("scenarios", "I2.2");
  return q;
}

json training_question() {
  return json::parse(R"({
    "kind": "training_search", "base": "T3.5",
    "tp": [1, 2], "pp": [1], "micro_batch": [1], "virtual_stages": [1],
    "recompute": ["full"], "zero_stage": [1], "sequence_parallel": [true], "top": 2
  })");
}

struct Located {
  std::string code, path, message;
};

template <class Read>
Located error_of(Read read, const json& q) {
  try {
    read(q);
  } catch (const SightlineError& e) {
    return {e.code(), e.path(), e.what()};
  }
  return {"(no error)", "", ""};
}

Located deployment_error(const json& q) {
  return error_of([](const json& x) { read_deployment_search(x); }, q);
}
Located training_error(const json& q) {
  return error_of([](const json& x) { read_training_search(x); }, q);
}

void check_listed_twice(const Located& e, const std::string& path) {
  CAPTURE(e.message);
  CHECK(e.code == "invalid_value");
  CHECK(e.path == path);
  CHECK(e.message.find("listed twice") != std::string::npos);
}

// Every key metric is in the catalogue under the search's kind, with its label
// and unit; the top-level ones (the answer's) sit at the catalogue's pointer.
void check_catalogued(MetricKind kind, const json& result) {
  REQUIRE(result["key_metrics"].is_array());
  REQUIRE(!result["key_metrics"].empty());
  for (const json& k : result["key_metrics"]) {
    const std::string id = k["id"].get<std::string>();
    CAPTURE(id);
    const MetricInfo* m = find_metric(kind, id);
    REQUIRE(m != nullptr);
    CHECK(k["label"] == m->label);
    CHECK(k["unit"] == m->unit);
    CHECK(!std::string(m->label).empty());
    CHECK(!std::string(m->unit).empty());
    const json* at = metric_value(*m, result);
    REQUIRE(at != nullptr);
    CHECK(*at == k["value"]);
  }
  for (const json& row : result["ranked"])
    if (row.contains("key_metrics"))
      for (const json& k : row["key_metrics"]) {
        const std::string id = k["id"].get<std::string>();
        CAPTURE(id);
        const MetricInfo* m = find_metric(kind, id);
        REQUIRE(m != nullptr);
        CHECK(k["label"] == m->label);
        CHECK(k["unit"] == m->unit);
      }
}

}  // namespace

TEST_CASE("search questions: a value listed twice on an axis is a located error in both searches") {
  // The axes both searches have.
  for (const char* axis : {"tp", "pp"}) {
    CAPTURE(axis);
    json d = deployment_question(), t = training_question();
    d[axis] = json::array({2, 1, 2});
    t[axis] = json::array({2, 1, 2});
    check_listed_twice(deployment_error(d), std::string("/") + axis + "/2");
    check_listed_twice(training_error(t), std::string("/") + axis + "/2");
  }
  // The deployment search's own axes.
  const std::vector<std::pair<const char*, json>> deployment_axes = {
      {"max_num_seqs", json::array({64, 64})},
      {"chunked_prefill", json::array({true, true})},
      {"max_num_batched_tokens", json::array({2048, 2048})},
      {"chunk_size", json::array({512, 512})},
      {"weights", json::array({"bf16", "bf16"})},
      {"kv_cache", json::array({"fp8", "fp8"})},
      {"prefill_decode_ratio", json::array({"1:2", "1:2"})},
  };
  for (const auto& [axis, values] : deployment_axes) {
    const std::string name = axis;  // a plain local: CAPTURE's lambda may not capture a structured binding
    CAPTURE(name);
    json d = deployment_question();
    d[name] = values;
    check_listed_twice(deployment_error(d), "/" + name + "/1");
  }
  // "colocated" twice is a duplicate; 1:1 and 2:2 are different pool sizes.
  json d = deployment_question();
  d["prefill_decode_ratio"] = json::array({"colocated", "1:1", "colocated"});
  check_listed_twice(deployment_error(d), "/prefill_decode_ratio/2");
  d["prefill_decode_ratio"] = json::array({"1:1", "2:2"});
  CHECK(deployment_error(d).code == "(no error)");
  // The training search's own axes.
  const std::vector<std::pair<const char*, json>> training_axes = {
      {"cp", json::array({1, 1})},
      {"micro_batch", json::array({1, 1})},
      {"zero_stage", json::array({1, 1})},
      {"recompute", json::array({"full", "full"})},
      {"sequence_parallel", json::array({false, false})},
  };
  for (const auto& [axis, values] : training_axes) {
    const std::string name = axis;
    CAPTURE(name);
    json t = training_question();
    t[name] = values;
    check_listed_twice(training_error(t), "/" + name + "/1");
  }
  // Distinct values still plan once each.
  json ok = deployment_question();
  ok["tp"] = json::array({2, 1});
  CHECK(read_deployment_search(ok).tp == std::vector<int>{2, 1});
}

TEST_CASE("search questions: the deployment search's key metrics are catalogued with label and unit") {
  const DeploymentSearchSpec spec = read_deployment_search(deployment_question());
  const Plan plan = plan_deployment_search(spec);
  REQUIRE(!plan.candidates.empty());
  std::vector<CandidateOutcome> central;
  for (const json& s : plan.scenarios) central.push_back(evaluate_candidate(s, CostBound::Central));
  std::vector<CandidateOutcome> low, high;
  for (size_t i : interval_candidates(spec, plan, central)) {
    low.push_back(evaluate_candidate(plan.scenarios[i], CostBound::Low));
    high.push_back(evaluate_candidate(plan.scenarios[i], CostBound::High));
  }
  const json out = rank_deployment_search(spec, plan, central, low, high).to_json();
  REQUIRE(out["cheapest_meeting_slo"].is_object());
  check_catalogued(MetricKind::kDeploymentSearch, out);
  CHECK(std::string(metric_kind_name(MetricKind::kDeploymentSearch)) == out["kind"]);
}

TEST_CASE("search questions: the training search's key metrics are catalogued with label and unit") {
  const TrainingSearchSpec spec = read_training_search(training_question());
  const TrainPlan plan = plan_training_search(spec);
  std::vector<TrainOutcome> central;
  for (size_t i = 0; i < plan.candidates.size(); ++i)
    central.push_back(evaluate_training_candidate(spec, plan, i, CostBound::Central));
  std::vector<TrainOutcome> low, high;
  for (size_t i : training_interval_candidates(spec, plan, central)) {
    low.push_back(evaluate_training_candidate(spec, plan, i, CostBound::Low));
    high.push_back(evaluate_training_candidate(spec, plan, i, CostBound::High));
  }
  const json out = rank_training_search(spec, plan, central, low, high).to_json();
  REQUIRE(out["best"].is_object());
  check_catalogued(MetricKind::kTrainingSearch, out);
  CHECK(std::string(metric_kind_name(MetricKind::kTrainingSearch)) == out["kind"]);
}

// The questions' defaults are the specs' own (deployment_search.hpp,
// training_search.hpp; the budget question's cap is the capacity search's,
// serve::SearchSpec), and docs/search.md quotes them: a default changed in
// one place, or written again in a reader, fails here.
TEST_CASE("search questions: the readers' defaults are the specs', as docs/search.md quotes them") {
  const auto quoted = [](const std::string& s) { CHECK_MESSAGE(test::doc_quotes("docs/search.md", s), "docs/search.md does not quote: " << s); };
  json q = deployment_question();
  for (const char* key : {"requests", "max_requests", "replica_options", "max_interval_points"}) q.erase(key);
  const DeploymentSearchSpec d = read_deployment_search(q);
  const DeploymentSearchSpec spec_default;
  CHECK(d.requests == spec_default.requests);
  CHECK(d.max_requests == spec_default.max_requests);
  CHECK(d.replica_options == spec_default.replica_options);
  CHECK(d.max_interval_points == spec_default.max_interval_points);
  q.erase("target_qps");
  const DeploymentSearchSpec budget = read_deployment_search(q);
  CHECK(budget.max_requests == serve::SearchSpec{}.max_requests_per_run);
  quoted("`requests` (first run per candidate, " + std::to_string(d.requests) + "), `max_requests` (" +
         std::to_string(d.max_requests) + "; " + std::to_string(budget.max_requests) + " for the budget question), `replica_options` (" +
         std::to_string(d.replica_options) + "), `max_interval_points` (" + std::to_string(d.max_interval_points) + ")");

  const TrainingSearchSpec t = read_training_search(json{{"kind", "training_search"}, {"base", "T3.5"}});
  const TrainingSearchSpec t_default;
  CHECK(t.top == t_default.top);
  CHECK(t.max_interval_points == t_default.max_interval_points);
  const auto row = [&](const std::string& keys, const json& value) { quoted("| " + keys + " | `" + value.dump() + "` |"); };
  row("`tp`, `pp`", t.tp);
  CHECK(t.pp == t.tp);
  row("`cp`, `ep`", t.cp);
  CHECK(t.ep == t.cp);
  row("`micro_batch`", t.micro_batch);
  row("`virtual_stages`", t.virtual_stages);
  row("`recompute`", t.recompute);
  row("`zero_stage`", t.zero_stage);
  row("`sequence_parallel`", json(t.sequence_parallel));
  quoted("| `top`, `max_interval_points` | " + std::to_string(t.top) + ", " + std::to_string(t.max_interval_points) + " |");
}
