// Training estimator speed: a full 1F1B pipeline schedule with PP=16 and 64
// micro-batches (GPT-3 175B, TP=8, 128 H100s) estimated end to end through
// the public API (parse, validate, price, simulate, result JSON) must take
// under 50 ms natively. Prints the figures; exits 1 over the bound.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/api.hpp"

namespace {

std::string scenario(const char* schedule, int virtual_stages) {
  nlohmann::json s = {
      {"schema_version", 1},
      {"id", "bench-pp16"},
      {"model", "gpt-3-175b"},
      {"hardware",
       {{"gpu", "h100-sxm"}, {"gpus_per_node", 8}, {"nodes", 16}, {"intra_node", "nvlink4-nvswitch"},
        {"inter_node", "ib-ndr"}}},
      {"training",
       {{"parallelism", {{"tp", 8}, {"pp", 16}, {"virtual_stages", virtual_stages}, {"sequence_parallel", true}}},
        {"schedule", schedule},
        {"batch", {{"seq_len", 2048}, {"micro_batch_size", 1}, {"global_batch_size", 64}}},
        {"recompute", "selective"}}}};
  return s.dump();
}

struct Figures {
  double min_ms, median_ms;
  std::string summary;
};

Figures time_it(const std::string& text, int repeats) {
  std::vector<double> ms;
  std::string last;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    last = sightline::api::run_scenario(text);
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const auto r = nlohmann::json::parse(last);
  std::string summary = "error";
  if (r["ok"].get<bool>()) {
    const auto& p = r["result"]["pipeline"];
    char buf[256];
    std::snprintf(buf, sizeof buf, "%d stages x %d micro-batches (v=%d), bubble %.2f%% (formula %.2f%%), step %.0f ms",
                  p["stages"].get<int>(), p["micro_batches"].get<int>(), p["virtual_stages"].get<int>(),
                  p["bubble_pct"].get<double>(), p["bubble_formula_pct"].get<double>(),
                  r["result"]["metrics"]["step_time_ms"].get<double>());
    summary = buf;
  }
  return {ms.front(), ms[ms.size() / 2], summary};
}

}  // namespace

int main() {
  constexpr double kBoundMs = 50.0;
  const Figures f = time_it(scenario("1f1b", 1), 21);
  const Figures g = time_it(scenario("interleaved_1f1b", 2), 21);
  std::printf("bench_training: 1F1B          %s\n", f.summary.c_str());
  std::printf("  estimate: min %.3f ms, median %.3f ms (bound %.0f ms)\n", f.min_ms, f.median_ms, kBoundMs);
  std::printf("bench_training: interleaved   %s\n", g.summary.c_str());
  std::printf("  estimate: min %.3f ms, median %.3f ms\n", g.min_ms, g.median_ms);
  if (f.summary == "error" || g.summary == "error") {
    std::printf("FAIL: the benchmark scenario did not run\n");
    return 1;
  }
  if (f.median_ms > kBoundMs) {
    std::printf("FAIL: median %.3f ms over the %.0f ms bound\n", f.median_ms, kBoundMs);
    return 1;
  }
  return 0;
}
