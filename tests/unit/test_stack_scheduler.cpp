// The scheduler a software stack's engine runs when the scenario names no
// policy (perf/default_scheduler.hpp, scenario/stack_scheduler.cpp): vLLM V1
// chunks prompts into 8192 tokens a step on GPUs of 70 GiB or more except
// the A100, else 2048, its running requests first; SGLang chunks at 2048 /
// 4096 / 8192 / 16384 tokens by the GPU's memory and runs a prompt's chunks
// in steps of their own (prefill_alone); a stack without one (vllm-like,
// V0) keeps the generic continuous policy.
#include <doctest/doctest.h>

#include <string>

#include "hw/hardware.hpp"
#include "perf/host_overhead.hpp"
#include "scenario/simulation_sections.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace {

StackScheduler stack_scheduler(const std::string& stack) {
  return *read_software_stack(json(stack), "/cost_model/software_stack").default_scheduler;
}

int64_t budget_on(const StackScheduler& s, const std::string& gpu) {
  return s.chunk_size->on(read_gpu(json(gpu), "/g"));
}

json serving(const std::string& gpu, const std::string& stack, const json& scheduler) {
  json s = {{"schema_version", 1},
            {"seed", 3},
            {"model", "llama-3-8b"},
            {"hardware", {{"gpu", gpu}, {"gpus_per_node", 1}}},
            {"cost_model", {{"software_stack", stack}}},
            {"serving",
             {{"mode", "simulate"},
              {"workload",
               {{"arrival", {{"process", "poisson"}, {"rate_qps", 8}}},
                {"num_requests", 120},
                {"prompt_tokens", {{"dist", "uniform"}, {"min", 200}, {"max", 3000}}},
                {"output_tokens", 64}}},
              {"outputs", {{"trace", true}, {"trace_max_steps", 100000}}}}}};
  if (!scheduler.is_null()) s["serving"]["scheduler"] = scheduler;
  return s;
}

// Steps that took both prompt tokens and decodes, over every step.
struct StepKinds {
  int mixed = 0, prefill = 0, decode = 0;
};
StepKinds step_kinds(const json& result) {
  StepKinds k;
  for (const json& ev : result["trace"]["traceEvents"]) {
    if (ev["ph"] != "X" || ev["cat"] != "step") continue;
    const bool p = ev["args"]["prefill_tokens"].get<int64_t>() > 0, d = ev["args"]["decode_tokens"].get<int64_t>() > 0;
    (p && d ? k.mixed : p ? k.prefill : k.decode) += 1;
  }
  return k;
}

}  // namespace

TEST_CASE("stack scheduler: vLLM V1 chunks 8192 tokens a step on GPUs of 70 GiB or more except the A100, else 2048") {
  const StackScheduler v1 = stack_scheduler("vllm-v1-like");
  CHECK(v1.policy == "chunked_prefill");
  CHECK(v1.priority == "decode_first");
  for (const char* gpu : {"h100-sxm", "h200", "b200", "mi300x", "h20"}) {
    CAPTURE(gpu);
    CHECK(budget_on(v1, gpu) == 8192);
  }
  for (const char* gpu : {"a100-80g-sxm", "a100-40g-sxm", "l40s", "a10", "rtx-4090", "l4"}) {
    CAPTURE(gpu);
    CHECK(budget_on(v1, gpu) == 2048);
  }
  // A custom GPU typed with an H100's numbers takes the H100's budget: the rule reads memory and architecture.
  json custom = test::preset("gpus", "h100-sxm");
  custom["id"] = "my-gpu";
  CHECK(v1.chunk_size->on(read_gpu(custom, "/g")) == 8192);
}

TEST_CASE("stack scheduler: SGLang's chunk by GPU memory, never smaller on a larger GPU") {
  const StackScheduler sg = stack_scheduler("sglang-overlap-like");
  CHECK(sg.policy == "chunked_prefill");
  CHECK(sg.priority == "prefill_alone");
  CHECK(budget_on(sg, "a10") == 2048);
  CHECK(budget_on(sg, "rtx-4090") == 2048);
  CHECK(budget_on(sg, "a100-40g-sxm") == 4096);
  CHECK(budget_on(sg, "l40s") == 4096);
  CHECK(budget_on(sg, "h100-sxm") == 8192);
  CHECK(budget_on(sg, "a100-80g-sxm") == 8192);  // SGLang makes no exception for the A100
  CHECK(budget_on(sg, "h200") == 8192);
  CHECK(budget_on(sg, "b200") == 16384);
  CHECK(budget_on(sg, "mi300x") == 16384);
  json g = test::preset("gpus", "h100-sxm");
  int64_t last = 0;
  for (double mem = 8; mem < 400; mem *= 1.3) {
    g["memory_GiB"] = mem;
    const int64_t b = sg.chunk_size->on(read_gpu(g, "/g"));
    CHECK(b >= last);
    last = b;
  }
}

