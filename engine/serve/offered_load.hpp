#pragma once
// What a serving run offered and what a stable system would have served of
// it, for the steady-state judge's overload tests (serve/steady_state.cpp):
// the span of arrivals a window covers, a multi-turn run's offered load (to
// its last session's arrival) and ramp-up, the arrivals lagged by a service
// time, and whether the served fall behind them beyond the counts' noise.
// q is always the run's arrived requests sorted by arrival.
#include <cstdint>
#include <vector>

#include "serve/request_outcome.hpp"
#include "serve/steady_state.hpp"

namespace sightline::serve {

// The span of arrival times of q's requests [from, to), in seconds (at least a nanosecond).
double window_s(const OutcomeView& q, int64_t from, int64_t to);

// The mean service time (first token to completion) of q's requests [from,
// to) that completed, 0 when none did.
TimeNs mean_service_ns(const OutcomeView& q, int64_t from, int64_t to);

// The end of the offered load's requests in q: a multi-turn run's until its
// last session arrived (SteadyStateOptions::lag_arrivals), every one otherwise.
int64_t offered_end(const OutcomeView& q, const SteadyStateOptions& o);

// The end of a multi-turn run's ramp-up in q (SteadyStateOptions::ramp_s), 0 without one.
int64_t ramp_end(const OutcomeView& q, const SteadyStateOptions& o);

// What a stable system completes over the span of arrival times of q's
// requests [from, to): their arrivals, or those one `lag_ns` earlier.
double expected_served(const OutcomeView& q, int64_t from, int64_t to, TimeNs lag_ns);

// The requests served (`served`: sorted completion or first-token times)
// within the span of arrival times of q's requests [from, to).
double served_over(const OutcomeView& q, const std::vector<TimeNs>& served, int64_t from, int64_t to);

// Whether `served` falls behind what a stable system serves there
// (`expected`, expected_served) by more than the allowed share and by more
// than the two counts' Poisson noise (z: one-sided).
bool falls_behind(double served, double expected, double z);

}  // namespace sightline::serve
