#pragma once
// A run of a scenario, sliced into units of work so a caller (the web worker)
// can report progress and cancel between slices.
#include <cstdint>
#include <memory>

#include "core/json_reader.hpp"

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

}  // namespace sightline
