// The steady-state max-QPS search, checked the way a user would check it:
// at the reported rate a run 20x longer than the search's runs meets the SLO,
// and at 10% above it does not. Plus the verdict's building blocks
// on synthetic request streams. Named "capacity:" so ctest runs these beside
// the other unit tests (tests/CMakeLists.txt).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "api/make_job.hpp"
#include "serve/steady_state.hpp"
#include "test_helpers.hpp"

using namespace sightline::test;
using namespace sightline::serve;

namespace {

// One run at the cost model's central bound: the statistical claims below
// are about the simulation, not the kernel-cost interval.
json ok_result(const json& s) {
  const sightline::Scenario scenario = sightline::read_scenario(s);
  auto job = sightline::make_single_job(scenario);
  while (!job->step(1 << 20)) {
  }
  return job->result();
}

// Arrivals every `gap_s`; request i completes `service_s(i)` after arriving,
// first token after `ttft_s(i)`.
template <class Service, class Ttft>
std::vector<RequestOutcome> stream(int n, double gap_s, Service service_s, Ttft ttft_s) {
  std::vector<RequestOutcome> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    RequestOutcome& q = out[static_cast<size_t>(i)];
    q.arrival = static_cast<TimeNs>(std::llround(i * gap_s * 1e9));
    q.first_token = q.arrival + static_cast<TimeNs>(std::llround(ttft_s(i) * 1e9));
    q.completion = q.arrival + static_cast<TimeNs>(std::llround(service_s(i) * 1e9));
    q.output_tokens = 100;
  }
  return out;
}

SloSpec ttft_slo(double ms, double attainment) {
  SloSpec s;
  s.enabled = true;
  s.ttft_ms = ms;
  s.attainment = attainment;
  return s;
}

// The user's check: run the search, then the same scenario without it at the
// reported rate for 20x the search's shortest run (and at least twice the run
// that decided that rate), and at 10% above it for as many.
void check_like_a_user(json s, const std::string& name) {
  CAPTURE(name);
  const json r = ok_result(s);
  const json& q = r["max_qps"];
  const double qps = q["qps"].get<double>();
  REQUIRE(qps > 0);
  CHECK(q["upper_qps"].get<double>() > qps);
  CHECK(q["upper_qps"].get<double>() <= qps * (1 + s["serving"]["max_qps_search"].value("precision", 0.03)) + 1e-9);
  int64_t deciding = 0;
  for (const json& run : q["runs"])
    if (run["qps"].get<double>() == qps) deciding = std::max(deciding, run["requests"].get<int64_t>());
  REQUIRE(deciding > 0);
  // 20x the search's shortest run (num_requests), and at least twice the run
  // that decided the reported rate.
  const int64_t floor_requests = s["serving"]["max_qps_search"].value("num_requests", 600);
  const int64_t n = std::max<int64_t>(20 * floor_requests, 2 * deciding);
  const double target = s["serving"]["slo"]["attainment"].get<double>();
  s["serving"].erase("max_qps_search");
  s["serving"].erase("compare");
  s["serving"]["workload"]["num_requests"] = n;
  s["serving"]["workload"]["arrival"]["rate_qps"] = qps;
  s["serving"]["limits"] = {{"max_requests", n}, {"max_sim_time_s", 1e7}};
  const json at = ok_result(s)["metrics"];
  s["serving"]["workload"]["arrival"]["rate_qps"] = qps * 1.1;
  const json above = ok_result(s)["metrics"];
  MESSAGE(name << ": max QPS " << qps << " (upper " << q["upper_qps"] << ", service rate " << q["service_rate_qps"]
                << "); " << n << " requests at it: attainment " << at["goodput"]["slo_attainment"] << ", TTFT p99 "
                << at["ttft_ms"]["p99"] << " ms; at +10%: attainment " << above["goodput"]["slo_attainment"]
                << ", TTFT p99 " << above["ttft_ms"]["p99"] << " ms");
  CHECK(at["requests"]["completed"] == n);
  CHECK(at["goodput"]["slo_attainment"].get<double>() >= target);
  CHECK(above["goodput"]["slo_attainment"].get<double>() < target);
}

}  // namespace

TEST_CASE("capacity: Student-t quantiles match the tables") {
  CHECK(student_t_quantile(9, 0.9) == doctest::Approx(1.833).epsilon(0.003));
  CHECK(student_t_quantile(9, 0.95) == doctest::Approx(2.262).epsilon(0.005));
  CHECK(student_t_quantile(30, 0.8) == doctest::Approx(1.310).epsilon(0.003));
  CHECK(student_t_quantile(8, 0.99) == doctest::Approx(3.355).epsilon(0.02));
}

