// The quick work range (jobs/run_estimate: estimate_work), what a search
// figures each candidate at before any runs, on the CLI and in the page, and
// the closed-form least units it starts from. Each simulation of the run is
// figured as the budget check's figure (probe_work_figure) figures it, on a
// shorter probe: the cases compare the two figures (probes only, no run to
// its end; the budget check's figure is held to the work runs make in
// test_work_estimate.cpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>

#include "jobs/run_estimate.hpp"
#include "scenario/run_limits.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_spec.hpp"
#include "test_helpers.hpp"

using namespace sightline::test;

namespace {

// A budget no figure reaches: the range's ends are not cut at it.
sightline::RunLimits unbounded() {
  sightline::RunLimits l;
  l.max_work_units = l.ceiling = sightline::RunLimits::kNativeCeiling;
  return l;
}

// The scenario without the runs neither figure counts alike (the max-QPS
// search's and steady-state reruns come on top of the run's own).
sightline::Scenario own_runs_only(json s) {
  s["serving"].erase("max_qps_search");
  s["serving"].erase("steady_state");
  return sightline::read_scenario(s);
}

}  // namespace

TEST_CASE("the quick range's low end figures each simulation as the budget check does, within 10%") {
  // Before (2026-12-02, bench_run_estimate --quick against the units each run
  // made): I2.4 at 20,000 requests -62% (its static-batching compare variant,
  // most of the work, figured at the scenario's own rate; its probe of 400
  // requests cut under the offline batch's floor of full batches, and its
  // lengths taken for the run's); a multi-turn run's arrivals at its probe's
  // units per arrival, 28 sessions at S.agentic-coding's rate (+8.4% at 20,000
  // sessions, two errors apart). After: -0.5%; S.agentic-coding +0.9% at
  // 20,000 sessions, and at 1,200 within 0.03% of the budget check's figure.
  const std::pair<std::string, int64_t> runs[] = {{"I2.4", 20000}, {"S.agentic-coding", 1200}};
  for (const auto& run : runs) {
    const std::string& id = run.first;
    const int64_t n = run.second;
    CAPTURE(id);
    json s = preset("scenarios", id);
    const bool sessions = s["serving"]["workload"].contains("num_sessions");
    s["serving"]["workload"][sessions ? "num_sessions" : "num_requests"] = n;
    s["serving"]["limits"] = {{"max_requests", 2000000}, {"max_sim_time_s", 1e7}};
    const sightline::Scenario sc = own_runs_only(s);
    const auto mode = sightline::IntervalMode::CentralOnly;
    const double figure = sightline::probe_work_figure(sc, sightline::estimate_run(sc, mode)).units;
    const sightline::WorkRange range = sightline::estimate_work(sc, mode, unbounded());
    CHECK(range.units_low == doctest::Approx(figure).epsilon(0.10));
    CHECK(range.units_high >= range.units_low);
  }
}

TEST_CASE("the quick range holds a run whose paired short runs fall back to full bound runs") {
  // I2.3 at 20,000 requests with its interval: its short runs fall back (the
  // budget check's figure judges them) and the run made 1,883,884 units; the
  // range's low end takes the short runs to stand (658,316), its high end
  // now the full bounds they fall back to (it was the low end then).
  for (const std::string id : {"I2.3", "I2.1"}) {
    CAPTURE(id);
    json s = preset("scenarios", id);
    s["serving"]["workload"]["num_requests"] = 20000;
    const sightline::Scenario sc = own_runs_only(s);
    const auto mode = sightline::IntervalMode::Bounds;
    const double figure = sightline::probe_work_figure(sc, sightline::estimate_run(sc, mode)).units;
    const sightline::WorkRange range = sightline::estimate_work(sc, mode, unbounded());
    CHECK(range.units_low <= figure * 1.10);
    CHECK(range.units_high >= figure * 0.90);
  }
}

TEST_CASE("a run stopped at its max_events needs at least the fewer of its closed-form units and its events") {
  // I3.3 (30,720-token prompts, one a minute, 2,048 tokens out) at 20,000
  // requests stops at its 20,000,000 events, after 25,309,342 units; its
  // closed-form least units, 62.7M, took no account of the stop: the run was
  // refused at the default budget as needing "at least" 62.7M units, and the
  // quick range started there.
  json s = preset("scenarios", "I3.3");
  s["serving"]["workload"]["num_requests"] = 20000;
  s["serving"]["limits"] = {{"max_requests", 20000}, {"max_sim_time_s", 1e7}};
  const sightline::Scenario sc = sightline::read_scenario(s);
  const sightline::RunEstimate est = sightline::estimate_run(sc, sightline::IntervalMode::CentralOnly);
  CHECK(est.work_units_at_least <= sc.serving->simulation->limits.max_events);
  CHECK_NOTHROW(sightline::check_run_estimate(sc, est, sightline::RunLimits{}));
  const double figure = sightline::probe_work_figure(sc, est).units;
  CHECK(figure == doctest::Approx(25309342.0).epsilon(0.05));
  const sightline::WorkRange range = sightline::estimate_work(sc, sightline::IntervalMode::CentralOnly, unbounded());
  CHECK(range.units_low == doctest::Approx(figure).epsilon(0.10));
}
