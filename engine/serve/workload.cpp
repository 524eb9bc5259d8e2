#include "serve/workload.hpp"

#include <algorithm>
#include <cmath>

#include "serve/rng.hpp"

namespace sightline::serve {

namespace {

int64_t round_clamp(double x, int64_t lo, int64_t hi) {
  const double r = std::floor(x + 0.5);
  if (!(r >= static_cast<double>(lo))) return lo;
  if (r > static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(r);
}

}  // namespace

LengthSampler::LengthSampler(const LengthSpec& l, Rng rng) : l_(l), rng_(rng) {
  if (l.dist == LengthDist::Zipf) zipf_ = ZipfTable(l.min, l.max, l.theta);
  if (l.dist == LengthDist::Lognormal) {
    const double s2 = det_log(1.0 + l.cv * l.cv);
    sigma_ = std::sqrt(s2);
    mu_ = det_log(l.mean) - 0.5 * s2;
  }
}

int64_t LengthSampler::draw() {
  switch (l_.dist) {
    case LengthDist::Fixed: return static_cast<int64_t>(l_.value);
    case LengthDist::Uniform: return rng_.uniform_int(l_.min, l_.max);
    case LengthDist::Normal: return round_clamp(rng_.normal(l_.mean, l_.stddev), l_.min, l_.max);
    case LengthDist::Lognormal: return round_clamp(rng_.lognormal(mu_, sigma_), l_.min, l_.max);
    case LengthDist::Zipf: return zipf_.sample(rng_);
  }
  return 1;
}

double next_arrival_s(const ArrivalSpec& a, double rate, int64_t i, double t, Rng& rng) {
  switch (a.process) {
    case ArrivalProcess::Poisson: return t + rng.exponential(rate);
    case ArrivalProcess::Gamma: {
      const double shape = 1.0 / (a.cv * a.cv);
      return t + rng.gamma(shape, 1.0 / (rate * shape));
    }
    case ArrivalProcess::Fixed: return static_cast<double>(i) / rate;
    case ArrivalProcess::AllAtOnce:
    case ArrivalProcess::Trace:
    case ArrivalProcess::ClosedLoop: return 0;  // a closed loop's later arrivals: set by the simulator
  }
  return t;
}

double natural_rate_qps(const SimulationSpec& spec) {
  const auto& a = spec.workload.arrival;
  switch (a.process) {
    case ArrivalProcess::Poisson:
    case ArrivalProcess::Gamma:
    case ArrivalProcess::Fixed: return a.rate_qps;
    case ArrivalProcess::AllAtOnce:
    case ArrivalProcess::ClosedLoop: return 0;
    case ArrivalProcess::Trace: {
      const int64_t n = std::min<int64_t>(spec.workload.num_requests, static_cast<int64_t>(a.trace.size()));
      if (n < 2) return 0;
      const double span = a.trace[static_cast<size_t>(n - 1)].arrival_s - a.trace.front().arrival_s;
      return span > 0 ? static_cast<double>(n - 1) / span : 0;
    }
  }
  return 0;
}

namespace {
// generate_workload's sink: its requests' list.
class ListSink : public RequestSink {
 public:
  explicit ListSink(std::vector<RequestSpec>& list) : list_(list) {}
  void reserve(size_t n) override { list_.reserve(n); }
  void add(const RequestSpec& r) override { list_.push_back(r); }

