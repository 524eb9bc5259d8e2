#pragma once
// A serving scenario run to its end, what its per-request outcomes say about
// the load it saw, its result, and a located validation error: shared by the
// tests of arrival processes (closed loops, a rate with a client-side cap) and
// of sessions and KV tiers.
#include <doctest/doctest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "scenario/scenario.hpp"
#include "serve/simulation.hpp"
#include "test_helpers.hpp"

namespace sightline::test {

// Every request's outcome of the scenario, run to its end (all completed).
inline std::vector<serve::RequestOutcome> outcomes_run_to_end(const json& scenario) {
  const Scenario s = read_scenario(scenario);
  serve::Simulation sim(s, serve::WorkloadOverride{}, false);
  while (!sim.run(int64_t{1} << 30)) {
  }
  REQUIRE(sim.all_completed());
  return sim.outcomes();
}

// The most requests in flight at once (sent, not yet ended). An end at the
// instant of a send counts first: a closed-loop client, or a capped client
// whose slot frees, sends when the previous request ends.
inline int64_t most_in_flight(const std::vector<serve::RequestOutcome>& out) {
  std::vector<std::pair<serve::TimeNs, int>> events;
  for (const auto& o : out) {
    events.push_back({o.arrival, +1});
    events.push_back({o.completion, -1});
  }
  std::sort(events.begin(), events.end());
  int64_t now = 0, most = 0;
  for (const auto& [t, d] : events) most = std::max(most, now += d);
  return most;
}

// The result of a scenario that must run (the error is printed if it does not).
inline json result_of_run(const json& scenario) {
  const json e = run(scenario);
  if (!e["ok"].get<bool>()) FAIL_CHECK(e["error"].dump());
  REQUIRE(e["ok"].get<bool>());
  return e["result"];
}

// `one_at_a_time` (a load that keeps one request in flight: one closed-loop
// client, a rate capped at one) with 300-token prompts and 20-token outputs,
// run to its end: its result, after checking that every request's TTFT is the
// TTFT of that request alone on the idle deployment (all_at_once, one request,
// which as an offline batch is not tokenized) plus its prompt's tokenization
// at the stack's tokenize_us_per_token (docs/serving.md, "From arrival to
// first token").
inline json result_at_batch1_ttft(json one_at_a_time) {
  constexpr int64_t kPrompt = 300;
  one_at_a_time["serving"]["workload"]["prompt_tokens"] = {{"dist", "fixed"}, {"value", kPrompt}};
  one_at_a_time["serving"]["workload"]["output_tokens"] = {{"dist", "fixed"}, {"value", 20}};
  json alone = one_at_a_time;
  alone["serving"]["workload"]["arrival"] = {{"process", "all_at_once"}};
  alone["serving"]["workload"]["num_requests"] = 1;
  const json result = result_of_run(one_at_a_time), single = result_of_run(alone);
  const double tokenize_ms = kPrompt * read_scenario(one_at_a_time).cost_model.software_stack.tokenize_us_per_token * 1e-3;
  const double batch1 = single["metrics"]["ttft_ms"]["mean"].get<double>() + tokenize_ms;
  CHECK(result["metrics"]["ttft_ms"]["mean"].get<double>() == doctest::Approx(batch1).epsilon(1e-9));
  CHECK(result["metrics"]["ttft_ms"]["max"].get<double>() == doctest::Approx(batch1).epsilon(1e-9));
  return result;
}

// The scenario is refused with `code` at `path`.
inline void expect_validation_error(const json& s, const char* code, const char* path) {
  const json e = validate(s);
  INFO(s["serving"].dump());
  REQUIRE_FALSE(e["ok"].get<bool>());
  CHECK(e["error"]["code"] == code);
  CHECK(e["error"]["path"] == path);
}

}  // namespace sightline::test
