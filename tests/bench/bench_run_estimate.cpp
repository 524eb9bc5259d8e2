// How close the up-front work estimate (jobs/run_estimate: the probe's figure)
// comes to the work units a run then makes, on every shipped serving
// simulation preset: each at its shipped request count (where the probe
// applies, over 400 requests) and at N requests (default 20,000), central only
// and with its interval runs. The max-QPS search and steady-state reruns are
// left out of the scenarios: the figure does not count them (its message says
// so). Prints one line per run, the mean error and the largest under- and
// overestimates. The refusal rule's margin (probe_error in run_estimate: 4%
// for a run probed on a hundredth of itself, 10% on its first 1,000 requests)
// must cover the underestimates (a run let through must normally finish):
// exit 2 when one is past the margin its run gets. The probe's and the run's
// CPU seconds (std::clock: this process, one thread) and the run's CPU per
// unit made are printed beside: what a work unit costs on this engine (RunLimits, run_limits.hpp).
// Usage: bench_run_estimate [--central-only] [--only ID,ID...] [--units U] [--figures-only] [--quick] [--file PATH ...] [N ...]
//   (e.g. 20000 1000000)
//   --central-only: leave out the runs with intervals; --only: these scenarios
//   (preset ids, "head-to-head" for the example) and no others; --units U:
//   each scenario at the request count whose central run makes about U units
//   (from its run of 2,000 requests; U = the default budget, 10000000: the
//   runs whose figure the refusal margin decides); --figures-only: the
//   figures without the runs (to compare a changed estimate with the units a
//   run made before: a run's units do not depend on the estimate); --file:
//   this scenario too (a presets/validation row's "scenario"), named by its stem;
//   --quick: the quick estimate's least figure instead (estimate_work's
//   units_low: what a search figures each candidate at before it runs, on
//   the CLI and in the page), on its shorter probe.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jobs/make_job.hpp"
#include "jobs/run_estimate.hpp"
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
  int64_t requests = 0;  // the run's, as the estimate counts them (the margin depends on them)
  double cpu_seconds_probe = 0, cpu_seconds_run = 0;
};

// A multi-turn workload is sized in sessions (its turns are its requests),
// with room for every turn: at most 2,000,000 requests a scenario may ask for.
bool in_sessions(const json& doc) { return doc["serving"]["workload"].contains("num_sessions"); }
constexpr int64_t kMostRequests = 2000000, kMostTurnsPerSession = 25;

json sized(json doc, int64_t n) {
  auto& sv = doc["serving"];
  sv.erase("max_qps_search");
  sv.erase("steady_state");
  if (n > 0) {
    const bool sessions = in_sessions(doc);
    sv["workload"][sessions ? "num_sessions" : "num_requests"] = n;
    if (!sv.contains("limits")) sv["limits"] = json::object();
    sv["limits"]["max_requests"] = sessions ? kMostRequests : std::max<int64_t>(n, sv["limits"].value("max_requests", int64_t{0}));
    sv["limits"]["max_sim_time_s"] = 1e7;
  }
  return doc;
}

int64_t units_of_run(const sightline::Scenario& s, sightline::IntervalMode mode) {
  auto job = sightline::make_job(s, mode);
  while (!job->step(1'000'000)) {
  }
  return job->units_done();
}

// The request (or session) count at which the scenario's central run makes
// about `units` (from a run of 2,000 requests or 100 sessions; at most the
// 2,000,000 requests a scenario may ask for).
int64_t requests_for_units(const json& doc, int64_t units) {
  const bool sessions = in_sessions(doc);
  const int64_t kSample = sessions ? 100 : 2000, kMost = sessions ? kMostRequests / kMostTurnsPerSession : kMostRequests;
  const int64_t made = units_of_run(sightline::read_scenario(sized(doc, kSample)), sightline::IntervalMode::CentralOnly);
  const double n = static_cast<double>(units) * kSample / static_cast<double>(std::max<int64_t>(1, made));
  return std::clamp<int64_t>(static_cast<int64_t>(n), kSample, kMost);
}

