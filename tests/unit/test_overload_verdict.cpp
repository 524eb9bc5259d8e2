// When a serving run's headline says overloaded (serve/steady_state:
// SteadyStateOptions lag_arrivals and ramp_s, the offered load ending with
// the last session's arrival, the short run's noise test). A multi-turn
// run's turns are closed loops inside sessions that arrive openly: their rate
// ramps up for about a session's lifetime, they wait for their previous turn
// (an overloaded server throttles them, and its queue shows as turns waiting
// longer), and the run drains once sessions stop arriving. A replayed trace's
// rate is as its file has it. Each case was seen to give the wrong verdict
// before (2026-12-02).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "scenario/scenario.hpp"
#include "scenario/simulation_spec.hpp"
#include "serve/headline.hpp"
#include "serve/simulation.hpp"
#include "serve/steady_state.hpp"
#include "test_helpers.hpp"

using namespace sightline;
using namespace sightline::test;

namespace {

// The headline of `sc`'s central run, simulated to its end.
serve::ServingHeadline verdict_of(const Scenario& sc) {
  serve::Simulation sim(sc, serve::WorkloadOverride{}, false);
  while (!sim.run(int64_t{1} << 30)) {
  }
  const serve::SimulationSpec& sp = *sc.serving->simulation;
  return serve::serving_headline(sim.outcome_view(), sp.slo, sp.workload);
}

// S.chat-offload (Qwen3-8B on one H100, 3 to 12 turns, 45 s to think,
// a 6,000-token first prompt) at `sessions_per_s`, `sessions` of them, stopped
// at `stop_s` of simulated time (0: not stopped).
serve::ServingHeadline chat_verdict(double sessions_per_s, int64_t sessions, double stop_s) {
  json s = preset("scenarios", "S.chat-offload");
  s["serving"]["workload"]["arrival"]["rate_qps"] = sessions_per_s;
  s["serving"]["workload"]["num_sessions"] = sessions;
  if (stop_s > 0) s["serving"]["limits"] = {{"max_sim_time_s", stop_s}};
  return verdict_of(read_scenario(s));
}

// Llama-2-7B on one A100 (the head-to-head example), 512 tokens in and
// `output` out, with `workload` for its workload.
serve::ServingHeadline head_to_head_verdict(const json& workload, int64_t output, int seed = 1) {
  json s = json::parse(read_source_file("examples/head-to-head-llama2-7b-a100-10k.json"));
  s["seed"] = seed;
  s["serving"]["workload"] = workload;
  if (!workload["arrival"].contains("csv")) {
    s["serving"]["workload"]["prompt_tokens"] = 512;
    s["serving"]["workload"]["output_tokens"] = output;
  }
  s["serving"].erase("slo");
  return verdict_of(read_scenario(s));
}

// A trace whose rate ramps from 5% of `peak_qps` to it over `span_s`, an
// arrival each time the rate's integral passes a whole number.
json ramping_trace(double peak_qps, double span_s, int64_t output) {
  std::string csv = "arrival_s,prompt_tokens,output_tokens\n";
  const double a = 0.95 * peak_qps / (2 * span_s), b = 0.05 * peak_qps;  // integral: a t^2 + b t
  for (int k = 1;; ++k) {
    const double t = (-b + std::sqrt(b * b + 4 * a * k)) / (2 * a);
    if (t > span_s) break;
    csv += std::to_string(t) + ",512," + std::to_string(output) + "\n";
  }
  return {{"arrival", {{"process", "trace"}, {"csv", csv}}}};
}

}  // namespace

TEST_CASE("a multi-turn run cut while its sessions' turns ramp up is not overloaded") {
  // Stopped at 60 s (43 turns arrived): 1.15 turns/s arriving, 0.879/s
  // completed, as a turn completes a few seconds after it arrives while the
  // turns' rate still grows; it read "overloaded ... (about 0.879 req/s)".
  // The same at 100 s ("about 1.27 req/s").
  for (const double stop_s : {60.0, 100.0}) {
    CAPTURE(stop_s);
    const serve::ServingHeadline h = chat_verdict(0.5, 100, stop_s);
    CHECK_FALSE(h.overloaded);
    CHECK(h.line.rfind("undecided", 0) == 0);
  }
}

TEST_CASE("a multi-turn run whose queue grows while its sessions arrive is overloaded, though it drains after") {
  // 300 sessions at 1 a second: the turns in the system and their waits grow
  // while sessions arrive, then fall once they stop; judged over both, and
  // with the turns throttled by their own waits, it read "stable at 2.09
  // req/s (1 sessions/s): 2.27 req/s completed".
  const serve::ServingHeadline h = chat_verdict(1.0, 300, 0);
  CHECK(h.overloaded);
  CHECK(h.line.rfind("overloaded", 0) == 0);
  CHECK(h.capacity_qps > 0);
}

