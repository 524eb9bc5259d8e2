// Issue 26's engine reproducers, each through the public API the CLI and the
// wasm module use: every model form passes the same checks (a pasted Hugging
// Face config included), counts that would overflow are refused, the clock
// refuses a step it cannot represent, a metric that does not exist is null
// with its reason, the capacity search says "missed at min_qps" only when it
// simulated min_qps, search_rank refuses a results array of the wrong length,
// and the engine's own resolved scenario validates for every preset.
#include <doctest/doctest.h>

#include <string>
#include <vector>
#include <utility>

#include "jobs/make_job.hpp"
#include "jobs/run_estimate.hpp"
#include "core/error.hpp"
#include "presets/preset_store.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_spec.hpp"
#include "serve/workload.hpp"
#include "error_checks.hpp"
#include "test_helpers.hpp"

using namespace sightline::test;
namespace api = sightline::api;

namespace {

json hf_file(const std::string& name) { return json::parse(read_source_file("tests/data/hf/" + name)); }

// A short Mixtral serving run on two H100s whose model is a pasted config.json.
json hf_serving(const json& hf) {
  json s = preset("scenarios", "I2.1");
  s["model"] = {{"hf_config", hf}};
  s["hardware"] = {{"gpu", "h100-sxm"}, {"gpus_per_node", 2}, {"intra_node", "nvlink4-nvswitch"}};
  s["serving"]["parallelism"] = {{"tp", 2}, {"pp", 1}};
  s["serving"]["workload"]["num_requests"] = 20;
  return s;
}

}  // namespace

TEST_CASE("a pasted HF config with num_experts_per_tok above the expert count is refused where it says so") {
  json hf = hf_file("mixtral-8x7b.json");
  hf["num_experts_per_tok"] = 9;
  check_error(run(hf_serving(hf)), "constraint_violation", "/model/hf_config/num_experts_per_tok");
  check_error(validate(hf_serving(hf)), "constraint_violation", "/model/hf_config/num_experts_per_tok");
}

TEST_CASE("a pasted HF config whose head_dim comes out 0 is refused, as the other model forms refuse it") {
  json hf = hf_file("mixtral-8x7b.json");
  hf["hidden_size"] = 16;  // 16 / 32 heads
  check_error(validate(hf_serving(hf)), "constraint_violation", "/model/hf_config/num_attention_heads");
  json arch = preset("models", "llama-2-7b");
  arch["hidden_size"] = 16;
  arch["head_dim"] = 0;
  json s = preset("scenarios", "I1.1");
  s["model"] = arch;
  check_error(validate(s), "out_of_range", "/model/head_dim");
}

TEST_CASE("a parameter count past int64 is a located error, not a negative count") {
  json arch = preset("models", "mixtral-8x7b");
  arch["num_layers"] = 4096;
  arch["hidden_size"] = 1 << 20;
  arch["moe"]["num_experts"] = 1024;
  arch["moe"]["expert_intermediate_size"] = 1 << 20;
  json s = preset("scenarios", "I1.1");
  s["model"] = arch;
  check_error(validate(s), "out_of_range", "/model");
}

TEST_CASE("a GPU so slow that one step passes the clock's range is refused at the GPU, not reported as 1 ns") {
  json s = preset("scenarios", "I2.1");
  json gpu = preset("gpus", "a100-80g-sxm");
  gpu["id"] = "tiny";
  for (auto& [k, v] : gpu["peak_tflops"].items()) v = 1e-12;
  s["hardware"]["gpu"] = gpu;
  s["serving"]["workload"]["num_requests"] = 5;
  // The plausible-range floor of every peak (GpuLimits) now refuses such a
  // GPU where the user wrote the figure, before any step is priced.
  check_error(run(s), "out_of_range", "/hardware/gpu/peak_tflops/fp32");
}

TEST_CASE("TPOT of one-token outputs is null with a reason, not 0") {
  json s = preset("scenarios", "I2.1");
  s["serving"]["workload"]["num_requests"] = 20;
  s["serving"]["workload"]["output_tokens"] = 1;
  s["serving"]["key_metrics"] = {"tpot_p50_ms", "ttft_p50_ms"};
  const json e = run(s);
  REQUIRE(e["ok"] == true);
  const json& tpot = e["result"]["metrics"]["tpot_ms"];
  CHECK(tpot["count"] == 0);
  CHECK(tpot["p50"].is_null());
  CHECK(tpot["reason"].get<std::string>().find("more than one output token") != std::string::npos);
  const json& k = e["result"]["key_metrics"][0];
  CHECK(k["id"] == "tpot_p50_ms");
  CHECK(k["value"].is_null());
  CHECK(k.contains("reason"));
  CHECK(e["result"]["key_metrics"][1]["value"].get<double>() > 0);
}