TEST_CASE("capacity: the verdict needs a stable system and an attainment interval above the target") {
  SteadyStateOptions o;
  const SloSpec slo = ttft_slo(500, 0.99);
  // Stable: 10 req/s, 2 s in the system, TTFT 100 ms: L = 20.
  auto stable = stream(12000, 0.1, [](int) { return 2.0; }, [](int) { return 0.1; });
  SteadyStateReport r = judge_steady_state(stable, slo, 0, 0, 0, o);
  CHECK(r.stable);
  CHECK(r.in_system_mean == doctest::Approx(20).epsilon(0.05));
  CHECK(r.verdict == Verdict::Meets);
  CHECK(r.attainment_low == 1.0);
  // Too short for its own L: undecided, with the run size it needs.
  auto short_run = stream(300, 0.1, [](int) { return 2.0; }, [](int) { return 0.1; });
  r = judge_steady_state(short_run, slo, 0, 0, 0, o);
  CHECK(r.verdict == Verdict::Uncertain);
  CHECK(r.needed_requests > 300);
  // Unstable: completions fall behind (the time in the system grows with the
  // request index), even though every TTFT is within the SLO.
  auto growing = stream(12000, 0.1, [](int i) { return 2.0 + 0.01 * i; }, [](int) { return 0.1; });
  r = judge_steady_state(growing, slo, 0, 0, 0, o);
  CHECK_FALSE(r.stable);
  CHECK(r.verdict == Verdict::Fails);
  CHECK(r.in_system_growth > 0);
  // Stable, but 3% of TTFTs miss: the interval lies below 0.99.
  auto missing = stream(12000, 0.1, [](int) { return 2.0; }, [](int i) { return i % 33 == 0 ? 0.9 : 0.1; });
  r = judge_steady_state(missing, slo, 0, 0, 0, o);
  CHECK(r.stable);
  CHECK(r.verdict == Verdict::Fails);
  CHECK(r.attainment_high < 0.99);
  // Near saturation the run must span the queue's relaxation time.
  CHECK(run_size(20, 0, 0.95, 0.99, o).total(o.batches) > run_size(20, 0, 0.5, 0.99, o).total(o.batches));
}

// I2.3 and I5.5 are checked as shipped, at 20x length, at +10% and against
// brute force, by tests/cli/capacity.test.mjs (sightline check-capacity).

// DistServe's measure: 90% of requests within TTFT 1 s and TPOT 40 ms. (At
// 99% the crossing is ill-conditioned on this workload: about 0.8% of its
// requests miss the SLO even at a sixth of the service rate, on their own
// long prefill, so the attainment is flat near 0.99 across rates: the search
// answered 0.54 req/s, and 20,120-request runs gave 0.9923 there and 0.9901
// at +10%, within the runs' own sampling error of the target.)
TEST_CASE("capacity: I5.3 (disaggregated prefill/decode), P90 TTFT < 1 s and TPOT < 40 ms: the reported rate holds 20x longer, 10% above it does not") {
  json s = preset("scenarios", "I5.3");
  s["serving"]["slo"] = {{"ttft_ms", 1000}, {"tpot_ms", 40}, {"attainment", 0.9}};
  s["serving"]["max_qps_search"] = json::object();
  check_like_a_user(s, "I5.3");
}

TEST_CASE("capacity: SLOs as users state them: a percentile per metric, or one attainment share for the rest") {
  SteadyStateOptions o;
  // 5% of requests miss TTFT (every 20th), a disjoint 5% miss TPOT (every
  // 20th, offset by 10): each metric alone is within its bound for 95%, both
  // together for 90%.
  auto s = stream(12000, 0.1, [](int i) { return i % 20 == 10 ? 9.0 : 2.0; }, [](int i) { return i % 20 == 0 ? 0.9 : 0.1; });
  SloSpec slo;
  slo.enabled = true;
  slo.ttft_ms = 500;
  slo.tpot_ms = 50;  // (2.0 - 0.1) s / 99 gaps = 19 ms; (9.0 - 0.1) / 99 = 90 ms
  const auto judge = [&](const SloSpec& x) { return judge_steady_state(s, x, 0, 0, 0, o); };
  // Joint at 0.85 meets; joint at 0.92 fails (the joint share is 0.90).
  slo.attainment = 0.85;
  CHECK(judge(slo).verdict == Verdict::Meets);
  slo.attainment = 0.92;
  CHECK(judge(slo).verdict == Verdict::Fails);
  CHECK(judge(slo).attainment == doctest::Approx(0.90).epsilon(0.01));
  // P90 of each alone meets (95% within each bound), though the joint share is below 0.92.
  slo.ttft_percentile = 0.9;
  slo.tpot_percentile = 0.9;
  REQUIRE(slo_conditions(slo).size() == 2);
  CHECK(judge(slo).verdict == Verdict::Meets);
  // P99 TTFT fails (95% within 500 ms), and is the condition reported.
  slo.ttft_percentile = 0.99;
  const SteadyStateReport r = judge(slo);
  CHECK(r.verdict == Verdict::Fails);
  CHECK(r.binding_metrics == static_cast<unsigned>(kSloTtft));
  CHECK(r.attainment_target == 0.99);
  CHECK(r.attainment == doctest::Approx(0.95).epsilon(0.01));
  // A mix: P90 TTFT alone, TPOT in the joint share at 0.92 (95% within it): meets.
  slo.ttft_percentile = 0.9;
  slo.tpot_percentile = 0;
  const std::vector<SloCondition> c = slo_conditions(slo);
  REQUIRE(c.size() == 2);
  CHECK(c[0].metrics == static_cast<unsigned>(kSloTpot));
  CHECK(c[0].share == 0.92);
  CHECK(judge(slo).verdict == Verdict::Meets);
  // ITL alone at a percentile counts gaps: 1 gap in 100 over the bound in every request is 99% of gaps.
  for (auto& q : s) {
    q.gaps = 99;
    q.gaps_over_itl = 1;
  }
  SloSpec itl;
  itl.enabled = true;
  itl.itl_ms = 30;
  itl.itl_percentile = 0.95;
  CHECK(judge(itl).verdict == Verdict::Meets);
  itl.itl_percentile = 0.99;
  CHECK(judge(itl).attainment == doctest::Approx(98.0 / 99.0));
  CHECK(judge(itl).verdict == Verdict::Fails);
  // In the joint share a request meets ITL only when every gap does: none here.
  itl.itl_percentile = 0;
  itl.attainment = 0.5;
  CHECK(judge(itl).verdict == Verdict::Fails);
}
