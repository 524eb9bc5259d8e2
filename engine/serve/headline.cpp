#include "serve/headline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "serve/steady_state.hpp"

namespace sightline::serve {

namespace {

// The metric's value for one request in ms (infinite when it never completed;
// a request with one output token has no TPOT and meets any TPOT bound). ITL
// alone is judged per gap, below.
double metric_ms(const RequestOutcome& q, SloMetric m) {
  if (q.completion < 0) return HUGE_VAL;
  switch (m) {
    case kSloTtft: return static_cast<double>(q.first_token - q.arrival) * 1e-6;
    case kSloE2e: return static_cast<double>(q.completion - q.arrival) * 1e-6;
    case kSloTpot:
      return q.output_tokens > 1 ? static_cast<double>(q.completion - q.first_token) * 1e-6 /
                                       static_cast<double>(q.output_tokens - 1)
                                 : 0.0;
    case kSloItl: return 0.0;
  }
  return 0.0;
}

// Nearest-rank percentile (the smallest value with at least `share` of the
// values at or below it).
double nearest_rank(std::vector<double> v, double share) {
  if (v.empty()) return 0;
  sort_values(v);
  const double rank = std::ceil(share * static_cast<double>(v.size()) - 1e-9);
  const size_t i = static_cast<size_t>(std::max(1.0, rank)) - 1;
  return v[std::min(i, v.size() - 1)];
}

std::string pct_label(double share) {
  char b[16];
  std::snprintf(b, sizeof b, "P%d", static_cast<int>(std::lround(share * 100)));
  return b;
}

std::string percent(double share) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", share * 100);
  return b;
}

}  // namespace

std::string format_3sig(double v) {
  if (!std::isfinite(v)) return "unbounded";
  char b[64];
  if (std::fabs(v) >= 100) {
    std::snprintf(b, sizeof b, "%.0f", v);
    std::string s = b, out;
    const size_t start = s[0] == '-' ? 1 : 0;
    for (size_t i = 0; i < s.size(); ++i) {
      out += s[i];
      const size_t left = s.size() - 1 - i;
      if (i >= start && left > 0 && left % 3 == 0) out += ',';
    }
    return out;
  }
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

namespace {

// A closed loop's completions over the window [t0, t1) as batch means: the
// span cut into kBatches equal parts, each part's completion rate; their mean
// is the throughput. Their spread estimates its sampling error only when
// consecutive parts are nearly independent: each part at least twice the
// window's mean end-to-end time (how long the loop remembers a request). A
// shorter window keeps the Poisson interval, which is wider for a loop whose
// completions are regular.
void closed_loop_batch_means(const OutcomeView& q, int64_t lo, int64_t hi, TimeNs t0, TimeNs t1,
                             ServingHeadline& h) {
  constexpr int kBatches = 10;
  double e2e_s = 0;
  int64_t ended = 0;
  for (int64_t i = lo; i < hi; ++i) {
    const RequestOutcome& r = q[static_cast<size_t>(i)];
    if (r.completion < 0) continue;
    e2e_s += static_cast<double>(r.completion - r.arrival) * 1e-9;
    ++ended;
  }
  const double part_s = h.window_span_s / kBatches;
  if (ended == 0 || part_s < 2 * e2e_s / static_cast<double>(ended)) return;
  std::vector<int64_t> count(kBatches, 0);
  for (const RequestOutcome& r : q)
    if (r.completion >= t0 && r.completion < t1) {
      const double at_s = static_cast<double>(r.completion - t0) * 1e-9;
      ++count[static_cast<size_t>(std::min(kBatches - 1, static_cast<int>(at_s / part_s)))];
    }
  double ss = 0;
  for (int64_t c : count) {
    const double d = static_cast<double>(c) / part_s - h.throughput_qps;
    ss += d * d;
  }
  h.throughput_batches = kBatches;
  h.throughput_batch_se_qps = std::sqrt(ss / (kBatches - 1) / kBatches);
}

// The service rate an overloaded run measured: its completion rate while
// requests arrived. A run shorter than one request's latency completes none
// then, and measures no rate (not a rate of 0).
std::string service_rate_phrase(double capacity_qps) {
  return capacity_qps > 0 ? "about " + format_3sig(capacity_qps) + " req/s"
                          : "not measured: no request completed while requests were arriving";
}

}  // namespace

namespace {

// The two-sided 80% Wilson score interval of a share p observed on n requests.
void wilson_80(double p, double n, double& low, double& high) {
  const double z = 1.2815515655446004;  // two-sided 80%
  const double centre = (p + z * z / (2 * n)) / (1 + z * z / n);
  const double half = z / (1 + z * z / n) * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n));
  low = std::max(0.0, centre - half);
  high = std::min(1.0, centre + half);
}

}  // namespace

