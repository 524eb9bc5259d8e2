#pragma once
// A run of a scenario, sliced into units of work so a caller (the web worker)
// can report progress and cancel between slices.
#include <cstdint>
#include <memory>

#include "core/json_reader.hpp"
#include "scenario/scenario.hpp"

namespace sightline {

class Job {
 public:
  virtual ~Job() = default;
  // Does at most `max_units` units of work; returns true once finished.
  virtual bool step(int64_t max_units) = 0;
  virtual double progress() const = 0;  // 0..1
  virtual json result() const = 0;      // valid once step() returned true
  // Units of work done so far (monotone). The run's work budget
  // (limits.max_work_units) counts these, so every kind must report them.
  virtual int64_t units_done() const = 0;
};

// The job of a scenario, with intervals on its key metrics (an IntervalJob).
std::unique_ptr<Job> make_job(const Scenario& scenario);

// One run of the scenario at its cost bound, without intervals.
std::unique_ptr<Job> make_single_job(const Scenario& scenario);

}  // namespace sightline
