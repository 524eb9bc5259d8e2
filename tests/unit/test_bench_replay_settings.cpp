// A benchmark run's server settings that the file records are replayed as the
// server ran them, not as the base scenario says (fit/calibration_fit_replay).
#include <doctest/doctest.h>

#include "fit/calibration_fit_replay.hpp"
#include "scenario/scenario.hpp"

using namespace sightline;

namespace {

fit::BenchRun closed_loop_run() {
  fit::BenchRun r;
  r.format = "vllm";
  r.file = "summary.json";
  r.load = "closed_loop";
  r.concurrency = 2;
  r.requests = 8;
  r.prompt_tokens_mean = 32;
  r.output_tokens_mean = 16;
  return r;
}

json serving_base() {
  return {{"model", "llama-2-7b"},
          {"serving", {{"scheduler", {{"max_num_seqs", 256}}}, {"workload", json::object()}}}};
}

}  // namespace

TEST_CASE("fit replay: a server's max_num_seqs recorded in the file replaces the base's") {
  fit::BenchRun r = closed_loop_run();
  r.server_max_num_seqs = 4;
  const json s = fit::scenario_for_bench_run(serving_base(), r, nullptr);
  CHECK(s["serving"]["scheduler"]["max_num_seqs"] == 4);
}

TEST_CASE("fit replay: without a recorded max_num_seqs the base's stays") {
  const json s = fit::scenario_for_bench_run(serving_base(), closed_loop_run(), nullptr);
  CHECK(s["serving"]["scheduler"]["max_num_seqs"] == 256);
}

TEST_CASE("fit replay: a server's scheduler and KV settings are written at their scenario keys") {
  fit::BenchRun r = closed_loop_run();
  r.server_settings = {{"kv_cache", "block_size", 1, "/server_info/page_size"},
                       {"scheduler", "max_num_batched_tokens", 8192, "/server_info/chunked_prefill_size"}};
  const json s = fit::scenario_for_bench_run(serving_base(), r, nullptr);
  CHECK(s["serving"]["kv_cache"]["block_size"] == 1);
  CHECK(s["serving"]["scheduler"]["max_num_batched_tokens"] == 8192);
  CHECK(s["serving"]["scheduler"]["max_num_seqs"] == 256);  // the base's where the file says nothing
  // Under the chunked_prefill policy the prefill token budget is its chunk_size.
  json chunked = serving_base();
  chunked["serving"]["scheduler"]["policy"] = "chunked_prefill";
  const json c = fit::scenario_for_bench_run(chunked, r, nullptr);
  CHECK(c["serving"]["scheduler"]["chunk_size"] == 8192);
  CHECK_FALSE(c["serving"]["scheduler"].contains("max_num_batched_tokens"));
}

TEST_CASE("fit replay: an MLPerf run hands the engine token ids, a serving benchmark's text is tokenized") {
  // LoadGen's data sets ship tokenized; vLLM's and SGLang's serving benchmarks
  // send text that the server's front end tokenizes (docs/serving.md, "From
  // arrival to first token"). The base names no stack: the default's figure.
  fit::BenchRun r = closed_loop_run();
  r.load = "rate";
  r.rate_qps = 2;
  json base = serving_base();
  base["hardware"] = {{"gpu", "a100-80g-sxm"}, {"gpus_per_node", 1}};
  const Scenario text = read_scenario(fit::scenario_for_bench_run(base, r, nullptr));
  CHECK(text.cost_model.software_stack.tokenize_us_per_token > 0);
  r.format = "mlperf";
  const Scenario ids = read_scenario(fit::scenario_for_bench_run(base, r, nullptr));
  CHECK(ids.cost_model.software_stack.tokenize_us_per_token == 0);
  // Nothing else of the stack changes.
  json other = ids.cost_model.software_stack.to_json();
  other["tokenize_us_per_token"] = text.cost_model.software_stack.tokenize_us_per_token;
  CHECK(other == text.cost_model.software_stack.to_json());
}