TEST_CASE("stack scheduler: a scenario without a policy runs its stack's, and says so") {
  const json v1 = test::central_result(serving("h100-sxm", "vllm-v1-like", nullptr));
  CHECK(v1["deployment"]["scheduler"] == "chunked_prefill");
  CHECK(v1["deployment"]["priority"] == "decode_first");
  CHECK(v1["deployment"]["scheduler_source"].get<std::string>().find("8192 tokens a step") != std::string::npos);
  // On an A100 the budget is the small one.
  const json a100 = test::central_result(serving("a100-80g-sxm", "vllm-v1-like", nullptr));
  CHECK(a100["deployment"]["scheduler_source"].get<std::string>().find("2048 tokens a step") != std::string::npos);
  // The scenario's own policy wins, and runs its own priority; nothing is said of the stack.
  const json own = test::central_result(serving("h100-sxm", "vllm-v1-like", {{"policy", "continuous"}}));
  CHECK(own["deployment"]["scheduler"] == "continuous");
  CHECK(own["deployment"]["priority"] == "prefill_first");
  CHECK_FALSE(own["deployment"].contains("scheduler_source"));
  // The stack's policy named by the scenario keeps the stack's priority and budget unless given.
  const json named = test::central_result(serving("h100-sxm", "sglang-overlap-like", {{"policy", "chunked_prefill"}}));
  CHECK(named["deployment"]["priority"] == "prefill_alone");
  const json chunk = test::central_result(serving("h100-sxm", "sglang-overlap-like", {{"chunk_size", 512}}));
  CHECK(chunk["deployment"]["scheduler"] == "chunked_prefill");
  // A stack without a default scheduler keeps the generic continuous policy.
  const json v0 = test::central_result(serving("h100-sxm", "vllm-like", nullptr));
  CHECK(v0["deployment"]["scheduler"] == "continuous");
  CHECK_FALSE(v0["deployment"].contains("scheduler_source"));
}

TEST_CASE("stack scheduler: TensorRT-LLM runs decodes first and whole prompts in what they leave, 8192 tokens a step") {
  const StackScheduler trt = stack_scheduler("trtllm-like");
  CHECK(trt.policy == "continuous");
  CHECK(trt.priority == "decode_first");
  CHECK_FALSE(trt.chunk_size);
  for (const char* gpu : {"h100-sxm", "a100-40g-sxm", "l4", "b200", "mi300x"}) {
    CAPTURE(gpu);
    CHECK(trt.max_num_batched_tokens->on(read_gpu(json(gpu), "/g")) == 8192);
  }
  const json r = test::central_result(serving("h100-sxm", "trtllm-like", nullptr));
  CHECK(r["deployment"]["scheduler"] == "continuous");
  CHECK(r["deployment"]["priority"] == "decode_first");
  CHECK(r["deployment"]["scheduler_source"].get<std::string>().find("8192 tokens a step") != std::string::npos);
  // In-flight batching: steps with decodes and whole prompts, never a prompt split.
  const StepKinds k = step_kinds(r);
  CHECK(k.mixed > 0);
  CHECK(r["metrics"]["requests"]["completed"] == 120);
  // A prompt longer than the budget is refused, as TensorRT-LLM's LLM API refuses it.
  json long_prompts = serving("h100-sxm", "trtllm-like", nullptr);
  long_prompts["model"] = "qwen2.5-7b";  // 32k context
  long_prompts["serving"]["workload"]["prompt_tokens"] = 9000;
  CHECK(test::central_result(long_prompts)["metrics"]["requests"]["dropped"] == 120);
  // The scenario's budget wins; without the stack's policy, the generic one runs.
  const json own = test::central_result(serving("h100-sxm", "trtllm-like", {{"max_num_batched_tokens", 4096}}));
  CHECK(own["deployment"]["priority"] == "decode_first");
  const json v0 = test::central_result(serving("h100-sxm", "vllm-like", nullptr));
  CHECK(v0["deployment"]["priority"] == "prefill_first");
}

