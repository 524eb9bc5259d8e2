// A rate with a client-side cap (serving.workload.arrival.max_concurrency), as
// vLLM's benchmark_serving.py applies --request-rate with --max-concurrency.
// Properties: requests in flight never exceed the cap; arrivals keep the
// rate's drawn times unless the cap holds them, and a held request is sent
// the instant a request ends, in arrival order; a cap at or above the request
// count is the uncapped run exactly; a smaller cap never raises the
// throughput; a cap of 1 times each request from its send (every TTFT the
// batch-1 TTFT); bad inputs give located errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "scenario/scenario.hpp"
#include "serve/simulation.hpp"
#include "request_outcomes.hpp"
#include "test_helpers.hpp"

using namespace sightline;
using sightline::test::json;
using sightline::test::most_in_flight;
using sightline::test::expect_validation_error;
using sightline::test::result_at_batch1_ttft;
using sightline::test::result_of_run;
using sightline::test::outcomes_run_to_end;

namespace {

// Llama-2-7B on one A100, at most 8 sequences in a batch, Poisson arrivals at
// 40 req/s: far above what it serves, so a cap binds. Lengths vary so
// requests end out of order. cap 0: no cap.
json capped_rate(int64_t cap, int64_t requests = 48) {
  json s = json::parse(R"({"schema_version":1,"seed":11,"model":"llama-2-7b",
    "hardware":{"gpu":"a100-80g-sxm","gpus_per_node":1},
    "precision":{"weights":"bf16","activations":"bf16","kv_cache":"bf16"},
    "serving":{"mode":"simulate","scheduler":{"max_num_seqs":8},
      "workload":{"arrival":{"process":"poisson","rate_qps":40},
      "prompt_tokens":{"dist":"uniform","min":64,"max":512},"output_tokens":{"dist":"uniform","min":8,"max":64}}}})");
  if (cap > 0) s["serving"]["workload"]["arrival"]["max_concurrency"] = cap;
  s["serving"]["workload"]["num_requests"] = requests;
  return s;
}

// Completed requests per second from the first send to the last end.
double capped_requests_per_s(const std::vector<serve::RequestOutcome>& out) {
  serve::TimeNs first = out.front().arrival, last = 0;
  for (const auto& o : out) {
    first = std::min(first, o.arrival);
    last = std::max(last, o.completion);
  }
  return static_cast<double>(out.size()) / (static_cast<double>(last - first) * 1e-9);
}

}  // namespace

TEST_CASE("client cap: never more than N in flight; a held request is sent the instant one ends, in arrival order") {
  const auto drawn = outcomes_run_to_end(capped_rate(0));  // the rate's arrival times, uncapped
  CHECK(most_in_flight(drawn) > 8);             // without a cap, 40 req/s piles up
  for (int64_t n : {1, 3, 8}) {
    CAPTURE(n);
    const auto out = outcomes_run_to_end(capped_rate(n));
    REQUIRE(out.size() == drawn.size());
    CHECK(most_in_flight(out) == n);
    std::vector<serve::TimeNs> ends;
    for (const auto& o : out) ends.push_back(o.completion);
    std::sort(ends.begin(), ends.end());
    int64_t held = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      CAPTURE(i);
      CHECK(out[i].arrival >= drawn[i].arrival);  // never sent before its time
      if (i > 0) CHECK(out[i].arrival >= out[i - 1].arrival);  // first come, first sent
      if (out[i].arrival != drawn[i].arrival) {
        ++held;
        CHECK(std::binary_search(ends.begin(), ends.end(), out[i].arrival));
      }
    }
    CHECK(held > 0);
  }
}

TEST_CASE("client cap: a cap at or above the request count is the uncapped run, request for request and byte for byte") {
  const auto free_run = outcomes_run_to_end(capped_rate(0, 40));
  const json free_result = result_of_run(capped_rate(0, 40));
  for (int64_t cap : {40, 1000}) {
    CAPTURE(cap);
    const auto out = outcomes_run_to_end(capped_rate(cap, 40));
    REQUIRE(out.size() == free_run.size());
    for (size_t i = 0; i < out.size(); ++i) {
      CHECK(out[i].arrival == free_run[i].arrival);
      CHECK(out[i].first_token == free_run[i].first_token);
      CHECK(out[i].completion == free_run[i].completion);
    }
    const json r = result_of_run(capped_rate(cap, 40));
    CHECK(r["metrics"].dump() == free_result["metrics"].dump());
    CHECK(r["headline"].dump() == free_result["headline"].dump());
    CHECK(r["workload"]["max_concurrency"] == cap);
    CHECK(r["workload"]["requests_waited_at_client"] == 0);
  }
}

TEST_CASE("client cap: a smaller cap never raises the throughput") {
  const std::vector<int64_t> caps = {1, 2, 4, 8, 16, 0};  // 0: none
  std::vector<double> rate;
  for (int64_t c : caps) rate.push_back(capped_requests_per_s(outcomes_run_to_end(capped_rate(c))));
  for (size_t i = 1; i < caps.size(); ++i) {
    CAPTURE(caps[i]);
    CHECK(rate[i - 1] <= rate[i] * (1 + 1e-12));
  }
  CHECK(rate.front() < 0.5 * rate.back());  // one at a time is far slower than a batch of 8
}

TEST_CASE("client cap: a cap of 1 times each request from its send (every TTFT the batch-1 TTFT)") {
  const json capped = result_at_batch1_ttft(capped_rate(1, 12));
  CHECK(capped["workload"]["rate_qps"] == 40);
  CHECK(capped["workload"]["max_concurrency"] == 1);
  CHECK(capped["workload"]["requests_waited_at_client"].get<int64_t>() > 0);
  // The backlog waits at the client: the server's queue stays bounded, no overload verdict.
  CHECK_FALSE(capped["headline"].value("overloaded", false));
}

TEST_CASE("client cap: located errors") {
  const char* at = "/serving/workload/arrival/max_concurrency";
  json s = capped_rate(0);
  s["serving"]["workload"]["arrival"]["max_concurrency"] = 0;
  expect_validation_error(s, "out_of_range", at);
  s["serving"]["workload"]["arrival"]["max_concurrency"] = 2.5;
  expect_validation_error(s, "type_error", at);
  for (const char* process : {"closed_loop", "all_at_once"}) {
    CAPTURE(process);
    s = capped_rate(4);
    s["serving"]["workload"]["arrival"]["process"] = process;
    s["serving"]["workload"]["arrival"].erase("rate_qps");
    if (std::string(process) == "closed_loop") s["serving"]["workload"]["arrival"]["concurrency"] = 2;
    expect_validation_error(s, "unknown_key", at);
  }
  s = capped_rate(4);
  s["serving"]["slo"] = {{"ttft_ms", 500}};
  s["serving"]["steady_state"] = json::object();
  expect_validation_error(s, "constraint_violation", "/serving/steady_state");
  s = capped_rate(4);
  s["serving"]["slo"] = {{"ttft_ms", 500}};
  s["serving"]["max_qps_search"] = json::object();
  expect_validation_error(s, "constraint_violation", "/serving/max_qps_search");
  s = json::parse(R"({"schema_version":1,"model":"llama-2-7b","hardware":{"gpu":"a100-80g-sxm","gpus_per_node":1},
    "serving":{"mode":"simulate","workload":{"arrival":{"process":"poisson","rate_qps":2,"max_concurrency":2},"num_sessions":4,
      "sessions":{"turns":2,"first_input_tokens":100,"input_tokens":50,"output_tokens":20,"think_time_s":1}}}})");
  expect_validation_error(s, "constraint_violation", at);
}