bool goodput_sampling_interval(const ServingHeadline& h, double& low_qps, double& high_qps) {
  if (!h.judged || !h.has_slo || h.window_requests <= 0 || !(h.throughput_qps > 0)) return false;
  const double p = std::clamp(h.goodput_qps / h.throughput_qps, 0.0, 1.0);
  wilson_80(p, static_cast<double>(h.window_requests), low_qps, high_qps);
  low_qps = std::min(h.throughput_qps * low_qps, h.goodput_qps);
  high_qps = std::max(h.throughput_qps * high_qps, h.goodput_qps);
  return high_qps > low_qps;
}

bool attainment_sampling_interval(const ServingHeadline& h, double& low, double& high) {
  if (!h.judged || !h.has_slo || h.window_requests <= 0) return false;
  wilson_80(h.slo_attainment, static_cast<double>(h.window_requests), low, high);
  low = std::min(low, h.slo_attainment);
  high = std::max(high, h.slo_attainment);
  return high > low;
}

bool throughput_sampling_interval(const ServingHeadline& h, double& low_qps, double& high_qps) {
  if (!h.judged || h.window_completions <= 0 || !(h.window_span_s > 0)) return false;
  if (h.throughput_batches > 1) {
    const double half = student_t_quantile(h.throughput_batches - 1, 0.8) * h.throughput_batch_se_qps;
    low_qps = std::max(0.0, h.throughput_qps - half);
    high_qps = h.throughput_qps + half;
    return high_qps > low_qps;
  }
  const double n = static_cast<double>(h.window_completions);
  const double z = 1.2815515655446004;  // two-sided 80%
  // Score interval of a Poisson mean from one count n: n + z²/2 ± z·sqrt(n + z²/4).
  const double centre = n + z * z / 2, half = z * std::sqrt(n + z * z / 4);
  low_qps = std::min((centre - half) / h.window_span_s, h.throughput_qps);
  high_qps = std::max((centre + half) / h.window_span_s, h.throughput_qps);
  return high_qps > low_qps;
}

namespace {

// Each SLO condition as measured over the window [lo, hi) of `q`: a
// percentile condition as that percentile of its metric, the joint one as the
// share within it.
std::vector<std::string> slo_condition_phrases(const OutcomeView& q, int64_t lo, int64_t hi, const SloSpec& slo) {
  std::vector<std::string> parts;
  for (const SloCondition& c : slo_conditions(slo)) {
    const bool alone = c.metrics == kSloTtft || c.metrics == kSloTpot || c.metrics == kSloItl || c.metrics == kSloE2e;
    const SloMetric m = static_cast<SloMetric>(c.metrics);
    if (alone && slo.percentile(m) > 0) {
      std::string value;
      if (m == kSloItl) {
        int64_t gaps = 0, over = 0;
        for (int64_t i = lo; i < hi; ++i) {
          gaps += q[static_cast<size_t>(i)].gaps;
          over += q[static_cast<size_t>(i)].gaps_over_itl;
        }
        value = percent(gaps > 0 ? 1.0 - static_cast<double>(over) / static_cast<double>(gaps) : 1.0) + " of gaps within " +
                format_3sig(slo.itl_ms) + " ms (" + pct_label(c.share) + " ITL asks " + percent(c.share) + ")";
      } else {
        std::vector<double> v;
        v.reserve(static_cast<size_t>(hi - lo));
        for (int64_t i = lo; i < hi; ++i) v.push_back(metric_ms(q[static_cast<size_t>(i)], m));
        value = pct_label(c.share) + " " + slo_metric_name(m) + " " + format_3sig(nearest_rank(std::move(v), c.share)) + " ms of " +
                format_3sig(slo.bound_ms(m));
      }
      parts.push_back(value);
    } else {
      int64_t within = 0;
      for (int64_t i = lo; i < hi; ++i) within += meets_slo(q[static_cast<size_t>(i)], slo, c.metrics) ? 1 : 0;
      std::string bounds;
      for (SloMetric mm : {kSloTtft, kSloTpot, kSloItl, kSloE2e})
        if (c.metrics & mm) {
          if (!bounds.empty()) bounds += " and ";
          bounds += std::string(slo_metric_name(mm)) + " " + format_3sig(slo.bound_ms(mm)) + " ms";
        }
      parts.push_back(percent(static_cast<double>(within) / static_cast<double>(hi - lo)) + " of requests within " + bounds +
                      " (" + percent(c.share) + " required)");
    }
  }
  return parts;
}

}  // namespace

