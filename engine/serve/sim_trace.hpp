#pragma once
// A detailed serving run's records, fed by the simulation's hooks as steps
// start and KV transfers begin: the time series (occupancy, batch and
// utilization sampled at every step) and the Chrome trace's step and transfer
// spans (up to outputs.trace_max_steps). A search run keeps none of them.
#include <cstdint>
#include <vector>

#include "core/json_reader.hpp"
#include "perf/power.hpp"
#include "scenario/simulation_spec.hpp"
#include "serve/metrics_recorder.hpp"
#include "serve/sim_state.hpp"
#include "serve/stats.hpp"

namespace sightline::serve {

class SimTrace {
 public:
  // `detailed`: keep the records (otherwise every hook does nothing).
  SimTrace(const OutputSpec& outputs, bool detailed) : outputs_(outputs), detailed_(detailed), series_(outputs.time_series_points) {}

  // A step of replica `r` started `since_start` after the first arrival and
  // lasts `dur`: a time-series sample of the recorder's occupancy (whose
  // maxima the sample raises) out of `kv_total` blocks, and a trace span.
  void on_step(const Replica& r, const StepBatch& b, TimeNs dur, const Utilization& u, MetricsRecorder& rec,
               int64_t kv_total, TimeNs since_start);
  // Request `req`'s KV moves from replica `src` to `dst` over [start, start + dur).
  void on_transfer(int32_t req, int src, int dst, TimeNs start, TimeNs dur);

  bool truncated() const { return truncated_; }  // the trace stopped at trace_max_steps
  json series_json() const { return series_.to_json(); }
  // Chrome's trace-event format: a process per replica (named after its pool).
  json chrome_trace(const std::vector<Replica>& replicas, const std::vector<PoolSpec>& pools) const;

 private:
  struct Step {
    int32_t replica;
    int32_t engine;
    TimeNs start, dur;
    int32_t requests;
    int64_t prefill_tokens, decode_tokens;
  };
  struct Transfer {
    int32_t req, src, dst;
    TimeNs start, dur;
  };
  const OutputSpec& outputs_;
  bool detailed_;
  TimeSeries series_;
  std::vector<Step> steps_;
  std::vector<Transfer> transfers_;
  bool truncated_ = false;
};

}  // namespace sightline::serve