 private:
  std::vector<RequestSpec>& list_;
};
// The arrival gaps' stream: generate_workload's and nth_arrival_s's draws are the same.
Rng arrival_stream(uint64_t seed) { return Rng(stream_seed(seed, "arrivals")); }

}  // namespace

double nth_arrival_s(const SimulationSpec& spec, uint64_t seed, int64_t n) {
  const ArrivalSpec& a = spec.workload.arrival;
  if (spec.workload.sessions.enabled || (a.process != ArrivalProcess::Poisson && a.process != ArrivalProcess::Gamma)) return 0;
  Rng arrivals = arrival_stream(seed);
  double t = 0;
  for (int64_t i = 0; i < n; ++i) t = next_arrival_s(a, a.rate_qps, i, t, arrivals);
  return t;
}

GeneratedWorkload generate_workload(const SimulationSpec& spec, uint64_t seed, const WorkloadOverride& o) {
  if (spec.workload.sessions.enabled) return generate_sessions(spec, seed, o);
  GeneratedWorkload out;
  ListSink list(out.requests);
  generate_workload_into(spec, seed, o, out, list);
  return out;
}

void generate_workload_into(const SimulationSpec& spec, uint64_t seed, const WorkloadOverride& o,
                            GeneratedWorkload& out, RequestSink& sink) {
  if (spec.workload.sessions.enabled) {
    out = generate_sessions(spec, seed, o);
    sink.reserve(out.requests.size());
    for (const RequestSpec& r : out.requests) sink.add(r);
    std::vector<RequestSpec>().swap(out.requests);
    return;
  }
  const WorkloadSpec& w = spec.workload;
  const int64_t max_len = spec.kv.max_model_len;
  Rng arrivals = arrival_stream(seed);
  Rng prefix_rng(stream_seed(seed, "prefix"));
  Rng lora_rng(stream_seed(seed, "lora"));
  Rng model_rng(stream_seed(seed, "model_mix"));
  ZipfTable lora_zipf;
  if (spec.lora.enabled && spec.lora.popularity_zipf > 0)
    lora_zipf = ZipfTable(0, spec.lora.adapters - 1, spec.lora.popularity_zipf);

  auto finish = [&](RequestSpec& r) {
    if (spec.lora.enabled)
      r.adapter = static_cast<int32_t>(lora_zipf.empty() ? lora_rng.uniform_int(0, spec.lora.adapters - 1)
                                                         : lora_zipf.sample(lora_rng));
    if (spec.colocated.enabled) r.model = model_rng.bernoulli(spec.colocated.traffic_fraction) ? 1 : 0;
    if (r.prompt + r.output > max_len) {
      r.output = req_tokens(std::max<int64_t>(1, max_len - r.prompt));
      ++out.truncated_outputs;
    }
    sink.add(r);
  };

  if (w.arrival.process == ArrivalProcess::Trace) {
    const int64_t n = std::min<int64_t>(o.num_requests.value_or(w.num_requests), static_cast<int64_t>(w.arrival.trace.size()));
    double scale = 1.0;
    const double natural = natural_rate_qps(spec);
    if (o.rate_qps && natural > 0) scale = natural / *o.rate_qps;
    const double t0 = w.arrival.trace.front().arrival_s;
    sink.reserve(static_cast<size_t>(std::max<int64_t>(0, n)));
    for (int64_t i = 0; i < n; ++i) {
      const TraceRow& row = w.arrival.trace[static_cast<size_t>(i)];
      RequestSpec r;
      r.arrival = to_ns(t0 + (row.arrival_s - t0) * scale, "/serving/workload/arrival/trace", "a trace arrival time");
      r.prompt = req_tokens(row.prompt_tokens);
      r.output = req_tokens(row.output_tokens);
      if (row.prefix_group >= 0 && row.prefix_tokens > 0) {
        r.prefix_group = static_cast<int32_t>(row.prefix_group);
        r.prefix_tokens = req_tokens(std::min<int64_t>(row.prefix_tokens, r.prompt - 1));
      }
      finish(r);
    }
    return;
  }

  LengthSampler prompt(w.prompt, Rng(stream_seed(seed, "prompt_tokens")));
  LengthSampler output(w.output, Rng(stream_seed(seed, "output_tokens")));
  const double rate = o.rate_qps.value_or(w.arrival.rate_qps);
  int64_t count = o.num_requests.value_or(w.num_requests);
  const bool by_duration = !o.num_requests && w.num_requests == 0;
  const int64_t cap = spec.limits.max_requests;
  const TimeNs end = by_duration ? to_ns(w.duration_s, "/serving/workload/duration_s", "the workload duration") : 0;
  // A closed-loop client's pause before its next request (the simulator sets that arrival).
  const TimeNs think = w.arrival.process == ArrivalProcess::ClosedLoop
                           ? to_ns(w.arrival.think_time_s, "/serving/workload/arrival/think_time_s", "a think time")
                           : 0;
  double t = 0;
  // Sized once when the count is known: doubling its way to a million
  // requests held 1.5x their bytes at each reallocation, and kept up to 2x.
  if (!by_duration && count > 0) sink.reserve(static_cast<size_t>(count));
  for (int64_t i = 0;; ++i) {
    if (!by_duration && i >= count) break;
    if (by_duration && i >= cap) {
      out.capped = true;
      break;
    }
    t = next_arrival_s(w.arrival, rate, i, t, arrivals);
    RequestSpec r;
    r.arrival = to_ns(t, "/serving/workload/arrival/rate_qps", "an arrival time");
    r.think = think;
    if (by_duration && r.arrival >= end) break;
    r.prompt = req_tokens(prompt.draw());
    r.output = req_tokens(output.draw());
    if (w.prefix.enabled && prefix_rng.bernoulli(w.prefix.request_fraction)) {
      r.prefix_group = static_cast<int32_t>(prefix_rng.uniform_int(0, w.prefix.groups - 1));
      r.prefix_tokens = req_tokens(std::min<int64_t>(w.prefix.tokens, r.prompt - 1));
      if (r.prefix_tokens <= 0) r.prefix_group = -1;
    }
    finish(r);
  }
}

std::vector<int32_t> arrival_order(const std::vector<RequestSpec>& requests) {
  return arrival_order_of(requests.size(), [&](size_t i) { return requests[i].arrival; });
}

}  // namespace sightline::serve
