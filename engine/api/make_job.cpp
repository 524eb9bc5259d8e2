#include "api/make_job.hpp"

#include <utility>

#include "api/client_request_latency.hpp"
#include "api/interval_job.hpp"
#include "infer/latency_job.hpp"
#include "serve/serving_job.hpp"
#include "train/training_job.hpp"

namespace sightline {

std::unique_ptr<Job> make_job(const Scenario& scenario, IntervalMode mode) {
  return std::make_unique<IntervalJob>(scenario, mode);
}

namespace {

std::unique_ptr<Job> make_simulator_job(const Scenario& scenario) {
  if (scenario.training) return std::make_unique<TrainingJob>(scenario);
  // Otherwise validation guarantees a serving section.
  if (scenario.serving && scenario.serving->mode == "simulate") return std::make_unique<serve::ServingJob>(scenario);
  return std::make_unique<LatencyJob>(scenario);
}

}  // namespace

const char* result_kind(const Scenario& scenario) {
  if (scenario.training) return "training";
  if (scenario.serving && scenario.serving->mode == "simulate") return "serving_simulation";
  return "serving_latency";
}

// A cluster calibration's per-request latency and range warnings
// (api/client_request_latency) on every run, the fit's replays included.
std::unique_ptr<Job> make_single_job(const Scenario& scenario, const serve::ServingJob** serving) {
  std::unique_ptr<Job> job = make_simulator_job(scenario);
  if (serving) *serving = dynamic_cast<const serve::ServingJob*>(job.get());
  return with_cluster_calibration(std::move(job), scenario);
}

}  // namespace sightline
