// Cost of the 80% interval on a serving run: the default run (central plus
// paired short bound runs, jobs/interval_job.hpp) against a central-only run
// and against the full three-run reference, on the 10,000-request head-to-head
// scenario (examples/head-to-head-llama2-7b-a100-10k.json: Llama-2-7B on one
// A100, Poisson 10 req/s, 512 in / 128 out), through the public JSON API.
// Runs the modes in turn, `repetitions` times each, and prints the median
// wall and CPU time of each and the ratios. Fails (exit 2) only past a
// generous sanity bound: the default run over 2x a central-only run.
// Usage: bench_intervals [scenario.json] [repetitions]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/api.hpp"

namespace {

struct Times {
  std::vector<double> wall_ms, cpu_ms;
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string path =
      argc > 1 ? argv[1] : std::string(SIGHTLINE_SOURCE_DIR) + "/examples/head-to-head-llama2-7b-a100-10k.json";
  const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  std::ifstream f(path);
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string scenario = ss.str();
  nlohmann::json full_doc = nlohmann::json::parse(scenario);
  full_doc["cost_model"]["intervals"] = "full";
  const std::string full = full_doc.dump();
  const char* names[3] = {"central only", "default (paired short bound runs)", "full bound runs (reference)"};
  Times t[3];
  std::string method;
  for (int i = 0; i < reps; ++i) {
    for (int m = 0; m < 3; ++m) {
      const auto w0 = std::chrono::steady_clock::now();
      const std::clock_t c0 = std::clock();
      const std::string out = m == 0 ? sightline::api::run_scenario_central_only(scenario)
                                     : sightline::api::run_scenario(m == 1 ? scenario : full);
      const std::clock_t c1 = std::clock();
      const auto w1 = std::chrono::steady_clock::now();
      t[m].wall_ms.push_back(std::chrono::duration<double, std::milli>(w1 - w0).count());
      t[m].cpu_ms.push_back(1e3 * static_cast<double>(c1 - c0) / CLOCKS_PER_SEC);
      if (i == 0) {
        const nlohmann::json r = nlohmann::json::parse(out);
        if (!r["ok"].get<bool>()) {
          std::fprintf(stderr, "run failed: %s\n", r["error"].dump().c_str());
          return 1;
        }
        if (m == 1) method = r["result"]["interval_runs"]["method"].get<std::string>();
      }
    }
  }
  std::printf("interval cost benchmark: %s, %d runs of each mode (medians)\n", path.c_str(), reps);
  for (int m = 0; m < 3; ++m)
    std::printf("  %-36s wall %8.1f ms   cpu %8.1f ms\n", names[m], Times::median(t[m].wall_ms), Times::median(t[m].cpu_ms));
  const double wall = Times::median(t[1].wall_ms) / Times::median(t[0].wall_ms);
  const double cpu = Times::median(t[1].cpu_ms) / Times::median(t[0].cpu_ms);
  std::printf("  default / central-only: wall %.2fx, cpu %.2fx (goal 1.3x; method %s)\n", wall, cpu, method.c_str());
  std::printf("  full / central-only:    wall %.2fx, cpu %.2fx\n", Times::median(t[2].wall_ms) / Times::median(t[0].wall_ms),
              Times::median(t[2].cpu_ms) / Times::median(t[0].cpu_ms));
  return cpu > 2.0 ? 2 : 0;
}
