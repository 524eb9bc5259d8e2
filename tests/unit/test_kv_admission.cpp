// When a prompt may enter the KV cache (serving.kv_cache.admission, a stack's
// default_kv_admission): on demand (vLLM, SGLang: its first chunk's blocks,
// growing after, preempted when the pool runs out) or to completion
// (TensorRT-LLM's GUARANTEED_NO_EVICT: the blocks of its whole prompt and
// output, held until it ends, so nothing is ever preempted).
#include <doctest/doctest.h>

#include <string>

#include "core/json_reader.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace {

// Llama-3-8B on one L4: about 40k tokens of KV, so 60 requests of 512 + 512
// tokens arriving at once cannot all run.
json kv_bound(const std::string& stack, const json& kv_cache) {
  json s = {{"schema_version", 1},
            {"seed", 5},
            {"model", "llama-3-8b"},
            {"hardware", {{"gpu", "l4"}, {"gpus_per_node", 1}}},
            {"cost_model", {{"software_stack", stack}}},
            {"serving",
             {{"mode", "simulate"},
              {"workload",
               {{"arrival", {{"process", "all_at_once"}}},
                {"num_requests", 60},
                {"prompt_tokens", 512},
                {"output_tokens", 512}}}}}};
  if (!kv_cache.is_null()) s["serving"]["kv_cache"] = kv_cache;
  return s;
}

json error_of(const json& scenario) {
  const json e = test::envelope(api::run_scenario_central_only(scenario.dump()));
  REQUIRE(e["ok"] == false);
  return e["error"];
}

}  // namespace

TEST_CASE("kv admission: to completion runs only what its blocks can finish, and never preempts") {
  const json reserved = test::central_result(kv_bound("vllm-like", {{"admission", "to_completion"}}));
  const json on_demand = test::central_result(kv_bound("vllm-like", {{"admission", "on_demand"}}));
  const json& kv = reserved["metrics"]["kv_cache"];
  // Each request holds ceil((512 + 512) / 16) = 64 blocks from its admission.
  const int64_t finishable = kv["blocks_total"].get<int64_t>() / 64;
  REQUIRE(finishable < 60);  // the scenario is KV-bound
  CHECK(reserved["metrics"]["concurrency"]["running_max"].get<int64_t>() <= finishable);
  CHECK(kv["preemptions"] == 0);
  CHECK(reserved["metrics"]["requests"]["completed"] == 60);
  // On demand, more start than can finish together, and some are preempted.
  CHECK(on_demand["metrics"]["concurrency"]["running_max"].get<int64_t>() > finishable);
  CHECK(on_demand["metrics"]["kv_cache"]["preemptions"].get<int64_t>() > 0);
  CHECK(reserved["deployment"]["kv_admission"] == "to_completion");
  CHECK_FALSE(on_demand["deployment"].contains("kv_admission"));
}

TEST_CASE("kv admission: to completion never preempts, whatever the lengths, policy or speculation") {
  for (int seed = 1; seed <= 4; ++seed) {
    for (const char* policy : {"continuous", "chunked_prefill"}) {
      CAPTURE(seed);
      CAPTURE(policy);
      json s = kv_bound("vllm-like", {{"admission", "to_completion"}});
      s["seed"] = seed;
      s["serving"]["workload"]["num_requests"] = 40;
      s["serving"]["workload"]["prompt_tokens"] = {{"dist", "uniform"}, {"min", 16}, {"max", 3000}};
      s["serving"]["workload"]["output_tokens"] = {{"dist", "uniform"}, {"min", 1}, {"max", 3000}};
      s["serving"]["scheduler"] = {{"policy", policy}};
      if (seed % 2 == 0) s["serving"]["speculative"] = {{"method", "ngram"}, {"k", 4}, {"acceptance_rate", 0.6}};
      const json r = test::central_result(s);
      CHECK(r["metrics"]["kv_cache"]["preemptions"] == 0);
      CHECK(r["metrics"]["requests"]["completed"] == 40);
    }
  }
}