ServingHeadline serving_headline(const OutcomeView& outcomes, const SloSpec& slo,
                                 const WorkloadSpec& workload) {
  const ArrivalSpec& arrival = workload.arrival;
  const bool rate_based = arrival.process == ArrivalProcess::Poisson || arrival.process == ArrivalProcess::Gamma ||
                          arrival.process == ArrivalProcess::Fixed;
  // A capped client sends only as fast as its slots free: the server sees
  // the sends, not the drawn rate, and the backlog waits at the client. A
  // cap at or above the request count never binds: that run is uncapped.
  const bool client_capped =
      arrival.max_concurrency > 0 && arrival.max_concurrency < static_cast<int64_t>(outcomes.size());
  const double offered_qps = rate_based && !client_capped ? arrival.rate_qps : 0.0;
  ServingHeadline h;
  h.has_slo = slo.enabled;
  SteadyStateOptions o;
  judge_as_workload(o, workload);
  const SteadyStateReport rep = judge_steady_state(outcomes, slo, 0, 0, 0, o);
  h.arrival_rate_qps = rep.arrival_rate_qps;
  // Overload: the judge's growth test (arrivals minus completions over the
  // window against its Poisson scale) or completions falling behind. The
  // run's completion rate while it is overloaded is its service rate.
  if (rep.overloaded && arrival.process != ArrivalProcess::ClosedLoop && !client_capped) {
    h.overloaded = true;
    h.capacity_qps = rep.completion_rate_qps;
    h.warning = "overload: arrivals (" + format_3sig(rep.arrival_rate_qps) + " req/s) outrun the service rate (" +
                service_rate_phrase(h.capacity_qps) + (h.capacity_qps > 0 ? ", the run's completion rate while overloaded" : "") +
                "): the queue grows without bound, so the latencies grow with the run's length; lower the rate or add "
                "capacity";
  }
  std::vector<RequestOutcome> sorted;
  const OutcomeView q = arrived_by_arrival(outcomes, sorted);
  const int64_t n = static_cast<int64_t>(q.size());
  const int64_t lo = rep.warmup_requests, hi = n - rep.cooldown_requests;
  // A multi-turn workload's rate_qps is sessions per second: its turns' rate
  // (the requests the judge read) is named first, in the unit of the figures
  // beside it ("stable at 0.5 req/s: 0.736 req/s completed" read as more done than sent).
  const std::string rate =
      workload.sessions.enabled && offered_qps > 0
          ? format_3sig(rep.arrival_rate_qps) + " req/s (" + format_3sig(offered_qps) + " sessions/s)"
          : format_3sig(offered_qps > 0 ? offered_qps : rep.arrival_rate_qps) + " req/s";
  h.window_requests = std::max<int64_t>(0, hi - lo);
  h.judged = rep.measured_requests >= 2 * o.min_batch_requests;
  if (!h.judged) {
    h.verdict = "undecided";
    h.line = std::string("undecided at ") + rate + ": " + (rep.unstable_reason ? rep.unstable_reason : "too few requests") +
             " (the run needs about " + std::to_string(rep.needed_requests) + " requests to judge its steady state)";
    if (h.overloaded) {
      h.verdict = slo.enabled ? "fails" : "";
      h.line = (slo.enabled ? "fails the SLO at " : "overloaded at ") + rate + ": arrivals outrun the service rate (" +
               service_rate_phrase(h.capacity_qps) + ")";
    }
    return h;
  }
  // Throughput and goodput: completions inside the window's span of arrival times.
  const TimeNs t0 = q[static_cast<size_t>(lo)].arrival, t1 = q[static_cast<size_t>(hi - 1)].arrival;
  const double span_s = static_cast<double>(std::max<TimeNs>(1, t1 - t0)) * 1e-9;
  int64_t done = 0, good = 0;
  for (const RequestOutcome& r : q)
    if (r.completion >= t0 && r.completion < t1) {
      ++done;
      if (slo.enabled && meets_slo(r, slo)) ++good;
    }
  if (slo.enabled) {
    int64_t within = 0;
    for (int64_t i = lo; i < hi; ++i) within += meets_slo(q[static_cast<size_t>(i)], slo) ? 1 : 0;
    h.slo_attainment = static_cast<double>(within) / static_cast<double>(hi - lo);
  }
  h.window_completions = done;
  h.window_span_s = span_s;
  h.throughput_qps = static_cast<double>(done) / span_s;
  h.goodput_qps = static_cast<double>(good) / span_s;
  if (arrival.process == ArrivalProcess::ClosedLoop) closed_loop_batch_means(q, lo, hi, t0, t1, h);
  if (!slo.enabled) {
    h.line = h.overloaded ? "overloaded at " + rate + ": arrivals outrun the service rate (" +
                                service_rate_phrase(h.capacity_qps) + ")"
                          : "stable at " + rate + ": " + format_3sig(h.throughput_qps) + " req/s completed over the steady window";
    return h;
  }
  const std::vector<std::string> parts = slo_condition_phrases(q, lo, hi, slo);
  h.verdict = rep.verdict == Verdict::Meets ? "meets" : rep.verdict == Verdict::Fails ? "fails" : "undecided";
  h.line = h.verdict == "meets" ? "meets the SLO at " : h.verdict == "fails" ? "fails the SLO at " : "undecided at ";
  h.line += rate + ": ";
  for (size_t i = 0; i < parts.size(); ++i) h.line += (i ? ", " : "") + parts[i];
  if (h.overloaded) h.line += "; overloaded (service rate " + service_rate_phrase(h.capacity_qps) + ")";
  // Failed on stability, not on the shares above (which may all be met): why.
  else if (!rep.stable && rep.verdict == Verdict::Fails && rep.unstable_reason)
    h.line += std::string("; unstable: ") + rep.unstable_reason;
  else if (rep.verdict == Verdict::Uncertain)
    h.line += rep.needed_requests > n ? "; " + std::to_string(n) + " requests are too few to decide (about " +
                                            std::to_string(rep.needed_requests) + " would)"
                                      : "; too close to the bound to decide in " + std::to_string(n) + " requests";
  return h;
}

json ServingHeadline::to_json() const {
  json j;
  j["window_requests"] = window_requests;
  j["arrival_rate_qps"] = arrival_rate_qps;
  j["throughput_qps"] = judged ? json(throughput_qps) : json(nullptr);
  j["goodput_qps"] = judged && has_slo ? json(goodput_qps) : json(nullptr);
  j["slo_attainment"] = judged && has_slo ? json(slo_attainment) : json(nullptr);
  j["verdict"] = has_slo ? json(verdict) : json(nullptr);
  j["line"] = line;
  j["overloaded"] = overloaded;
  j["estimated_capacity_qps"] = overloaded && capacity_qps > 0 ? json(capacity_qps) : json(nullptr);
  j["meaning"] = "over the steady arrival window (after the warm-up, before the drain where arrivals have stopped): "
                 "throughput and goodput are completions (within every SLO bound, for goodput) inside the window's "
                 "span of arrival times per second of it; slo_attainment is the share of the window's requests within "
                 "every SLO bound";
  return j;
}

}  // namespace sightline::serve
