// The two large runs of issue 20 point 5, through the public JSON API as the
// native CLI runs them:
//   - a 1,000,000-request run at the central cost (no interval bounds): the
//     head-to-head scenario (examples/head-to-head-llama2-7b-a100-10k.json:
//     Llama-2-7B on one A100, Poisson 10 req/s, 512 in / 128 out) with its
//     request count, request limit and simulated-time limit raised, at the
//     native CLI's budget (`run --central-only --max-work-units 1000000000`);
//   - a 200,000-request offline batch with its 80% interval: I2.3 with every
//     request arriving at once, at the default budget of 10^7 units.
// Prints each run's wall and CPU time, events and the process's peak resident
// memory after it. Goal: the 1M run under 5 s of CPU. Fails (exit 2) only when
// a run does not complete or past a generous sanity bound (the 1M run over 5x
// its goal, 25 s of CPU).
// Usage: bench_large_runs [repo-root]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "api/api.hpp"

namespace {

using nlohmann::json;

bool read_json(const std::string& path, json& out) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  out = json::parse(ss.str());
  return true;
}

double cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// Runs one scenario; false (and a message) unless it completes every request.
bool measure(const char* what, const json& scenario, bool central_only, int64_t budget_units, double& cpu) {
  const double c0 = cpu_s();
  const auto w0 = std::chrono::steady_clock::now();
  const std::string out =
      sightline::api::run_scenario_with_budget(scenario.dump(), central_only, budget_units, 10'000'000'000LL);
  const auto w1 = std::chrono::steady_clock::now();
  cpu = cpu_s() - c0;
  const json r = json::parse(out);
  if (!r["ok"].get<bool>()) {
    std::printf("  %-58s FAILED: %s\n", what, r["error"].dump().c_str());
    return false;
  }
  const json& res = r["result"];
  const double completed = res["metrics"]["requests"]["completed"].get<double>();
  const double total = scenario["serving"]["workload"]["num_requests"].get<double>();
  // Which interval method ran: "central_only", or the default run's paired/full bound runs.
  std::string method = res["intervals"].is_string() ? res["intervals"].get<std::string>() : "";
  if (res.contains("interval_runs") && res["interval_runs"].is_object())
    method = res["interval_runs"].value("method", method);
  std::printf("  %-52s wall %7.2f s  cpu %7.2f s  %10.0f events  %7.0f of %7.0f requests  peak RSS %5.0f MB  (%s)\n",
              what, std::chrono::duration<double>(w1 - w0).count(), cpu, res["limits"]["events"].get<double>(), completed,
              total, peak_rss_mb(), method.c_str());
  return completed == total;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root = argc > 1 ? argv[1] : std::string(SIGHTLINE_SOURCE_DIR);
  json h2h, i23;
  if (!read_json(root + "/examples/head-to-head-llama2-7b-a100-10k.json", h2h) ||
      !read_json(root + "/presets/scenarios/I2.3.json", i23)) {
    std::fprintf(stderr, "cannot read the scenarios under %s\n", root.c_str());
    return 1;
  }
  // The 200,000-request offline batch: I2.3's workload, all at once, its search left out.
  json offline = i23;
  offline["serving"]["workload"]["arrival"] = {{"process", "all_at_once"}};
  offline["serving"]["workload"]["num_requests"] = 200000;
  offline["serving"].erase("max_qps_search");
  // 1M requests at 10 req/s span ~100,000 simulated seconds: past the default 86,400 s limit.
  json million = h2h;
  million["serving"]["workload"]["num_requests"] = 1000000;
  million["serving"]["limits"] = {{"max_requests", 1000000}, {"max_sim_time_s", 1000000}};

  std::printf("large-run benchmark (run_scenario_with_budget, JSON in and out)\n");
  double cpu_offline = 0, cpu_million = 0;
  const bool ok1 = measure("200,000-request offline batch (I2.3), default run", offline, false, 10'000'000, cpu_offline);
  const bool ok2 = measure("1,000,000 requests (head-to-head), central only", million, true, 1'000'000'000, cpu_million);
  std::printf("  1M run: %.2f s of CPU against the goal of 5 s (%.2fx)\n", cpu_million, cpu_million / 5.0);
  if (!ok1 || !ok2) return 2;
  return cpu_million > 25.0 ? 2 : 0;
}
