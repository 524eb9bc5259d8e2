#include "api/job.hpp"

#include "infer/latency_job.hpp"

namespace sightline {

std::unique_ptr<Job> make_job(const Scenario& scenario) {
  // Validation guarantees a serving section in "latency" mode for now.
  return std::make_unique<LatencyJob>(scenario);
}

}  // namespace sightline
