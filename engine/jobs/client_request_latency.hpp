#pragma once
// The per-request client latency of a cluster calibration (network, HTTP,
// tokenizer: what a benchmark client measures on top of the server) applied to
// a serving simulation's result. The simulator predicts the server's TTFT and
// E2E; every request as the client sees it adds the constant L to both, and to
// nothing per token (TPOT and ITL stay). This is the one place that adds it:
// `run --calibration` and `fit`'s replays (fit/calibration_fit_replay) both run
// through make_single_job, which wraps a serving simulation in this job, so the
// fit models exactly what `run` applies.
#include <memory>

#include "run/job.hpp"
#include "scenario/scenario.hpp"
#include "serve/serving_metrics.hpp"

namespace sightline {

namespace serve {
class ServingJob;
}

// The calibration's per-request latency in ms (0 without a calibration).
double calibration_request_latency_ms(const Scenario& scenario);

// Adds `latency_ms` to every TTFT and E2E statistic of a serving run's typed
// metrics (ttft_ms, e2e_s: mean, min, percentiles, max; not the spread).
void add_request_latency(serve::ServingMetrics& metrics, double latency_ms);

// What a result says of the latency added (result.calibration_request_latency).
json request_latency_note(double latency_ms);

// `inner` (one run of `scenario`) with its cluster calibration applied where
// the cost model cannot: the per-request latency added to a serving
// simulation's result and key metrics, and a warning for each way the scenario
// lies outside what the calibration was fitted on (jobs/calibration_range).
// `serving` is `inner` when it is a serving simulation, else null (make_single_job,
// which made it, knows). Without a calibration, `inner` itself.
std::unique_ptr<Job> with_cluster_calibration(std::unique_ptr<Job> inner, const serve::ServingJob* serving,
                                              const Scenario& scenario);

}  // namespace sightline
