// The running-batch limit a software stack's engine sets when the scenario
// gives no serving.scheduler.max_num_seqs (perf/running_limit.hpp): vLLM V1
// takes 1024 on GPUs of 70 GiB or more except the A100, else 256; SGLang
// sizes it from its KV pool (min(tokens / 2, clamp(tokens / context x 512,
// 2048, 4096))); TensorRT-LLM's LLM API takes 2048 on every GPU; a stack
// without a rule (vllm-like, V0) keeps 256.
#include <doctest/doctest.h>

#include <string>

#include "hw/hardware.hpp"
#include "perf/host_overhead.hpp"
#include "perf/running_limit.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace {

RunningLimitRule stack_rule(const std::string& stack) {
  return *read_software_stack(json(stack), "/cost_model/software_stack").default_max_num_seqs;
}

json serving(const std::string& model, const std::string& gpu, int tp, const std::string& stack) {
  const std::string link = gpu.rfind("mi3", 0) == 0 ? "xgmi3-mesh8" : "nvlink4-nvswitch";
  return {{"schema_version", 1},
          {"model", model},
          {"hardware", {{"gpu", gpu}, {"gpus_per_node", 8}, {"intra_node", link}}},
          {"cost_model", {{"software_stack", stack}}},
          {"serving",
           {{"mode", "simulate"},
            {"parallelism", {{"tp", tp}}},
            {"workload",
             {{"arrival", {{"process", "poisson"}, {"rate_qps", 2}}},
              {"num_requests", 20},
              {"prompt_tokens", 128},
              {"output_tokens", 16}}}}}};
}

json deployment(const json& scenario) {
  const json r = test::run(scenario);
  REQUIRE_MESSAGE(r["ok"] == true, r.dump().substr(0, 400));
  return r["result"]["deployment"];
}

}  // namespace

TEST_CASE("running limit: vLLM V1 runs 1024 on GPUs of 70 GiB or more except the A100, else 256") {
  const RunningLimitRule v1 = stack_rule("vllm-v1-like");
  for (const char* gpu : {"h100-sxm", "h200", "b200", "mi300x", "h20"}) {
    CAPTURE(gpu);
    CHECK(running_limit(v1, read_gpu(json(gpu), "/g"), 0, 0) == 1024);
  }
  for (const char* gpu : {"a100-80g-sxm", "a100-40g-sxm", "l40s", "a10", "rtx-4090"}) {
    CAPTURE(gpu);
    CHECK(running_limit(v1, read_gpu(json(gpu), "/g"), 0, 0) == 256);
  }
  // A custom GPU typed with an H100's numbers takes the H100's limit: the rule reads memory and architecture.
  json custom = test::preset("gpus", "h100-sxm");
  custom["id"] = "my-gpu";
  CHECK(running_limit(v1, read_gpu(custom, "/g"), 0, 0) == 1024);
}

TEST_CASE("running limit: SGLang's request pool from its KV pool and context length") {
  const RunningLimitRule sg = stack_rule("sglang-overlap-like");
  const GpuSpec h200 = read_gpu(json("h200"), "/g");
  // 308,288 tokens of a 131,072-token context: int(1204.3) held up to 2048; tokens / 2 does not bind.
  CHECK(running_limit(sg, h200, 308288, 131072) == 2048);
  // A large pool of a short context: int(2,000,000 / 8192 x 512) = 125,000, held down to 4096.
  CHECK(running_limit(sg, h200, 2000000, 8192) == 4096);
  // Between the bounds: int(1,000,000 / 131,072 x 512) = 3906.
  CHECK(running_limit(sg, h200, 1000000, 131072) == 3906);
  // A small pool: half its tokens bind first.
  CHECK(running_limit(sg, h200, 3000, 4096) == 1500);
  // Monotone in the pool: more KV never runs fewer requests.
  int64_t last = 0;
  for (int64_t t = 1000; t < 5000000; t = t * 3 / 2) {
    const int64_t l = running_limit(sg, h200, t, 32768);
    CHECK(l >= last);
    last = l;
  }
}