bool measure(const json& doc, int64_t n, sightline::IntervalMode mode, bool run, bool quick, Measured& m) {
  const sightline::Scenario s = sightline::read_scenario(sized(doc, n));
  const sightline::RunEstimate e = sightline::estimate_run(s, mode);
  if (e.requests <= 400) return false;  // the probe does not apply: the run is its own size
  m.requests = e.requests;
  const std::clock_t c0 = std::clock();
  sightline::RunLimits unbounded;
  unbounded.max_work_units = unbounded.ceiling = sightline::RunLimits::kNativeCeiling;
  m.figure = quick ? sightline::estimate_work(s, mode, unbounded).units_low : sightline::probe_work_figure(s, e).units;
  const std::clock_t c1 = std::clock();
  m.actual = run ? units_of_run(s, mode) : 0;
  m.cpu_seconds_run = static_cast<double>(std::clock() - c1) / CLOCKS_PER_SEC;
  m.cpu_seconds_probe = static_cast<double>(c1 - c0) / CLOCKS_PER_SEC;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root = SIGHTLINE_SOURCE_DIR;
  std::vector<int64_t> sizes;  // 0: as shipped
  bool central_only = false, figures_only = false, quick = false;
  int64_t units = 0;  // --units: the run's size from the units it makes
  std::string only;  // ",ID,ID," or empty for every scenario
  std::vector<std::string> extra;  // --file paths
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--central-only") central_only = true;
    else if (a == "--only" && i + 1 < argc) only = "," + std::string(argv[++i]) + ",";
    else if (a == "--units" && i + 1 < argc) units = std::atoll(argv[++i]);
    else if (a == "--figures-only") figures_only = true;
    else if (a == "--quick") quick = true;
    else if (a == "--file" && i + 1 < argc) extra.push_back(argv[++i]);
    else sizes.push_back(std::atoll(argv[i]));
  }
  if (sizes.empty()) sizes = units > 0 ? std::vector<int64_t>{-1} : std::vector<int64_t>{0, 20000};  // -1: sized by --units
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& f : std::filesystem::directory_iterator(root + "/presets/scenarios"))
    files.emplace_back(f.path().stem().string(), f.path().string());
  files.emplace_back("head-to-head", root + "/examples/head-to-head-llama2-7b-a100-10k.json");
  for (const std::string& f : extra) files.emplace_back(std::filesystem::path(f).stem().string(), f);
  std::sort(files.begin(), files.end());
  double under = 0, over = 0, sum_abs = 0;
  int count = 0;
  std::string under_what, over_what;
  bool past_margin = false;
  std::printf("%-14s %9s %-13s %14s %14s %8s %9s %9s %8s\n", "scenario", "requests", "runs", "estimate", "actual", "error",
              "probe CPU", "run CPU s", "us/unit");
  double most_us_per_unit = 0;
  std::string most_what;
  for (const auto& [id, path] : files) {
    json doc = read_json(path);
    if (doc.contains("scenario") && !doc.contains("serving")) doc = json(doc["scenario"]);
    if (!doc.contains("serving") || doc["serving"].value("mode", "") != "simulate") continue;
    if (!only.empty() && only.find("," + id + ",") == std::string::npos) continue;
    for (int64_t size : sizes) {
      const int64_t n = size < 0 ? requests_for_units(doc, units) : size;
      for (auto mode : {sightline::IntervalMode::CentralOnly, sightline::IntervalMode::Bounds}) {
        if (central_only && mode != sightline::IntervalMode::CentralOnly) continue;
        Measured m;
        if (!measure(doc, n, mode, !figures_only, quick, m)) continue;
        const double err = figures_only ? 0.0 : m.figure / static_cast<double>(m.actual) - 1.0;
        const char* runs = mode == sightline::IntervalMode::CentralOnly ? "central only" : "intervals";
        const int64_t shown = n > 0 ? n : doc["serving"]["workload"].value("num_requests", int64_t{0});
        const double us_per_unit = m.actual > 0 ? 1e6 * m.cpu_seconds_run / static_cast<double>(m.actual) : 0.0;
        std::printf("%-14s %9lld %-13s %14.0f %14lld %+7.2f%% %9.3f %9.2f %8.3f\n", id.c_str(), static_cast<long long>(shown),
                    runs, m.figure, static_cast<long long>(m.actual), 100.0 * err, m.cpu_seconds_probe, m.cpu_seconds_run,
                    us_per_unit);
        std::fflush(stdout);
        ++count;
        sum_abs += std::fabs(err);
        const std::string what = id + " at " + std::to_string(shown) + " requests, " + runs;
        if (err < under) under = err, under_what = what;
        past_margin = past_margin || (!quick && err < -sightline::probe_error(m.requests));  // the refusal margin is the run figure's
        if (err > over) over = err, over_what = what;
        if (us_per_unit > most_us_per_unit) most_us_per_unit = us_per_unit, most_what = what;
      }
    }
  }
  std::printf("%d runs: mean |error| %.2f%%, largest underestimate %+.2f%% (%s), largest overestimate %+.2f%% (%s)\n", count,
              count ? 100.0 * sum_abs / count : 0.0, 100.0 * under, under_what.c_str(), 100.0 * over, over_what.c_str());
  if (!figures_only) std::printf("most CPU per unit: %.3f us (%s)\n", most_us_per_unit, most_what.c_str());
  return past_margin ? 2 : 0;
}
