// The work estimate's figure against the work a run makes (jobs/run_estimate,
// issue 41 point 2: within 5%): each case probes a run and, but for the
// 900,000-request head-to-head, runs it to its end (up to multi-turn runs of
// 359 and 1,200 sessions and offline batches of 60,000 and 20,000 requests). Not
// among the sanitizer job's input-handling tests (.ci/sanitize, tests/CMakeLists.txt
// SANITIZE_TEST_SOURCES): under ASan at -O0 these four took 80 s of its 133 s of
// CPU (2026-12-01); the refusals they lead to stay there, in test_input_bounds.cpp.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>

#include "jobs/make_job.hpp"
#include "jobs/run_estimate.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_spec.hpp"
#include "serve/workload.hpp"
#include "test_helpers.hpp"

using namespace sightline::test;

namespace {

// Checks that a central-only run's up-front work figure is within 5% of the
// work units the run makes when run to its end.
void check_central_figure_within_5_percent(const sightline::Scenario& sc) {
  const sightline::RunEstimate est = sightline::estimate_run(sc, sightline::IntervalMode::CentralOnly);
  auto job = sightline::make_single_job(sc);
  while (!job->step(100000)) {
  }
  CHECK(sightline::probe_work_figure(sc, est).units == doctest::Approx(static_cast<double>(job->units_done())).epsilon(0.05));
}

// Checks that a run's up-front work figure with its interval is within 5%
// of the work units the run (central and bound runs) makes to its end.
void check_interval_figure_within_5_percent(const sightline::Scenario& sc) {
  const sightline::RunEstimate est = sightline::estimate_run(sc, sightline::IntervalMode::Bounds);
  auto job = sightline::make_job(sc, sightline::IntervalMode::Bounds);
  while (!job->step(100000)) {
  }
  CHECK(sightline::probe_work_figure(sc, est).units == doctest::Approx(static_cast<double>(job->units_done())).epsilon(0.05));
}

}  // namespace

TEST_CASE("900,000 head-to-head requests, with their interval, are figured within 2% of their work and let through at the default budget") {
  // They make 36,814,324 units in the default mode (the central run and the
  // interval's paired short runs; measured 2026-12-01, bench_run_estimate;
  // 35,779,324 before each prompt's tokenization was an event of its own),
  // under the default 4e7 budget: a figure within its measured error
  // (docs/limits.md) lets them start. When a unit was an event they made
  // 10.94M against a 10M budget and were refused (issue 41); central only,
  // 9,558,342 events, where the figure once was 9.49M and the 25% margin
  // refused it.
  json s = json::parse(read_source_file("examples/head-to-head-llama2-7b-a100-10k.json"));
  s["serving"]["workload"]["num_requests"] = 900000;
  s["serving"]["limits"] = {{"max_requests", 900000}, {"max_sim_time_s", 1000000}};
  const sightline::Scenario sc = sightline::read_scenario(s);
  const sightline::RunEstimate est = sightline::estimate_run(sc, sightline::IntervalMode::Bounds);
  const double figure = sightline::probe_work_figure(sc, est).units;
  CHECK(figure == doctest::Approx(36814324.0).epsilon(0.02));
  CHECK_NOTHROW(sightline::check_run_estimate(sc, est, sightline::RunLimits{}));
}

TEST_CASE("an offline batch on a cluster that runs more at once than its probe's share is figured within 5% of its work") {
  // The MLPerf llama2-70b offline row: every request at once on 8 replicas of
  // max_num_seqs 806, 6,448 running at once. Probed on its first 1,000
  // requests, those ran in batches of 125 a replica, many more steps a
  // request than its run's full batches make: 60,000 requests were figured
  // 31.6% over (1.6% under with the floor of 4 x 6,448 requests), 100,000 32%
  // over; and counted in requests done, a window closing with full batches
  // part-way through figured the 1,094,181 requests of its default budget 12%
  // over (bench_run_estimate, 2026-12-01; docs/limits.md).
  json s = json::parse(read_source_file("presets/validation/E.R3-llama2-70b-8xh200-offline.json"))["scenario"];
  s["serving"]["workload"]["num_requests"] = 60000;
  s["serving"]["limits"] = {{"max_requests", 60000}, {"max_sim_time_s", 1e7}};  // as bench_run_estimate sizes it
  check_central_figure_within_5_percent(sightline::read_scenario(s));
}

TEST_CASE("an offline batch whose probe drew lighter requests than its run is figured within 5% of its work") {
  // I2.4 (with its static-batching compare variant, batches of 32 padded to
  // their longest output): the probe's first 1,024 requests (seed 1) drew
  // lighter batches than the run's 20,000 and the figure was 7.8% under the
  // work made (seeds 2-4: -4.0%, -1.6%, +1.1%: sampling, not a bias). The
  // probe's rate is now scaled by the run's drawn lengths over its own
  // (offline_length_scale): -0.5% (bench_run_estimate, 2026-12-01).
  json s = preset("scenarios", "I2.4");
  s["serving"]["workload"]["num_requests"] = 20000;
  check_central_figure_within_5_percent(sightline::read_scenario(s));
}

