#pragma once
// How `fit` replays one benchmark run on the base scenario (the load as the
// tool applied it, the lengths it recorded) and which of the run's figures it
// compares with which statistic of the replay. Every failure of a replay is
// located in the user's own documents: the benchmark file's key that gave the
// offending quantity, or the base scenario's path.
#include <map>
#include <string>
#include <vector>

#include "api/bench_import.hpp"

namespace sightline::api {

// The base scenario as the user gave it, with its file name for messages.
struct FitBase {
  json doc;
  std::string name;
};

// One figure of a run that the fit compares: the measured value and the
// replay statistic that corresponds to it (ttft_mean, ttft_p50, tpot_mean,
// itl_mean, itl_p50, output_tokens_per_s).
struct FitTarget {
  std::string metric;
  double measured = 0;
  std::string source;
  std::string statistic;
};

// Latency figures of the run (means where recorded, else medians); a closed
// batch (MLPerf Offline) compares its output token throughput instead.
std::vector<FitTarget> fit_targets(const BenchRun& run);

struct Replay {
  std::map<std::string, double> value;   // statistic -> predicted value
  std::map<std::string, double> rel_se;  // relative standard error of the statistic over the replayed requests
  int64_t completed = 0;
};

// A replay completes at most this many requests: it bounds the fit's work
// and is how many of a large run's requests meet a warming or draining server.
inline constexpr int64_t kMaxReplayRequests = 300;

json scenario_for_bench_run(const json& base, const BenchRun& run, const json& calibration);
Replay replay_run(const FitBase& base, const BenchRun& run, const json& calibration);
// The most work units one replay of `run` may take (api estimate_work, high end).
int64_t replay_work_units(const FitBase& base, const BenchRun& run);

}  // namespace sightline::api
