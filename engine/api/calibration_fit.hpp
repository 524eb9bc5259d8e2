#pragma once
// `sightline fit`: fits a ClusterCalibration (perf/cluster_calibration.hpp) to
// a user's benchmark runs (api/bench_import.hpp) on a base scenario that
// describes the deployment (model, GPU, parallelism, stack). Each run is
// replayed as a serving simulation of the workload as run; the factors minimize
// a robust (Huber) loss of log(predicted / measured) mean TTFT and TPOT plus
// weak priors that pull every factor toward "no correction". Runs are split
// deterministically into a fit set and a held-out set (every third run) whose
// error the report gives; the final factors are refitted on every run.
#include <string>
#include <vector>

#include "api/bench_import.hpp"

namespace sightline::api {

// The serving scenario that replays `run` on `base` (a scenario document),
// with `calibration` (null: none) in its cost model.
json scenario_for_bench_run(const json& base, const BenchRun& run, const json& calibration);

// The calibration file: {id, source, factors, fit: {report}}. Throws located
// errors for a base scenario that is not a serving one.
json fit_cluster_calibration(const json& base, const std::vector<BenchRun>& runs, const std::string& id,
                             const std::string& source);

}  // namespace sightline::api
