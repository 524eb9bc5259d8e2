// Speed benchmark of the serving simulator: 10,000 requests of Llama-3-8B on
// one H100 at QPS 20 (tests/bench/bench_scenario.json), through the public
// JSON API exactly as the CLI and the wasm module run it. Prints the best and
// median wall time of a few runs and the simulated events per second.
// Usage: bench_serving [scenario.json] [repetitions]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/api.hpp"

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : std::string(SIGHTLINE_SOURCE_DIR) + "/tests/bench/bench_scenario.json";
  const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  std::ifstream f(path);
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string scenario = ss.str();
  std::vector<double> ms;
  nlohmann::json result;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string out = sightline::api::run_scenario(scenario);
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (i == 0) {
      result = nlohmann::json::parse(out);
      if (!result["ok"].get<bool>()) {
        std::fprintf(stderr, "run failed: %s\n", result["error"].dump().c_str());
        return 1;
      }
    }
  }
  std::sort(ms.begin(), ms.end());
  const auto& r = result["result"];
  const double events = r["limits"]["events"].get<double>();
  const double best = ms.front();
  const double median = ms[ms.size() / 2];
  std::printf("serving simulator benchmark: %s\n", r["scenario"]["title"].get<std::string>().c_str());
  std::printf("  requests      %lld completed of %lld\n", r["metrics"]["requests"]["completed"].get<long long>(),
              r["metrics"]["requests"]["total"].get<long long>());
  std::printf("  steps         %lld\n", r["metrics"]["concurrency"]["steps"].get<long long>());
  std::printf("  events        %.0f\n", events);
  std::printf("  wall time     best %.1f ms, median %.1f ms over %d runs (run_scenario, JSON in and out)\n", best,
              median, reps);
  std::printf("  events/s      %.3g (best run)\n", events / (best * 1e-3));
  std::printf("  simulated     %.1f s of serving; TTFT p50 %.1f ms, TPOT p50 %.2f ms\n",
              r["metrics"]["duration_s"].get<double>(), r["metrics"]["ttft_ms"]["p50"].get<double>(),
              r["metrics"]["tpot_ms"]["p50"].get<double>());
  const bool pass = best < 500.0;
  std::printf("  target        < 500 ms natively: %s\n", pass ? "met" : "NOT met");
  return pass ? 0 : 2;
}