TEST_CASE("a multi-turn run is figured at the turns its sessions draw, not at the most a session may take") {
  // S.chat-offload: 3 to 12 turns a session. Counted at 12 a session, the
  // figure was 89% over the work its runs made (docs/limits.md); the run's
  // own turns are counted by count_sessions, generate_sessions' draws.
  json s = preset("scenarios", "S.chat-offload");
  s["serving"]["workload"]["num_sessions"] = 30;  // a probe of 100,000 events sees the whole run
  const sightline::Scenario sc = sightline::read_scenario(s);
  const auto& sp = *sc.serving->simulation;
  const auto made_turns = sightline::serve::generate_sessions(sp, sc.seed, {});
  const auto counted = sightline::serve::count_sessions(sp, sc.seed);
  CHECK(counted.turns == static_cast<int64_t>(made_turns.requests.size()));
  CHECK(counted.sessions == made_turns.sessions);
  CHECK(counted.turns < 12 * sp.workload.sessions.num_sessions);
  const sightline::RunEstimate est = sightline::estimate_run(sc, sightline::IntervalMode::CentralOnly);
  CHECK(est.requests == counted.turns);
  // The probe of its first sessions is the whole run here: the figure is the
  // work made (counted at 12 turns a session it was over by the ratio of 12 to
  // the mean turns drawn).
  check_central_figure_within_5_percent(sc);
  // The count follows the generator where it cuts: a turn cap, and a run driven by duration.
  s["serving"]["limits"] = {{"max_requests", 100}};
  const sightline::Scenario capped = sightline::read_scenario(s);
  CHECK(sightline::serve::count_sessions(*capped.serving->simulation, capped.seed).turns == 100);
  s["serving"].erase("limits");
  s["serving"]["workload"].erase("num_sessions");
  s["serving"]["workload"]["duration_s"] = 120;
  const sightline::Scenario timed = sightline::read_scenario(s);
  const auto by_time = sightline::serve::generate_sessions(*timed.serving->simulation, timed.seed, {});
  const auto by_time_counted = sightline::serve::count_sessions(*timed.serving->simulation, timed.seed);
  CHECK(by_time_counted.turns == static_cast<int64_t>(by_time.requests.size()));
  CHECK(by_time_counted.sessions == by_time.sessions);
}

TEST_CASE("a multi-turn run longer than its probe is figured within 5% of its work, its turns' prompts counted as drawn") {
  // S.agentic-coding at 1,200 sessions (17,000 turns): its probe, the first
  // 1,000 sessions stopped at 100,000 events, saw mostly early turns, whose
  // prompts (a turn's prompt is its session's context so far) are shorter
  // than the run's average turn's; at the probe's units per arrival the figure
  // was 7.5% under (20,000 sessions: 8.0%). The run's arrivals are now counted
  // from the prompts its turns draw (count_sessions): +0.3% (bench_run_estimate,
  // 2026-12-01).
  json s = preset("scenarios", "S.agentic-coding");
  s["serving"]["workload"]["num_sessions"] = 1200;
  s["serving"]["limits"] = {{"max_requests", 2000000}, {"max_sim_time_s", 1e7}};  // as bench_run_estimate sizes it
  check_central_figure_within_5_percent(sightline::read_scenario(s));
}

TEST_CASE("a multi-turn run stopped at the probe's cap is figured within 5% of its work at two sizes") {
  // S.chat-offload: 107 sessions make 188 events a turn, 359 sessions 60 (a
  // turn comes back 45 s after the last; the steps follow the run's length,
  // not its turns). The probe of the whole run stops at 100,000 events; a
  // figure per turn from those was 30% and 37% under (docs/limits.md). The
  // rest is projected on the sessions' drawn think times and the probe's
  // step times (jobs/session_projection).
  for (const int64_t sessions : {int64_t{107}, int64_t{359}}) {
    CAPTURE(sessions);
    json s = preset("scenarios", "S.chat-offload");
    s["serving"]["workload"]["num_sessions"] = sessions;
    s["serving"]["limits"] = {{"max_requests", 2000000}, {"max_sim_time_s", 1e7}};  // as bench_run_estimate sizes it
    check_central_figure_within_5_percent(sightline::read_scenario(s));
  }
}

TEST_CASE("a run with its interval is figured at full bound runs when its own short runs fall back, not its probe") {
  // The interval job runs both bounds in full when a paired short run is
  // overloaded or, at a bound, too short to judge (jobs/interval_job.hpp).
  // Judged on the probe (the run's first requests at its average rate, of
  // another length) the figure was 55% under for I2.2 at 2,000 requests
  // (short runs of 400 overloaded, the probe not) and for
  // S.prefix-affinity-8 at 2,000 (short runs too short to judge on 8
  // replicas), and 177% over for I2.5 at 20,000 (the probe overloaded, the
  // short runs not); judged on the short runs themselves
  // (jobs/short_run_verdict): +0.6%, -0.2%, +1.1% (bench_run_estimate, 2026-12-01).
  for (const auto& run : {std::pair<std::string, int>{"I2.2", 2000}, {"S.prefix-affinity-8", 2000}, {"I2.5", 20000}}) {
    CAPTURE(run.first);
    json s = preset("scenarios", run.first);
    s["serving"]["workload"]["num_requests"] = run.second;
    // The figure leaves the max-QPS search's and steady-state reruns' runs out (they come on top).
    s["serving"].erase("max_qps_search");
    s["serving"].erase("steady_state");
    check_interval_figure_within_5_percent(sightline::read_scenario(s));
  }
}
