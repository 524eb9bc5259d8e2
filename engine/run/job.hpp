#pragma once
// A run of a scenario, sliced into units of work so a caller (the web worker)
// can report progress and cancel between slices.
#include <cstdint>
#include <memory>

#include "core/json_reader.hpp"
#include "run/key_metric.hpp"

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
  // The most units this job may do in all: its run's budget
  // (limits.max_work_units) less what ran before it. Work a job may skip
  // (the max-QPS search's longer reruns of a replication) runs only within
  // it; without a call, no limit. BudgetedJob sets it, and a job made of
  // other jobs passes each its share.
  virtual void limit_work(int64_t units) { (void)units; }
  // The result's headline numbers in order, taken from the typed result (not
  // read back out of its JSON); valid once step() returned true.
  virtual KeyMetrics key_metrics() const = 0;
  // The key metrics of each compare variant that carries its own (training), in order.
  virtual std::vector<KeyMetrics> variant_key_metrics() const { return {}; }
  // Figures outside the key metrics that carry an interval too (the serving
  // headline's throughput and goodput, the max-QPS answer): each id is the
  // JSON pointer of the figure in result(); the interval runs write
  // `<name>_low` / `<name>_high` beside it.
  virtual KeyMetrics interval_figures() const { return {}; }
  // The result's headline cards that are neither key metrics nor interval
  // figures, by catalogue id: the interval runs give each its interval in
  // the result's `intervals_80` ({id: [low, high]}), so that every card the
  // page shows can carry one.
  virtual KeyMetrics headline_figures() const { return {}; }
  // One figure of the finished result by its catalogue id, from the typed
  // result (never read back out of result()'s JSON): Missing where the run
  // has no such figure or its kind gives none by id (a serving simulation does).
  virtual KeyMetric figure(const std::string& id) const {
    KeyMetric k;
    k.id = id;
    return k;
  }
  // True when the run's arrivals outrun its service rate (its latencies grow
  // with its length), so a shorter run says little about a longer one.
  virtual bool overloaded() const { return false; }
  // The requests of the finished run's main simulation as it last ran (the
  // steady-state check may have grown it past the workload's count); 0 for a
  // run that is not a serving simulation.
  virtual int64_t requests_run() const { return 0; }
};

}  // namespace sightline
