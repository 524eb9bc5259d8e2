// Closed-loop clients (serving.workload.arrival.process "closed_loop"): N
// clients, each sending its next request when its previous one ends (plus a
// think time), as a benchmark's --max-concurrency does. Properties: requests in
// flight never exceed N and reach it; every later request arrives exactly when
// an earlier one ends (+ think time); throughput rises with N until the
// engine's batch is full, then stays; one client sees the batch-1 TTFT; the
// same scenario gives the same result; bad inputs give located errors.
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

// Llama-2-7B on one A100, at most 8 sequences in a batch; lengths vary so
// requests end out of order.
json closed_loop(int64_t clients, int64_t requests = 48, double think_s = 0) {
  json s = json::parse(R"({"schema_version":1,"seed":5,"model":"llama-2-7b",
    "hardware":{"gpu":"a100-80g-sxm","gpus_per_node":1},
    "precision":{"weights":"bf16","activations":"bf16","kv_cache":"bf16"},
    "serving":{"mode":"simulate","scheduler":{"max_num_seqs":8},
      "workload":{"arrival":{"process":"closed_loop"},
      "prompt_tokens":{"dist":"uniform","min":64,"max":512},"output_tokens":{"dist":"uniform","min":8,"max":64}}}})");
  s["serving"]["workload"]["arrival"]["concurrency"] = clients;
  if (think_s > 0) s["serving"]["workload"]["arrival"]["think_time_s"] = think_s;
  s["serving"]["workload"]["num_requests"] = requests;
  return s;
}

double requests_per_s(const std::vector<serve::RequestOutcome>& out) {
  serve::TimeNs end = 0;
  for (const auto& o : out) end = std::max(end, o.completion);
  return static_cast<double>(out.size()) / (static_cast<double>(end) * 1e-9);
}

}  // namespace

TEST_CASE("closed loop: never more than N requests in flight, N reached, each later request sent as one ends") {
  for (int64_t n : {1, 3, 8, 20}) {
    CAPTURE(n);
    const auto out = outcomes_run_to_end(closed_loop(n));
    REQUIRE(out.size() == 48);
    CHECK(most_in_flight(out) == n);
    std::vector<serve::TimeNs> ends;
    for (const auto& o : out) ends.push_back(o.completion);
    std::sort(ends.begin(), ends.end());
    int64_t at_start = 0;
    for (const auto& o : out) {
      if (o.arrival == 0) {
        ++at_start;
        continue;
      }
      // Sent the instant some earlier request ended (think time 0).
      CHECK(std::binary_search(ends.begin(), ends.end(), o.arrival));
    }
    CHECK(at_start == n);
  }
}

TEST_CASE("closed loop: a think time separates a request's end from the next request") {
  const double think_s = 0.25;
  const auto out = outcomes_run_to_end(closed_loop(4, 24, think_s));
  CHECK(most_in_flight(out) <= 4);
  std::vector<serve::TimeNs> ends;
  for (const auto& o : out) ends.push_back(o.completion + static_cast<serve::TimeNs>(think_s * 1e9));
  std::sort(ends.begin(), ends.end());
  for (const auto& o : out)
    if (o.arrival > 0) CHECK(std::binary_search(ends.begin(), ends.end(), o.arrival));
  // The pause slows the clients: fewer requests per second than without it.
  CHECK(requests_per_s(out) < requests_per_s(outcomes_run_to_end(closed_loop(4, 24))));
}

TEST_CASE("closed loop: throughput rises with the clients until the batch is full, then stays") {
  std::vector<double> rate;
  const std::vector<int64_t> clients = {1, 2, 4, 8, 16, 32};
  for (int64_t n : clients) rate.push_back(requests_per_s(outcomes_run_to_end(closed_loop(n, 96))));
  for (size_t i = 1; i < clients.size(); ++i) {
    CAPTURE(clients[i]);
    if (clients[i] <= 8) CHECK(rate[i] > 1.2 * rate[i - 1]);   // another client fills the batch further
    else CHECK(rate[i] < 1.1 * rate[i - 1]);                   // max_num_seqs 8: the rest only queue
  }
}

TEST_CASE("closed loop: one client's TTFT is the batch-1 TTFT, request after request") {
  const json loop = result_at_batch1_ttft(closed_loop(1, 12));
  CHECK(loop["workload"]["arrival"] == "closed_loop");
  CHECK(loop["workload"]["concurrency"] == 1);
  CHECK_FALSE(loop["workload"].contains("rate_qps"));
}

TEST_CASE("closed loop: more clients than the batch holds queue, but the run is never called overloaded") {
  const json r = result_of_run(closed_loop(32, 96));
  CHECK(r["metrics"]["requests"]["completed"] == 96);
  CHECK_FALSE(r["headline"].value("overloaded", false));
  for (const auto& w : r["warnings"]) CHECK(w.get<std::string>().find("overload") == std::string::npos);
}

TEST_CASE("closed loop: the same scenario gives the same result") {
  const json a = result_of_run(closed_loop(6)), b = result_of_run(closed_loop(6));
  CHECK(a["metrics"].dump() == b["metrics"].dump());
}

TEST_CASE("closed loop: located errors") {
  json s = closed_loop(4);
  s["serving"]["workload"]["arrival"].erase("concurrency");
  expect_validation_error(s, "missing_key", "/serving/workload/arrival/concurrency");
  s = closed_loop(0);
  expect_validation_error(s, "out_of_range", "/serving/workload/arrival/concurrency");
  s = closed_loop(4);
  s["serving"]["workload"]["arrival"]["rate_qps"] = 2;
  expect_validation_error(s, "unknown_key", "/serving/workload/arrival/rate_qps");
  s = closed_loop(4);
  s["serving"]["workload"]["arrival"]["think_time_s"] = -1;
  expect_validation_error(s, "out_of_range", "/serving/workload/arrival/think_time_s");
  s = closed_loop(4);
  s["serving"]["workload"].erase("num_requests");
  s["serving"]["workload"]["duration_s"] = 60;
  expect_validation_error(s, "constraint_violation", "/serving/workload/duration_s");
  s = closed_loop(4);
  s["serving"]["slo"] = {{"ttft_ms", 500}};
  s["serving"]["steady_state"] = json::object();
  expect_validation_error(s, "constraint_violation", "/serving/steady_state");
  s = json::parse(R"({"schema_version":1,"model":"llama-2-7b","hardware":{"gpu":"a100-80g-sxm","gpus_per_node":1},
    "serving":{"mode":"simulate","workload":{"arrival":{"process":"closed_loop","concurrency":2},"num_sessions":4,
      "sessions":{"turns":2,"first_input_tokens":100,"input_tokens":50,"output_tokens":20,"think_time_s":1}}}})");
  expect_validation_error(s, "constraint_violation", "/serving/workload/arrival/process");
}