TEST_CASE("running limit: TensorRT-LLM runs its LLM API's max_batch_size, 2048, on every GPU") {
  const RunningLimitRule trt = stack_rule("trtllm-like");
  for (const char* gpu : {"h100-sxm", "a100-80g-sxm", "l4", "b200", "mi300x"}) {
    CAPTURE(gpu);
    CHECK(running_limit(trt, read_gpu(json(gpu), "/g"), 1000, 8192) == 2048);
  }
  const json d = deployment(serving("llama-3-8b", "h100-sxm", 1, "trtllm-like"));
  CHECK(d["max_num_seqs"] == 2048);
  CHECK(d["max_num_seqs_source"].get<std::string>().find("rule fixed") != std::string::npos);
}

TEST_CASE("running limit: a scenario without max_num_seqs takes its stack's, and says so") {
  const json v1 = deployment(serving("llama-3-8b", "h100-sxm", 1, "vllm-v1-like"));
  CHECK(v1["max_num_seqs"] == 1024);
  CHECK(v1["max_num_seqs_source"].get<std::string>().find("vllm-v1-like") != std::string::npos);
  const json a100 = deployment(serving("llama-3-8b", "a100-80g-sxm", 1, "vllm-v1-like"));
  CHECK(a100["max_num_seqs"] == 256);
  const json sg = deployment(serving("llama-3.1-405b", "h200", 8, "sglang-overlap-like"));
  CHECK(sg["max_num_seqs"] == 2048);
  // vLLM V0 (vllm-like) has no rule: the generic 256, said nowhere.
  CHECK_FALSE(deployment(serving("llama-3-8b", "h100-sxm", 1, "vllm-like")).contains("max_num_seqs_source"));
  // The scenario's own value wins.
  json given = serving("llama-3-8b", "h100-sxm", 1, "vllm-v1-like");
  given["serving"]["scheduler"] = {{"max_num_seqs", 64}};
  CHECK_FALSE(deployment(given).contains("max_num_seqs_source"));
}

TEST_CASE("running limit: a model with recurrent state keeps the generic limit and says why") {
  const json d = deployment(serving("qwen3-next-80b-a3b", "h200", 2, "sglang-overlap-like"));
  CHECK(d["max_num_seqs"] == 256);
  CHECK(d["max_num_seqs_source"].get<std::string>().find("recurrent state") != std::string::npos);
}

TEST_CASE("running limit: pools whose GPUs take different limits run at the smallest, and the result says so") {
  json s = serving("llama-3-8b", "h100-sxm", 1, "vllm-v1-like");
  s["hardware"]["gpus_per_node"] = 2;
  s["serving"].erase("parallelism");
  s["serving"]["cluster"] = {{"pools",
                              {{{"name", "big"}, {"replicas", 1}, {"tp", 1}},
                               {{"name", "small"}, {"replicas", 1}, {"tp", 1}, {"gpu", "l40s"}}}}};
  const json d = deployment(s);
  CHECK(d["max_num_seqs"] == 256);
  CHECK(d["max_num_seqs_source"].get<std::string>().find("smallest of the pools") != std::string::npos);
}

TEST_CASE("running limit: a custom stack's rule is read strictly") {
  json stack = test::preset("stacks", "vllm-v1-like");
  stack["default_max_num_seqs"]["except_architectures"] = {"ampere", "amperee"};
  const json r = test::validate([&] {
    json s = serving("llama-3-8b", "h100-sxm", 1, "vllm-v1-like");
    s["cost_model"]["software_stack"] = stack;
    return s;
  }());
  REQUIRE(r["ok"] == false);
  CHECK(r["error"]["path"] == "/cost_model/software_stack/default_max_num_seqs/except_architectures/1");
  // A fixed rule takes its requests and nothing else.
  for (const json& bad : {json{{"rule", "fixed"}}, json{{"rule", "fixed"}, {"requests", 0}},
                          json{{"rule", "fixed"}, {"requests", 64}, {"large", 128}}}) {
    json st = test::preset("stacks", "trtllm-like");
    st["default_max_num_seqs"] = bad;
    json s = serving("llama-3-8b", "h100-sxm", 1, "trtllm-like");
    s["cost_model"]["software_stack"] = st;
    const json e = test::validate(s);
    REQUIRE(e["ok"] == false);
    CHECK(e["error"]["path"].get<std::string>().rfind("/cost_model/software_stack/default_max_num_seqs", 0) == 0);
  }
}