TEST_CASE("TTFT when no request completes is null with a reason, not 0") {
  json s = preset("scenarios", "I2.1");
  s["serving"]["workload"]["num_requests"] = 50;
  s["limits"] = {{"max_work_units", 10}};  // stops before the first completion
  const json e = run(s);
  CAPTURE(e.dump().substr(0, 400));
  if (e["ok"] == true) {
    const json& m = e["result"]["metrics"];
    if (m["requests"]["completed"] == 0) {
      CHECK(m["ttft_ms"]["p50"].is_null());
      CHECK(m["ttft_ms"]["reason"] == "no request completed");
    }
  } else {
    CHECK(e["error"]["code"] == "limit_exceeded");  // refused up front: also no 0
  }
}

TEST_CASE("capacity search: 'missed even at min_qps' only when min_qps was simulated") {
  json s = preset("scenarios", "I2.3");
  s["serving"]["max_qps_search"]["min_qps"] = 1000;  // far above the service rate (~13 req/s)
  const json e = run(s);
  REQUIRE(e["ok"] == true);
  const json& q = e["result"]["max_qps"];
  CAPTURE(q.dump().substr(0, 600));
  for (const json& r : q["runs"]) CHECK(r["qps"].get<double>() >= 1000);  // nothing below min_qps
  const std::string note = q["note"].is_string() ? q["note"].get<std::string>() : "";
  if (note.find("missed even at min_qps") != std::string::npos) {
    bool simulated = false;
    for (const json& r : q["runs"]) simulated = simulated || (r["qps"] == 1000.0 && r["requests"].get<int64_t>() > 0);
    CHECK(simulated);
  } else {
    CHECK(note.find("not simulated") != std::string::npos);
  }
}

TEST_CASE("search_rank refuses more (or fewer) results than the plan has candidates") {
  const std::string text = read_source_file("examples/search-llama3-70b.json");
  if (text.empty()) return;
  // Both questions: at a target rate, and within a GPU budget (no target
  // rate). For the budget question ac43451 priced each capacity answer
  // against its candidate before checking the count, reading past the plan's
  // candidates (a heap-buffer-overflow that this case shows under ASan in
  // .ci/sanitize; tests/README.md).
  json budget = json::parse(text);
  budget.erase("target_qps");
  for (const std::string& question : {text, budget.dump()}) {
    const json plan = envelope(api::search_plan(question));
    REQUIRE(plan["ok"] == true);
    const size_t n = plan["result"]["candidates"].size();
    json results = json::array();
    for (size_t i = 0; i < n + 50; ++i)
      results.push_back({{"max_qps", {{"qps", 1.0 + static_cast<double>(i)}, {"service_rate_qps", 2.0 + static_cast<double>(i)}}}});
    check_error(envelope(api::search_rank(question, results.dump(), "[]")), "constraint_violation", "/results");
    check_error(envelope(api::search_intervals(question, results.dump())), "constraint_violation", "/results");
    json fewer = json::array();
    check_error(envelope(api::search_rank(question, fewer.dump(), "[]")), "constraint_violation", "/results");
  }
}

TEST_CASE("the resolved scenario of every preset validates again (round trip)") {
  const json ids = envelope(api::list_presets("scenarios")).at("result");
  int failures = 0;
  for (const json& entry : ids) {
    const std::string id = entry.is_string() ? entry.get<std::string>() : entry.value("id", "");
    const json first = validate(preset("scenarios", id));
    REQUIRE_MESSAGE(first["ok"] == true, id);
    json resolved = first["result"];
    const json second = validate(resolved);
    if (second["ok"] != true) {
      ++failures;
      MESSAGE(id << ": " << second["error"].dump());
    }
  }
  CHECK(failures == 0);
}

