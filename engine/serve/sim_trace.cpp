// A detailed serving run's time series and Chrome trace (sim_trace.hpp).
#include "serve/sim_trace.hpp"

#include <string>

namespace sightline::serve {

void SimTrace::on_step(const Replica& r, const StepBatch& b, TimeNs dur, const Utilization& u, MetricsRecorder& rec,
                       int64_t kv_total, TimeNs since_start) {
  if (!detailed_) return;
  SeriesSample s;
  s.mfu = u.compute;
  s.mbu = u.memory;
  const int64_t used = rec.kv_blocks_used();
  s.running = static_cast<double>(rec.running());
  s.waiting = static_cast<double>(rec.waiting());
  s.batch_size = static_cast<double>(b.items.size());
  s.tokens = static_cast<double>(b.prefill_tokens + b.decode_tokens);
  s.kv_blocks_used = static_cast<double>(used);
  s.kv_utilization = kv_total > 0 ? static_cast<double>(used) / static_cast<double>(kv_total) : 0;
  series_.add(since_start, s);
  rec.note_sample();
  if (!outputs_.trace) return;
  if (static_cast<int64_t>(steps_.size()) < outputs_.trace_max_steps)
    steps_.push_back(Step{r.index, b.engine, b.start, dur, static_cast<int32_t>(b.items.size()), b.prefill_tokens,
                          b.decode_tokens});
  else
    truncated_ = true;
}

void SimTrace::on_transfer(int32_t req, int src, int dst, TimeNs start, TimeNs dur) {
  if (!detailed_ || !outputs_.trace) return;
  if (static_cast<int64_t>(transfers_.size()) < outputs_.trace_max_steps)
    transfers_.push_back(Transfer{req, src, dst, start, dur});
  else
    truncated_ = true;
}

json SimTrace::chrome_trace(const std::vector<Replica>& replicas, const std::vector<PoolSpec>& pools) const {
  json ev = json::array();
  for (const Replica& r : replicas) {
    ev.push_back({{"name", "process_name"},
                  {"ph", "M"},
                  {"pid", r.index},
                  {"args", {{"name", pools[static_cast<size_t>(r.pool)].name + " replica " + std::to_string(r.index)}}}});
  }
  for (const Step& t : steps_) {
    const char* name = t.prefill_tokens > 0 && t.decode_tokens > 0 ? "mixed" : t.prefill_tokens > 0 ? "prefill" : "decode";
    ev.push_back({{"name", name},
                  {"cat", "step"},
                  {"ph", "X"},
                  {"pid", t.replica},
                  {"tid", t.engine},
                  {"ts", static_cast<double>(t.start) * 1e-3},
                  {"dur", static_cast<double>(t.dur) * 1e-3},
                  {"args", {{"requests", t.requests}, {"prefill_tokens", t.prefill_tokens}, {"decode_tokens", t.decode_tokens}}}});
  }
  for (const Transfer& t : transfers_) {
    ev.push_back({{"name", "kv_transfer"},
                  {"cat", "transfer"},
                  {"ph", "X"},
                  {"pid", t.src},
                  {"tid", 100},
                  {"ts", static_cast<double>(t.start) * 1e-3},
                  {"dur", static_cast<double>(t.dur) * 1e-3},
                  {"args", {{"request", t.req}, {"to_replica", t.dst}}}});
  }
  return {{"traceEvents", ev}, {"displayTimeUnit", "ms"}};
}

}  // namespace sightline::serve
