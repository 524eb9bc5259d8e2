// How close the up-front work estimate (api/run_estimate: the probe's figure)
// comes to the work units a run then makes, on every shipped serving
// simulation preset: each at its shipped request count (where the probe
// applies, over 400 requests) and at N requests (default 20,000), central only
// and with its interval runs. The max-QPS search and steady-state reruns are
// left out of the scenarios: the figure does not count them (its message says
// so). Prints one line per run, the mean error and the largest under- and
// overestimates. The refusal rule's margin (kProbeError in run_estimate.cpp,
// 25%) must cover the underestimates (a run let through must normally finish):
// exit 2 when one is past it.
// Usage: bench_run_estimate [--central-only] [--only ID,ID...] [N ...]   (e.g. 20000 1000000)
//   --central-only: leave out the runs with intervals; --only: these scenarios
//   (preset ids, "head-to-head" for the example) and no others.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/make_job.hpp"
#include "api/run_estimate.hpp"
#include "scenario/scenario.hpp"

namespace {

using nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

struct Measured {
  double figure = 0;
  int64_t actual = 0;
  double seconds_probe = 0, seconds_run = 0;
};

bool measure(json doc, int64_t n, sightline::IntervalMode mode, Measured& m) {
  auto& sv = doc["serving"];
  sv.erase("max_qps_search");
  sv.erase("steady_state");
  if (n > 0) {
    sv["workload"]["num_requests"] = n;
    if (!sv.contains("limits")) sv["limits"] = json::object();
    sv["limits"]["max_requests"] = std::max<int64_t>(n, sv["limits"].value("max_requests", int64_t{0}));
    sv["limits"]["max_sim_time_s"] = 1e7;
  }
  const sightline::Scenario s = sightline::read_scenario(doc);
  const sightline::RunEstimate e = sightline::estimate_run(s, mode);
  if (e.requests <= 400) return false;  // the probe does not apply: the run is its own size
  const auto t0 = std::chrono::steady_clock::now();
  m.figure = sightline::probe_work_figure(s, e).units;
  const auto t1 = std::chrono::steady_clock::now();
  auto job = sightline::make_job(s, mode);
  while (!job->step(1'000'000)) {
  }
  m.actual = job->units_done();
  const auto t2 = std::chrono::steady_clock::now();
  m.seconds_probe = std::chrono::duration<double>(t1 - t0).count();
  m.seconds_run = std::chrono::duration<double>(t2 - t1).count();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root = SIGHTLINE_SOURCE_DIR;
  std::vector<int64_t> sizes;  // 0: as shipped
  bool central_only = false;
  std::string only;  // ",ID,ID," or empty for every scenario
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--central-only") central_only = true;
    else if (a == "--only" && i + 1 < argc) only = "," + std::string(argv[++i]) + ",";
    else sizes.push_back(std::atoll(argv[i]));
  }
  if (sizes.empty()) sizes = {0, 20000};
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& f : std::filesystem::directory_iterator(root + "/presets/scenarios"))
    files.emplace_back(f.path().stem().string(), f.path().string());
  files.emplace_back("head-to-head", root + "/examples/head-to-head-llama2-7b-a100-10k.json");
  std::sort(files.begin(), files.end());
  double under = 0, over = 0, sum_abs = 0;
  int count = 0;
  std::string under_what, over_what;
  std::printf("%-14s %9s %-13s %14s %14s %8s %9s %9s\n", "scenario", "requests", "runs", "estimate", "actual", "error",
              "probe s", "run s");
  for (const auto& [id, path] : files) {
    const json doc = read_json(path);
    if (!doc.contains("serving") || doc["serving"].value("mode", "") != "simulate") continue;
    if (!only.empty() && only.find("," + id + ",") == std::string::npos) continue;
    for (int64_t n : sizes) {
      for (auto mode : {sightline::IntervalMode::CentralOnly, sightline::IntervalMode::Bounds}) {
        if (central_only && mode != sightline::IntervalMode::CentralOnly) continue;
        Measured m;
        if (!measure(doc, n, mode, m)) continue;
        const double err = m.figure / static_cast<double>(m.actual) - 1.0;
        const char* runs = mode == sightline::IntervalMode::CentralOnly ? "central only" : "intervals";
        const int64_t shown = n > 0 ? n : doc["serving"]["workload"].value("num_requests", int64_t{0});
        std::printf("%-14s %9lld %-13s %14.0f %14lld %+7.2f%% %9.3f %9.2f\n", id.c_str(), static_cast<long long>(shown),
                    runs, m.figure, static_cast<long long>(m.actual), 100.0 * err, m.seconds_probe, m.seconds_run);
        std::fflush(stdout);
        ++count;
        sum_abs += std::fabs(err);
        const std::string what = id + " at " + std::to_string(shown) + " requests, " + runs;
        if (err < under) under = err, under_what = what;
        if (err > over) over = err, over_what = what;
      }
    }
  }
  std::printf("%d runs: mean |error| %.2f%%, largest underestimate %+.2f%% (%s), largest overestimate %+.2f%% (%s)\n", count,
              count ? 100.0 * sum_abs / count : 0.0, 100.0 * under, under_what.c_str(), 100.0 * over, over_what.c_str());
  return under < -0.25 ? 2 : 0;
}