TEST_CASE("stack scheduler: prefill_alone takes no decodes in a step with prompt tokens") {
  // The same arrivals under the three priorities of chunked prefill: only
  // prefill_alone never mixes, and its decodes wait for steps without prompts.
  json sched = {{"policy", "chunked_prefill"}, {"chunk_size", 2048}};
  StepKinds kinds[3];
  const char* priorities[3] = {"prefill_alone", "prefill_first", "decode_first"};
  for (int i = 0; i < 3; ++i) {
    sched["priority"] = priorities[i];
    const json r = test::central_result(serving("h100-sxm", "vllm-like", sched));
    CHECK(r["metrics"]["requests"]["completed"] == 120);
    kinds[i] = step_kinds(r);
  }
  CHECK(kinds[0].mixed == 0);
  CHECK(kinds[0].prefill > 0);
  CHECK(kinds[0].decode > 0);
  CHECK(kinds[1].mixed > 0);
  CHECK(kinds[2].mixed > 0);
  // Unchunked, prefill_alone is prefill_first: the same run.
  json cont = {{"policy", "continuous"}, {"priority", "prefill_alone"}};
  const json alone = test::central_result(serving("h100-sxm", "vllm-like", cont));
  cont["priority"] = "prefill_first";
  const json first = test::central_result(serving("h100-sxm", "vllm-like", cont));
  CHECK(alone["metrics"] == first["metrics"]);
}

TEST_CASE("stack scheduler: a custom stack's default_scheduler is read strictly, errors located at its keys") {
  json stack = test::preset("stacks", "vllm-v1-like");
  stack["id"] = "my-stack";
  const auto error_of = [&](const json& d) {
    json st = stack;
    st["default_scheduler"] = d;
    json s = serving("h100-sxm", "vllm-like", nullptr);
    s["cost_model"]["software_stack"] = st;
    const json e = test::envelope(api::run_scenario_central_only(s.dump()));
    REQUIRE(e["ok"] == false);
    return e["error"];
  };
  const json good = stack["default_scheduler"];
  json d = good;
  d["policy"] = "chunky";
  CHECK(error_of(d)["path"] == "/cost_model/software_stack/default_scheduler/policy");
  d = good;
  d["policy"] = "static";
  CHECK(error_of(d)["path"] == "/cost_model/software_stack/default_scheduler/policy");
  d = good;
  d["priority"] = "decodes_first";
  CHECK(error_of(d)["path"] == "/cost_model/software_stack/default_scheduler/priority");
  d = good;
  d.erase("chunk_size");
  CHECK(error_of(d)["path"] == "/cost_model/software_stack/default_scheduler/chunk_size");
  d = good;
  d["policy"] = "continuous";
  CHECK(error_of(d)["path"] == "/cost_model/software_stack/default_scheduler/chunk_size");
  d = good;
  d["chunk_size"]["tiers"] = json::array({{{"below_GiB", 70}, {"tokens", 2048}}, {{"below_GiB", 40}, {"tokens", 1024}}});
  CHECK(error_of(d)["path"] == "/cost_model/software_stack/default_scheduler/chunk_size/tiers/1/below_GiB");
  d = good;
  d["chunk_size"]["otherwise"] = 0;
  CHECK(error_of(d)["path"] == "/cost_model/software_stack/default_scheduler/chunk_size/otherwise");
  d = good;
  d["chunk_size"]["small_architectures"] = json::array({"amperes"});
  CHECK(error_of(d)["path"].get<std::string>().rfind("/cost_model/software_stack/default_scheduler/chunk_size/small_architectures", 0) == 0);
  d = good;
  d["max_num_batched_tokens"] = {{"tiers", json::array()}, {"otherwise", 8192}};
  CHECK(error_of(d)["path"] == "/cost_model/software_stack/default_scheduler/max_num_batched_tokens");
  d = good;
  d["mixed"] = true;
  CHECK(error_of(d)["path"] == "/cost_model/software_stack/default_scheduler/mixed");
}

TEST_CASE("stack scheduler: the policy run is the scenario's, else the stack's, else continuous; pools run the smallest") {
  CHECK(serve::scheduler_policy_run("static", "chunked_prefill") == "static");
  CHECK(serve::scheduler_policy_run("", "chunked_prefill") == "chunked_prefill");
  CHECK(serve::scheduler_policy_run("", "") == "continuous");
  serve::ClusterSpec cluster;
  cluster.pools.resize(3);
  const std::vector<int64_t> figures = {8192, 2048, 8192};
  size_t next = 0;
  const serve::SmallestOverPools mixed =
      serve::smallest_over_pools(cluster, [&](const serve::PoolSpec&) { return figures[next++]; });
  CHECK(mixed.value == 2048);
  CHECK(mixed.pools_differ);
  const serve::SmallestOverPools alike = serve::smallest_over_pools(cluster, [](const serve::PoolSpec&) { return int64_t{512}; });
  CHECK(alike.value == 512);
  CHECK_FALSE(alike.pools_differ);
}