TEST_CASE("a multi-turn run whose sessions stop arriving within a session's lifetime is undecided, not stable") {
  // The preset as shipped: 100 sessions at 0.5 a second arrive within 200 s,
  // a session lasts at least (7.5 - 1) x 45 s: the turns' rate never stops
  // ramping up while sessions arrive. It read "stable at 0.728 req/s (0.5
  // sessions/s)", where 1,000 sessions at that rate grow a queue of 440
  // turns by the last arrival (a turn's wait 1 s at 250 s, 198 s at 2,000 s).
  const Scenario shipped = read_scenario(preset("scenarios", "S.chat-offload"));
  const serve::ServingHeadline h = verdict_of(shipped);
  CHECK_FALSE(h.overloaded);
  CHECK(h.line.find("undecided") == 0);
  CHECK(h.line.find("ramped up") != std::string::npos);
  serve::SteadyStateOptions o;
  serve::judge_as_workload(o, shipped.serving->simulation->workload);
  CHECK(o.lag_arrivals);
  CHECK(o.ramp_s == doctest::Approx(6.5 * 45.0));
}

TEST_CASE("a replayed trace whose rate ramps up is judged on its arrivals a service time earlier") {
  // Ramping to 1 req/s over 60 s, 1,024 tokens out (a request takes about
  // 15 s), served with no queue: it read "overloaded at 0.738 req/s ...
  // (about 0.341 req/s)" (drawn arrivals; these are evenly spread). Ramping to
  // 6 req/s over 200 s the queue grows (a P99 TTFT of minutes): overloaded.
  const serve::ServingHeadline ramp = head_to_head_verdict(ramping_trace(1.0, 60, 1024), 1024);
  CHECK_FALSE(ramp.overloaded);
  const serve::ServingHeadline over = head_to_head_verdict(ramping_trace(6.0, 200, 1024), 1024);
  CHECK(over.overloaded);
}

TEST_CASE("completions fall behind arrivals only beyond their counts' noise") {
  // 60 Poisson arrivals at 1 req/s, 1,024 tokens out, no queue (P99 TTFT
  // 77 ms), too short for a steady window: its second half's 30 arrivals came
  // at 1.2 req/s by chance, and it read "overloaded at 1 req/s: arrivals
  // outrun the service rate (about 1.02 req/s)". The same at 200 arrivals
  // (seed 5), judged over a window: "overloaded at 1 req/s ... (about 1.01
  // req/s)" (1 of 24 such runs, seeds 1-8 at 150, 200 and 300 requests).
  // 90 at 60 req/s, 128 out: its first tokens fall far behind.
  const json calm = {{"arrival", {{"process", "poisson"}, {"rate_qps", 1.0}}}, {"num_requests", 60}};
  CHECK_FALSE(head_to_head_verdict(calm, 1024).overloaded);
  json window = calm;
  window["num_requests"] = 200;
  const serve::ServingHeadline judged = head_to_head_verdict(window, 1024, 5);
  CHECK(judged.judged);
  CHECK_FALSE(judged.overloaded);
  const json flood = {{"arrival", {{"process", "poisson"}, {"rate_qps", 60.0}}}, {"num_requests", 90}};
  CHECK(head_to_head_verdict(flood, 128).overloaded);
}

TEST_CASE("a replayed session trace ramps up for its sessions' recorded span") {
  // 100 sessions a second apart, 10 turns each 60 s after the one before:
  // a session spans 540 s, so every session arrived within the turns'
  // ramp-up. No ramp-up was derived for a replayed session trace (400 such
  // sessions read "stable at 4.25 req/s" while the turns' rate still grew).
  json s = preset("scenarios", "S.chat-offload");
  json rows = json::array({"session_id,arrival_s,input_tokens,output_tokens"});
  for (int i = 0; i < 100; ++i)
    for (int k = 0; k < 10; ++k)
      rows.push_back(std::to_string(i) + "," + std::to_string(i + 60.0 * k) + "," + (k == 0 ? "1500" : "300") + ",100");
  s["serving"]["workload"] = {{"sessions", {{"csv", rows}, {"system_prompt_tokens", 500}}}};
  const Scenario sc = read_scenario(s);
  serve::SteadyStateOptions o;
  serve::judge_as_workload(o, sc.serving->simulation->workload);
  CHECK(o.lag_arrivals);
  CHECK(o.ramp_s == doctest::Approx(540.0));
  const serve::ServingHeadline h = verdict_of(sc);
  CHECK_FALSE(h.overloaded);
  CHECK(h.line.find("ramped up") != std::string::npos);
}
