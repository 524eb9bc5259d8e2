#include "jobs/make_job.hpp"

#include <utility>

#include "jobs/client_request_latency.hpp"
#include "jobs/interval_job.hpp"
#include "infer/latency_job.hpp"
#include "serve/serving_job.hpp"
#include "train/training_job.hpp"

namespace sightline {

std::unique_ptr<Job> make_job(const Scenario& scenario, IntervalMode mode) {
  return std::make_unique<IntervalJob>(scenario, mode);
}

namespace {

// The job of one run; `serving` is set to it when it is a serving simulation
// (known here, where it is made, so nothing downstream casts to find out).
std::unique_ptr<Job> make_simulator_job(const Scenario& scenario, const serve::ServingJob*& serving) {
  serving = nullptr;
  if (scenario.training) return std::make_unique<TrainingJob>(scenario);
  // Otherwise validation guarantees a serving section.
  if (scenario.serving && scenario.serving->mode == "simulate") {
    auto job = std::make_unique<serve::ServingJob>(scenario);
    serving = job.get();
    return job;
  }
  return std::make_unique<LatencyJob>(scenario);
}

}  // namespace

const char* result_kind(const Scenario& scenario) {
  if (scenario.training) return "training";
  if (scenario.serving && scenario.serving->mode == "simulate") return "serving_simulation";
  return "serving_latency";
}

// A cluster calibration's per-request latency and range warnings
// (jobs/client_request_latency) on every run, the fit's replays included.
std::unique_ptr<Job> make_single_job(const Scenario& scenario, const serve::ServingJob** serving) {
  const serve::ServingJob* simulation = nullptr;
  std::unique_ptr<Job> job = make_simulator_job(scenario, simulation);
  if (serving) *serving = simulation;
  return with_cluster_calibration(std::move(job), simulation, scenario);
}

}  // namespace sightline
