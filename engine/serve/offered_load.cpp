#include "serve/offered_load.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace sightline::serve {

namespace {

// Completions falling this far behind arrivals over the window mean the
// system is not keeping pace, whatever the trend test says.
constexpr double kMinCompletionShare = 0.9;

// The requests of q (sorted by arrival) that arrived while sessions still
// did: up to the last session's first turn, and any turn at the same instant.
// After it a multi-turn run drains (no new session comes, each ends after its
// turns): judged with them, an overloaded run whose queue grew while sessions
// arrived and shrank in its drain read as stable (S.chat-offload at 0.5
// sessions/s, 1,000 sessions: 12 turns in the system at 250 s, 440 at 2,000 s
// when the last session came, a turn's wait 1 s to 198 s; "stable at 1.69 req/s").
int64_t arrived_while_sessions_arrive(const OutcomeView& q) {
  const int64_t n = static_cast<int64_t>(q.size());
  int64_t last = -1;
  for (int64_t i = n - 1; i >= 0 && last < 0; --i)
    if (q[static_cast<size_t>(i)].session_start) last = i;
  if (last < 0) return n;
  const TimeNs at = q[static_cast<size_t>(last)].arrival;
  int64_t end = last + 1;
  while (end < n && q[static_cast<size_t>(end)].arrival <= at) ++end;
  return end;
}

// The first of q's requests (sorted by arrival) to arrive at or after t.
int64_t first_arrival_at(const OutcomeView& q, TimeNs t) {
  size_t lo = 0, hi = q.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (q[mid].arrival < t) lo = mid + 1;
    else hi = mid;
  }
  return static_cast<int64_t>(lo);
}

// Arrivals in [a, b) (q sorted by arrival).
int64_t arrivals_between(const OutcomeView& q, TimeNs a, TimeNs b) { return first_arrival_at(q, b) - first_arrival_at(q, a); }

}  // namespace

// The span of arrival times of q's requests [from, to), in seconds (at least a nanosecond).
double window_s(const OutcomeView& q, int64_t from, int64_t to) {
  const TimeNs t0 = q[static_cast<size_t>(from)].arrival, t1 = q[static_cast<size_t>(to - 1)].arrival;
  return static_cast<double>(std::max<TimeNs>(1, t1 - t0)) * 1e-9;
}

// The mean service time of q's requests [from, to) that completed: from
// the first token to the completion. A request's wait before its first token
// is left out: a queue that grows is what an overload makes, and a lag that
// counted it would hide the overload it measures (a replayed trace at up to 6
// req/s, each request 1,024 tokens out, with a P99 TTFT of 149 s: lagged by
// its mean time in system it read undecided). 0 when none completed.
TimeNs mean_service_ns(const OutcomeView& q, int64_t from, int64_t to) {
  double sum = 0;
  int64_t count = 0;
  for (int64_t i = from; i < to; ++i) {
    const RequestOutcome r = q[static_cast<size_t>(i)];
    if (r.completion < 0 || r.first_token < 0) continue;
    sum += static_cast<double>(r.completion - r.first_token);
    ++count;
  }
  return count > 0 ? static_cast<TimeNs>(sum / static_cast<double>(count)) : 0;
}

// The end of the offered load's requests in q (sorted by arrival): a
// multi-turn run's until its last session arrived
// (arrived_while_sessions_arrive), every one otherwise.
int64_t offered_end(const OutcomeView& q, const SteadyStateOptions& o) {
  return o.lag_arrivals ? arrived_while_sessions_arrive(q) : static_cast<int64_t>(q.size());
}

// The end of a multi-turn run's ramp-up in q (SteadyStateOptions::ramp_s;
// warm-up whatever L says), 0 without one.
int64_t ramp_end(const OutcomeView& q, const SteadyStateOptions& o) {
  const double ramp_ns = o.ramp_s * 1e9;
  if (!(ramp_ns > 0) || q.size() == 0) return 0;
  if (!(ramp_ns < 4e18)) return static_cast<int64_t>(q.size());  // past the clock's range: all of it
  return first_arrival_at(q, q[0].arrival + static_cast<TimeNs>(ramp_ns));
}

// What a stable system completes over the span of arrival times of q's
// requests [from, to): the arrivals over that span, or with
// `lag_ns` > 0 (SteadyStateOptions::lag_arrivals: a mean service time,
// mean_service_ns) the arrivals one lag earlier. A multi-turn run's turns
// arrive faster as its sessions accumulate (for about a session's lifetime),
// a replayed trace's as its file has them, and a stable system then holds
// more requests as they do (L = lambda W): its completions trail the arrivals
// by the time a request is served. Counted without the lag, a run cut within
// that ramp-up read as overloaded (S.chat-offload stopped at 60 s: 1.15
// turns/s arriving, 0.879 completed, no queue growing; a trace ramping to 1
// req/s over 60 s, 1,024 tokens out, P99 TTFT 50 ms: "overloaded ... (about
// 0.341 req/s)"); an overloaded one still falls behind its lagged arrivals,
// its completions held to its service rate.
double expected_served(const OutcomeView& q, int64_t from, int64_t to, TimeNs lag_ns) {
  if (lag_ns <= 0) return static_cast<double>(to - 1 - from);
  const TimeNs t0 = q[static_cast<size_t>(from)].arrival, t1 = q[static_cast<size_t>(to - 1)].arrival;
  return static_cast<double>(arrivals_between(q, t0 - lag_ns, t1 - lag_ns));
}

double served_over(const OutcomeView& q, const std::vector<TimeNs>& served, int64_t from, int64_t to) {
  const TimeNs t0 = q[static_cast<size_t>(from)].arrival, t1 = q[static_cast<size_t>(to - 1)].arrival;
  const auto by = [&](TimeNs t) { return std::lower_bound(served.begin(), served.end(), t) - served.begin(); };
  return static_cast<double>(by(t1) - by(t0));
}

// Whether `served` falls behind what a stable system serves (`expected`,
// expected_served) by more than the allowed share and by more than the two
// counts' Poisson noise (z: one-sided). Without the noise test, 60 Poisson
// arrivals at 1 req/s served with no queue (P99 TTFT 77 ms) read "overloaded
// at 1 req/s ... (about 1.02 req/s)": the second half's 30 arrivals came at
// 1.2 req/s by chance.
bool falls_behind(double served, double expected, double z) {
  return served < kMinCompletionShare * expected && expected - served > z * std::sqrt(expected + served);
}

void judge_as_workload(SteadyStateOptions& o, const WorkloadSpec& w) {
  o.lag_arrivals = w.sessions.enabled || w.arrival.process == ArrivalProcess::Trace;
  o.ramp_s = 0;
  if (!w.sessions.enabled) return;
  const std::vector<SessionTraceRow>& trace = w.sessions.trace;
  if (trace.empty()) {
    if (const std::optional<double> turns = w.sessions.turns.typical())
      o.ramp_s = std::max(0.0, *turns - 1.0) * std::max(0.0, w.sessions.think_time.typical_s());
    return;
  }
  // A replayed trace: its recorded sessions' mean span from their first
  // turn's arrival to their last's (its rows are grouped by session, each
  // session's turns in time order: SessionSpec::trace).
  double span_sum = 0;
  int64_t sessions = 0;
  for (size_t i = 0; i < trace.size(); ++sessions) {
    const size_t first = i;
    while (i < trace.size() && trace[i].session_id == trace[first].session_id) ++i;
    span_sum += trace[i - 1].arrival_s - trace[first].arrival_s;
  }
  o.ramp_s = span_sum / static_cast<double>(sessions);
}

}  // namespace sightline::serve
