// Each candidate of a deployment search, one after another on one thread: the
// page's up-front estimate of it (api estimate_work, timed as the page times
// it: the call's own CPU, its probe included) and the CPU its central run then
// took. The page's time-left estimator (web/src/client/search-words.js timeLeft) is judged
// on these figures by tests/bench/search_time_left.mjs, which replays them on
// a pool of workers. Then the Pareto points' runs at the low and high cost
// bounds, which the ranking adds. Writes one JSON document: {candidates:
// [{label, units_low, units_high, probe_units, estimate_ms, run_ms, requests,
// meets_slo}], intervals: [{candidate, low_ms, high_ms}]}.
// Usage: bench_search_candidates QUESTION.json OUT.json   (the canonical
// question, examples/search-llama3-70b.json: about a minute of CPU)
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/api.hpp"
#include "search/deployment_search.hpp"

namespace {

using nlohmann::json;

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench_search_candidates QUESTION.json OUT.json\n");
    return 1;
  }
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  const auto spec = sightline::search::read_deployment_search(json::parse(text.str()));
  const auto plan = sightline::search::plan_deployment_search(spec);
  json out = {{"question", argv[1]}, {"candidates", json::array()}};
  double total_ms = 0;
  std::vector<sightline::search::CandidateOutcome> central;
  for (size_t k = 0; k < plan.scenarios.size(); ++k) {
    const double t0 = thread_cpu_ms();
    const json e = json::parse(sightline::api::estimate_work(plan.scenarios[k].dump(), true));
    const double t1 = thread_cpu_ms();
    const auto o = sightline::search::evaluate_candidate(plan.scenarios[k], sightline::CostBound::Central);
    const double t2 = thread_cpu_ms();
    const json& r = e.contains("result") ? e["result"] : e;
    out["candidates"].push_back({{"label", sightline::search::candidate_label(spec, plan.candidates[k])},
                                 {"units_low", r["units"]["low"]},
                                 {"units_high", r["units"]["high"]},
                                 {"probe_units", r["probe"]["units"]},
                                 {"estimate_ms", t1 - t0},
                                 {"run_ms", t2 - t1},
                                 {"requests", o.requests},
                                 {"meets_slo", o.meets_slo}});
    central.push_back(o);
    total_ms += t2 - t1;
    std::fprintf(stderr, "%zu/%zu %.0f ms %s\n", k + 1, plan.scenarios.size(), t2 - t1,
                 sightline::search::candidate_label(spec, plan.candidates[k]).c_str());
  }
  out["intervals"] = json::array();
  for (size_t i : sightline::search::interval_candidates(spec, plan, central)) {
    const double t0 = thread_cpu_ms();
    sightline::search::evaluate_candidate(plan.scenarios[i], sightline::CostBound::Low);
    const double t1 = thread_cpu_ms();
    sightline::search::evaluate_candidate(plan.scenarios[i], sightline::CostBound::High);
    const double t2 = thread_cpu_ms();
    out["intervals"].push_back({{"candidate", i}, {"low_ms", t1 - t0}, {"high_ms", t2 - t1}});
    total_ms += t2 - t0;
  }
  std::ofstream(argv[2]) << out.dump(1) << "\n";
  std::printf("%zu candidates, %.1f s of CPU in their runs (the interval runs included)\n", plan.scenarios.size(), total_ms / 1e3);
  return 0;
}
