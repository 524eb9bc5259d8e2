// Scaling benchmark of the serving simulator: the cost of one event must not
// grow with the work. Two pairs of scenarios, each derived from
// tests/bench/bench_scenario.json (Llama-3-8B chat-like lengths):
//   - an offline batch (every request at time 0) of 10,000 and of 200,000
//     requests on one H100: the waiting queue holds up to 200,000 requests;
//   - a cluster of 8 and of 128 replicas of Llama-3-70B at TP8 on H100s
//     (64 and 1,024 GPUs), least-outstanding routing, 250 requests and 5 QPS
//     per replica.
// Each scenario runs through the public JSON API, as the CLI and the wasm
// module run it; the figure is the best of a few runs. The API simulates a
// scenario three times (central, low and high cost bounds, for the 80%
// interval) and reports the central run's events: events/s here is those
// events over the whole wall time, a third of the simulator's own rate.
// Fails (exit 2) when the larger scenario of a pair runs at less than half
// the events/s of the smaller one.
// Usage: bench_serving_scale [repetitions] [base-scenario.json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/api.hpp"

namespace {

using nlohmann::json;

struct Figure {
  double events = 0;
  double best_ms = 0;
  double events_per_s() const { return events / (best_ms * 1e-3); }
};

json offline_batch(json s, int64_t requests) {
  s["id"] = "bench-offline-" + std::to_string(requests);
  s["title"] = "offline batch of " + std::to_string(requests) + " Llama-3-8B requests on one H100";
  s["serving"]["workload"]["arrival"] = {{"process", "all_at_once"}};
  s["serving"]["workload"]["num_requests"] = requests;
  s["serving"]["outputs"] = {{"max_request_records", 1000}};
  return s;
}

json tp8_cluster(json s, int replicas) {
  s["id"] = "bench-cluster-" + std::to_string(replicas);
  s["title"] = std::to_string(replicas) + " replicas of Llama-3-70B at TP8 on H100 (" + std::to_string(8 * replicas) + " GPUs)";
  s["model"] = "llama-3-70b";
  s["hardware"] = {{"gpu", "h100-sxm"}, {"gpus_per_node", 8}, {"nodes", replicas}, {"intra_node", "nvlink4-nvswitch"},
                   {"inter_node", "ib-ndr"}};
  s["serving"].erase("parallelism");
  s["serving"]["cluster"] = {{"router", "least_outstanding"}, {"pools", {{{"name", "main"}, {"replicas", replicas}, {"tp", 8}, {"pp", 1}}}}};
  s["serving"]["workload"]["arrival"] = {{"process", "poisson"}, {"rate_qps", 5 * replicas}};
  s["serving"]["workload"]["num_requests"] = 250 * replicas;
  s["serving"]["outputs"] = {{"max_request_records", 1000}};
  return s;
}

bool measure(const json& scenario, int reps, Figure& f) {
  const std::string text = scenario.dump();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string out = sightline::api::run_scenario(text);
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (i == 0) {
      const json r = json::parse(out);
      if (!r["ok"].get<bool>()) {
        std::fprintf(stderr, "%s failed: %s\n", scenario["id"].get<std::string>().c_str(), r["error"].dump().c_str());
        return false;
      }
      f.events = r["result"]["limits"]["events"].get<double>();
    }
  }
  f.best_ms = *std::min_element(ms.begin(), ms.end());
  std::printf("  %-72s %9.0f events %9.1f ms %10.3g events/s\n", scenario["title"].get<std::string>().c_str(), f.events,
              f.best_ms, f.events_per_s());
  return true;
}

// The larger scenario's events/s over the smaller one's; the target is >= 0.5.
bool flat(const char* what, const Figure& small, const Figure& large) {
  const double ratio = large.events_per_s() / small.events_per_s();
  const bool ok = ratio >= 0.5;
  std::printf("  %-28s events/s ratio large/small %.2f (target >= 0.5): %s\n", what, ratio, ok ? "met" : "NOT met");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const std::string path = argc > 2 ? argv[2] : std::string(SIGHTLINE_SOURCE_DIR) + "/tests/bench/bench_scenario.json";
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const json base = json::parse(ss.str());

  std::printf("serving simulator scaling benchmark (best of %d runs, run_scenario, JSON in and out)\n", reps);
  Figure off_small, off_large, clu_small, clu_large;
  if (!measure(offline_batch(base, 10000), reps, off_small) || !measure(offline_batch(base, 200000), reps, off_large) ||
      !measure(tp8_cluster(base, 8), reps, clu_small) || !measure(tp8_cluster(base, 128), reps, clu_large))
    return 1;
  const bool ok1 = flat("offline 200,000 vs 10,000", off_small, off_large);
  const bool ok2 = flat("1,024 GPUs vs 64 GPUs", clu_small, clu_large);
  return ok1 && ok2 ? 0 : 2;
}
