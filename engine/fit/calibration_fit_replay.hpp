#pragma once
// How `fit` replays one benchmark run on the base scenario (the load as the
// tool applied it, the lengths it recorded) and which of the run's figures it
// compares with which statistic of the replay. Every failure of a replay is
// located in the user's own documents: the benchmark file's key that gave the
// offending quantity, or the base scenario's path.
#include <map>
#include <string>
#include <vector>

#include "fit/bench_import.hpp"

namespace sightline::fit {

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
  double measured_rel_se = 0;  // the measured mean's own relative standard error (0: the file records no spread)
};

// Latency figures of the run (means where recorded, else medians); a closed
// batch (MLPerf Offline) compares its output token throughput instead.
std::vector<FitTarget> fit_targets(const BenchRun& run);

struct Replay {
  std::map<std::string, double> value;   // statistic -> predicted value
  std::map<std::string, double> rel_se;  // relative standard error of the statistic over the replayed requests
  int64_t completed = 0;
};

// A replay makes as many requests as the run completed, so an overloaded
// run's backlog builds as it did, and the same share of requests meets a
// warming or draining server. When the fit's work budget cannot pay for that
// (size_replays), the largest runs are cut to a common count, never below
// this many requests (or the run's own count), and the report says so.
inline constexpr int64_t kMinReplayRequests = 300;
// The most requests a replay makes (the serving simulator's default limits.max_requests).
inline constexpr int64_t kMaxReplayRequests = 60000;

// Requests a replay of `run` makes: the fit's choice, else every completed
// request, or every request sent for a run cut in flight (at most kMaxReplayRequests).
int64_t replay_requests(const BenchRun& run);
// Where a replay of a run cut in flight stops (simulated s; 0: it drains).
double replay_stop_s(const BenchRun& run);
// A replay stopped at its benchmark's end must finish about as many requests
// as the run did (its successful and errored ones): located refusal at the
// run's count otherwise. The two differ by the arrival draw, a Poisson count
// over the window with a standard deviation of sqrt(sent): 3 of them; and by
// the requests in flight at the stop, rate x latency by Little's law: the
// file's `cut` against the replay's own, so a replay whose latency is anywhere
// from none to twice the run's passes (what a calibration corrects). Beyond
// that it describes another run, and its figures would be compared over
// another set of requests. No-op for a run that drained.
void check_stopped_count(const std::string& base_name, const BenchRun& run, int64_t completed);

json scenario_for_bench_run(const json& base, const BenchRun& run, const json& calibration);
Replay replay_run(const FitBase& base, const BenchRun& run, const json& calibration);
// The most events one replay of `run` may make (api estimate_work, high end,
// over its units per event): the measure of FitOptions' budget.
int64_t replay_work_units(const FitBase& base, const BenchRun& run);

// Sets each run's replay_requests so that one evaluation (a replay of every
// run) costs at most `units_per_evaluation`: every completed request where
// that fits, else the largest runs cut to the largest common count that does
// (never below kMinReplayRequests). Returns one line per run cut, for the report.
std::vector<std::string> size_replays(const FitBase& base, std::vector<BenchRun>& runs, int64_t units_per_evaluation);

}  // namespace sightline::fit