TEST_CASE("a run that would hold more memory than a run may use is refused up front, with the estimate") {
  json s = preset("scenarios", "I2.1");
  s["hardware"] = {{"gpu", "a100-80g-sxm"}, {"gpus_per_node", 8}, {"nodes", 100000},
                   {"intra_node", "nvlink3-nvswitch"}, {"inter_node", "ib-hdr"}};  // 800,000 replicas
  const json e = run(s);
  check_error(e, "limit_exceeded", "/hardware");
  const std::string m = e["error"]["message"].get<std::string>();
  CHECK(m.find("GiB") != std::string::npos);
  CHECK(m.find("800000 replicas") != std::string::npos);
  CHECK(envelope(api::Engine().start(s.dump()))["error"] == e["error"]);  // the page's sliced start too
}

TEST_CASE("a latency-mode unit is one sequence-step: the budget scales with the batch") {
  json s = preset("scenarios", "I1.1");
  s["serving"]["workload"]["batch_size"] = 64;
  const int64_t steps = s["serving"]["workload"]["output_tokens"].get<int64_t>();
  const int64_t units = 3 * steps * 64;  // central and both bounds
  s["limits"] = {{"max_work_units", units - 1}};
  const json refused = run(s);
  check_error(refused, "limit_exceeded", "/limits/max_work_units");
  CHECK(refused["error"]["message"].get<std::string>().find(std::to_string(units)) != std::string::npos);
  s["limits"] = {{"max_work_units", units}};
  CHECK(run(s)["ok"] == true);
}

TEST_CASE("the native budget can be raised past the API's, up to 1e10; the API keeps its ceiling") {
  json s = preset("scenarios", "I1.1");
  s["limits"] = {{"max_work_units", 80000000}};  // the API's ceiling: accepted
  CHECK(run(s)["ok"] == true);
  s["limits"] = {{"max_work_units", 80000001}};
  check_error(run(s), "out_of_range", "/limits/max_work_units");
  CHECK(envelope(api::run_scenario_with_budget(s.dump(), true, 40000000, 10000000000))["ok"] == true);
  s["limits"] = {{"max_work_units", 20000000000}};
  check_error(envelope(api::run_scenario_with_budget(s.dump(), true, 40000000, 10000000000)), "out_of_range",
              "/limits/max_work_units");
}

TEST_CASE("the deployment search's space is bounded before it is planned: 200k duplicated axis values, exploding axes") {
  json q = json::parse(read_source_file("examples/search-llama3-70b.json"));
  json dup = json::array();
  for (int i = 0; i < 200000; ++i) dup.push_back(64);
  json big = q;
  big["max_num_seqs"] = dup;
  check_error(envelope(api::search_plan(big.dump())), "out_of_range", "/max_num_seqs");
  json wide = q;
  wide["max_num_seqs"] = json::array();
  wide["max_num_batched_tokens"] = json::array();
  for (int i = 1; i <= 64; ++i) {
    wide["max_num_seqs"].push_back(i);
    wide["max_num_batched_tokens"].push_back(1000 + i);
  }
  wide["tp"] = {1, 2, 4, 8};
  check_error(envelope(api::search_plan(wide.dump())), "limit_exceeded", "/max_num_seqs");
  CHECK(envelope(api::search_plan(q.dump()))["ok"] == true);  // the shipped example still plans
}

TEST_CASE("a 1M-request run at low load is refused up front on a probe's figure, not stopped by the budget after 40 s") {
  // I2.1 at 2 QPS makes about 119 units per request (one step per token at
  // small batches): 1M requests need about 1.2e8 units, three times the
  // default budget, but the lower bound (full batches) said far less and let
  // it start. (Its own serving.limits raised: at their defaults the run stops
  // at 2e7 events, within the budget, and keeps its result.)
  json s = preset("scenarios", "I2.1");
  s["serving"]["limits"] = {{"max_requests", 1000000}, {"max_events", 1000000000}, {"max_sim_time_s", 1e7}};
  s["serving"]["workload"]["num_requests"] = 1000000;
  const json e = envelope(api::run_scenario_central_only(s.dump()));
  check_error(e, "limit_exceeded", "/limits/max_work_units");
  const std::string m = e["error"]["message"].get<std::string>();
  CAPTURE(m);
  CHECK(m.find("refused before starting") != std::string::npos);
  CHECK(m.find("probe") != std::string::npos);
  CHECK(envelope(api::Engine().start(s.dump()))["error"]["code"] == "limit_exceeded");  // the page's start too

  // A run the budget holds is not refused by the estimate (checked without running it).
  s["serving"]["workload"]["num_requests"] = 20000;  // about 1.9e6 units
  const sightline::Scenario small = sightline::read_scenario(s);
  const sightline::RunEstimate est = sightline::estimate_run(small, sightline::IntervalMode::CentralOnly);
  CHECK_NOTHROW(sightline::check_run_estimate(small, est, sightline::RunLimits{}));
}

