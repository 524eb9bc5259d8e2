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

// The scenario is refused with `code` at `path`.
inline void expect_validation_error(const json& s, const char* code, const char* path) {
  const json e = validate(s);
  INFO(s["serving"].dump());
  REQUIRE_FALSE(e["ok"].get<bool>());
  CHECK(e["error"]["code"] == code);
  CHECK(e["error"]["path"] == path);
}

}  // namespace sightline::test
