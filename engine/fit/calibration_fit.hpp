#pragma once
// `sightline fit`: fits a ClusterCalibration (perf/cluster_calibration.hpp) to
// a user's benchmark runs (fit/bench_import.hpp) on a base scenario that
// describes the deployment (model, GPU, parallelism, stack). Each run is
// replayed as a serving simulation of the load as the tool applied it
// (fit/calibration_fit_replay.hpp); the factors minimize a robust (Huber) loss
// of log(predicted / measured) TTFT and TPOT (or a closed batch's throughput)
// plus weak priors toward "no correction". Only the factors the runs identify
// are fitted (finite standard error, scaled by the misfit, below a bound);
// the others are held at "no correction" in the written file and named. Runs
// are split deterministically into a fit set and a held-out set (every third
// run by default) whose error the report gives; the final factors are refitted
// on every run, and each run is then predicted by the factors refitted without
// it (leave-one-run-out). The report records what the fit was fitted on
// (fit.fitted_on: models, GPU, stack, load and length ranges), which `run
// --calibration` checks. The work is estimated before the first replay and capped.
#include <functional>
#include <string>
#include <vector>

#include "fit/bench_import.hpp"
#include "fit/calibration_fit_replay.hpp"

namespace sightline::fit {

struct FitOptions {
  // Simulation work the whole fit may spend, in serving events (each
  // replay's estimate, high end, in events: replay_work_units, times the
  // replays it makes), not run's units: its replays' events cost alike, and
  // the default keeps a fit within about 60 s of CPU natively
  // (docs/calibrate-from-benchmarks.md).
  static constexpr int64_t kDefaultWorkUnits = 12'000'000;
  static constexpr int64_t kMaxWorkUnits = 10'000'000'000;
  // The most a fit through the JSON API (the page's worker) may ask for, as
  // RunLimits::kApiCeiling is twice a run's default: the native CLI alone
  // goes up to kMaxWorkUnits.
  static constexpr int64_t kApiCeiling = 2 * kDefaultWorkUnits;
  int64_t max_work_units = kDefaultWorkUnits;
  // Called after every replay with the share of the fit's replay bound done
  // (0..1; the bound is the budget's, so a fit that converges early jumps to
  // done): how the page's worker reports progress on a call that blocks.
  std::function<void(double)> on_progress;
  // Every N-th run (N >= 2) is held out of a first fit that reports its error
  // on them (`fit --holdout-every N`); 0 holds none out.
  int holdout_every = 3;
};

// The calibration file: {id, source, factors, fit: {report}}. Throws located
// errors (in a benchmark file or the base scenario) for runs that cannot be
// replayed or that determine no factor.
json fit_cluster_calibration(const FitBase& base, const std::vector<BenchRun>& runs, const std::string& id,
                             const std::string& source, const FitOptions& options = {});

}  // namespace sightline::fit