TEST_CASE("a run whose estimate, with its error, is over the budget is refused up front with the estimate; under it, it runs") {
  // 1M requests of the head-to-head scenario make 40,912,838 units in the
  // default mode (with the interval's paired short runs; measured 2026-12-01,
  // bench_run_estimate; 39,762,838 before each prompt's tokenization was an
  // event of its own), over the default 4e7 budget: refused (the run could
  // stop unfinished). When a unit was an event its central run made
  // 10,632,656 over the 10M budget then: the probe's figure (10.0M) once sat
  // inside the old 1.25x margin, and the run stopped at the budget after 98.9%
  // (14 s of CPU).
  json s = json::parse(read_source_file("examples/head-to-head-llama2-7b-a100-10k.json"));
  s["serving"]["workload"]["num_requests"] = 1000000;
  s["serving"]["limits"] = {{"max_requests", 1000000}, {"max_sim_time_s", 1000000}};
  const json e = run(s);
  check_error(e, "limit_exceeded", "/limits/max_work_units");
  const std::string m = e["error"]["message"].get<std::string>();
  CAPTURE(m);
  CHECK(m.find("refused before starting") != std::string::npos);
  const size_t about = m.find("needs about ");
  REQUIRE(about != std::string::npos);
  const double figure = std::stod(m.substr(about + 12));
  // Within 5% of the units the run makes: a run this large is probed on 10,000
  // requests, not 1,000, whose arrivals came 6.6% under the nominal rate and
  // figured 11.6% high (docs/limits.md, docs/speed.md).
  CHECK(figure > 40912838 * 0.95);
  CHECK(figure < 40912838 * 1.05);
  // With the budget above the figure and its error (at most 25%), the estimate lets it through.
  const sightline::Scenario big = sightline::read_scenario(s);
  const sightline::RunEstimate est = sightline::estimate_run(big, sightline::IntervalMode::Bounds);
  sightline::RunLimits roomy;
  roomy.max_work_units = static_cast<int64_t>(figure * 1.26);
  roomy.ceiling = sightline::RunLimits::kNativeCeiling;
  CHECK_NOTHROW(sightline::check_run_estimate(big, est, roomy));
}

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

TEST_CASE("the n-th arrival the estimate reads is the workload's own, and a rate override scales it") {
  // jobs/run_estimate scales a probe's arrivals to its run's average rate from
  // nth_arrival_s: it must draw what generate_workload draws.
  json s = preset("scenarios", "I2.1");  // Poisson, 2 req/s
  s["serving"].erase("steady_state");    // (it needs a rate: not for all_at_once)
  s["serving"].erase("max_qps_search");
  for (const char* process : {"poisson", "gamma", "all_at_once"}) {
    CAPTURE(std::string(process));
    s["serving"]["workload"]["arrival"] = {{"process", process}, {"rate_qps", 2.0}};
    if (std::string(process) == "gamma") s["serving"]["workload"]["arrival"]["cv"] = 2.0;
    if (std::string(process) == "all_at_once") s["serving"]["workload"]["arrival"].erase("rate_qps");
    const sightline::Scenario sc = sightline::read_scenario(s);
    const auto& sp = *sc.serving->simulation;
    sightline::serve::WorkloadOverride o;
    o.num_requests = 700;
    const double last = sightline::serve::nth_arrival_s(sp, sc.seed, 700);
    const auto w = sightline::serve::generate_workload(sp, sc.seed, o);
    if (std::string(process) == "all_at_once") {
      CHECK(last == 0);
      continue;
    }
    CHECK(static_cast<double>(w.requests.back().arrival) * 1e-9 == doctest::Approx(last).epsilon(1e-9));
    CHECK(last > 0);
    o.rate_qps = 2.0 * 1.1;  // 10% faster: every arrival 1/1.1 as late
    const auto faster = sightline::serve::generate_workload(sp, sc.seed, o);
    CHECK(static_cast<double>(faster.requests.back().arrival) * 1e-9 == doctest::Approx(last / 1.1).epsilon(1e-9));
  }
}