TEST_CASE("kv admission: a disaggregated decode pool reserves to completion too") {
  json s = kv_bound("trtllm-like", nullptr);
  s["hardware"]["gpus_per_node"] = 2;
  s["hardware"]["intra_node"] = "pcie4";
  s["serving"]["cluster"] = {{"pools",
                              {{{"name", "p"}, {"replicas", 1}, {"tp", 1}, {"role", "prefill"}},
                               {{"name", "d"}, {"replicas", 1}, {"tp", 1}, {"role", "decode"}}}}};
  const json r = test::central_result(s);
  CHECK(r["deployment"]["kv_admission"] == "to_completion");
  CHECK(r["metrics"]["kv_cache"]["preemptions"] == 0);
  CHECK(r["metrics"]["requests"]["completed"] == 60);
}

TEST_CASE("kv admission: a scenario naming none takes its stack's, and says so; its own wins") {
  const json trt = test::central_result(kv_bound("trtllm-like", nullptr));
  CHECK(trt["deployment"]["kv_admission"] == "to_completion");
  CHECK(trt["deployment"]["kv_admission_source"].get<std::string>().find("'trtllm-like'") != std::string::npos);
  CHECK(trt["metrics"]["kv_cache"]["preemptions"] == 0);
  const json own = test::central_result(kv_bound("trtllm-like", {{"admission", "on_demand"}}));
  CHECK_FALSE(own["deployment"].contains("kv_admission"));
  CHECK_FALSE(own["deployment"].contains("kv_admission_source"));
  CHECK(own["metrics"]["kv_cache"]["preemptions"].get<int64_t>() > 0);
  // Contiguous allocation reserves max_model_len already: the stack's admission does not apply.
  const json contiguous = test::central_result(kv_bound("trtllm-like", {{"allocation", "contiguous"}}));
  CHECK_FALSE(contiguous["deployment"].contains("kv_admission"));
  // A stack without one takes blocks on demand.
  const json vllm = test::central_result(kv_bound("vllm-like", nullptr));
  CHECK_FALSE(vllm["deployment"].contains("kv_admission"));
  CHECK(vllm["metrics"]["kv_cache"]["preemptions"].get<int64_t>() > 0);
}

TEST_CASE("kv admission: wrong admissions are located errors, in the scenario and in a custom stack") {
  CHECK(error_of(kv_bound("vllm-like", {{"admission", "guaranteed_no_evict"}}))["path"] ==
        "/serving/kv_cache/admission");
  CHECK(error_of(kv_bound("vllm-like", {{"admission", "to_completion"}, {"allocation", "contiguous"}}))["path"] ==
        "/serving/kv_cache/admission");
  json stack = test::preset("stacks", "trtllm-like");
  stack["id"] = "my-stack";
  const auto stack_error = [&](const json& d) {
    json st = stack;
    st["default_kv_admission"] = d;
    json s = kv_bound("vllm-like", nullptr);
    s["cost_model"]["software_stack"] = st;
    return error_of(s);
  };
  json d = stack["default_kv_admission"];
  d["admission"] = "no_evict";
  CHECK(stack_error(d)["path"] == "/cost_model/software_stack/default_kv_admission/admission");
  d = stack["default_kv_admission"];
  d.erase("admission");
  CHECK(stack_error(d)["path"] == "/cost_model/software_stack/default_kv_admission/admission");
  d = stack["default_kv_admission"];
  d["policy"] = "to_completion";
  CHECK(stack_error(d)["path"] == "/cost_model/software_stack/default_kv_admission/policy");
  // The preset typed out under another id runs as the preset.
  json s = kv_bound("trtllm-like", nullptr);
  const json preset_run = test::central_result(s);
  s["cost_model"]["software_stack"] = stack;
  const json typed = test::central_result(s);
  CHECK(typed["metrics"]["throughput"] == preset_run["metrics"]["throughput"]);
  CHECK(typed["deployment"]["kv_admission"] == "to_completion");
}