TEST_CASE("each simulation counts its own work units: a speculative run's k + 1 times, its baseline's once") {
  // I5.1: a draft model with k = 5, compared with a baseline without
  // speculation. The job's units are the sum of each simulation run alone.
  json s = preset("scenarios", "I5.1");
  s["serving"]["workload"]["num_requests"] = 60;
  s["serving"].erase("steady_state");  // 60 requests, not grown until decided
  const sightline::Scenario both = sightline::read_scenario(s);
  REQUIRE(both.serving->simulation->compares.size() == 1);
  // (units, events) of one job run to its end.
  auto units_of = [](const sightline::Scenario& sc) {
    auto job = sightline::make_single_job(sc);
    while (!job->step(1000)) {
    }
    return std::make_pair(job->units_done(), job->result()["limits"]["events"].get<int64_t>());
  };
  json alone = s;
  alone["serving"].erase("compare");
  const sightline::Scenario speculative = sightline::read_scenario(alone);
  const int64_t with_compare = units_of(both).first;
  const auto spec = units_of(speculative);
  const auto base = units_of(*both.serving->simulation->compares.front().scenario);
  CHECK(with_compare == spec.first + base.first);
  // A unit is an event, 16 sequences stepped or 32 prompt tokens arrived
  // (serve/sim_state.hpp, RunProgress): more than one per event at batches and prompts
  // of hundreds; k = 5: six times that.
  CHECK(spec.first % 6 == 0);
  CHECK(spec.first > 6 * spec.second);
  CHECK(base.first > base.second);
  // The up-front figure counts them the same way (a probe as long as the run,
  // 600 requests, makes the same work: the figure is the work made).
  s["serving"]["workload"]["num_requests"] = 600;
  s["serving"]["limits"] = {{"max_requests", 600}};
  const sightline::Scenario longer = sightline::read_scenario(s);
  const sightline::RunEstimate est = sightline::estimate_run(longer, sightline::IntervalMode::CentralOnly);
  const double figure = sightline::probe_work_figure(longer, est).units;
  const int64_t made = units_of(longer).first;
  CHECK(figure == doctest::Approx(static_cast<double>(made)).epsilon(0.01));
}

TEST_CASE("a scenario's limits section is read by every path that reads a scenario, not only by run") {
  // I5.5 ships limits.max_work_units; the page's parameter schema reads every
  // preset with read_scenario (api::list_registries), as do explain-step and a
  // search's base. Each must accept the section and locate a bad one.
  for (const json* p : sightline::list_presets("scenarios")) CHECK_NOTHROW(sightline::read_scenario(*p));
  CHECK(envelope(api::list_registries())["ok"] == true);
  json s = preset("scenarios", "I5.5");
  REQUIRE(s.contains("limits"));
  s["limits"] = {{"max_work_units", 0}};
  for (const char* bad : {"zero", "unknown key"}) {
    if (std::string(bad) == "unknown key") s["limits"] = {{"max_units", 5}};
    const std::string want = std::string(bad) == "zero" ? "/limits/max_work_units" : "/limits/max_units";
    check_error(run(s), std::string(bad) == "zero" ? "out_of_range" : "unknown_key", want.c_str());
    try {
      sightline::read_scenario(s);
      FAIL("a bad limits section was accepted: " << bad);
    } catch (const sightline::SightlineError& e) {
      CHECK(e.path() == want);
    }
  }
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
  auto job = sightline::make_single_job(sc);
  while (!job->step(100000)) {
  }
  CHECK(sightline::probe_work_figure(sc, est).units == doctest::Approx(static_cast<double>(job->units_done())).epsilon(0.05));
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
    const sightline::Scenario sc = sightline::read_scenario(s);
    const sightline::RunEstimate est = sightline::estimate_run(sc, sightline::IntervalMode::CentralOnly);
#ifndef SIGHTLINE_SANITIZE_TESTS
    auto job = sightline::make_single_job(sc);
    while (!job->step(100000)) {
    }
    CHECK(sightline::probe_work_figure(sc, est).units == doctest::Approx(static_cast<double>(job->units_done())).epsilon(0.05));
#else
    // Under the sanitizers (.ci/sanitize) the figure's own code runs, the
    // probe and the projection, but not the whole run it is held to: that is
    // the simulator's event loop on the same preset (run whole under them by
    // the 30-session case above), and this case took 52.7 s of CPU with it,
    // 23.9 s without, at -O0 with ASan (2026-12-01). ctest holds the figure
    // to 5%.
    CHECK(sightline::probe_work_figure(sc, est).units > 0);
#endif
  }
}
