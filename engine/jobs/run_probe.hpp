#pragma once
// The work estimate's probe (jobs/run_estimate): a simulation's first
// requests, simulated on their own, and what they measure per request of the
// run, in events and in work units. Internal to the jobs module: the budget
// check's figure (probe_work_figure) and the quick range (estimate_work) both
// read their simulations' units from it.
#include <algorithm>
#include <cstdint>

#include "scenario/scenario.hpp"
#include "scenario/simulation_spec.hpp"

namespace sightline::run_probe {

inline int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }
inline int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > INT64_MAX / b ? INT64_MAX : a * b;
}

// The probe: a simulation's first probe_requests() requests (the same seed:
// the same first requests as the run), simulated on their own to their end or
// to kProbeEvents events (about 0.1 s). Runs of at most kProbeMinRequests
// requests are not probed (the lower bound covers them well enough).
constexpr int64_t kProbeMinRequests = 400;
constexpr int64_t kProbeRequests = 1000;
constexpr int64_t kProbeWarmup = 50;  // requests done before the measured window
constexpr int64_t kProbeEvents = 100000;
// A large run is probed on a hundredth of its requests (at most 10,000, and
// still at most kProbeEvents events: a probe costs no more than before). The
// probe's first requests are a sample of the run's arrivals, and the events a
// request makes depend on the load they made: 1,000 Poisson arrivals come at
// the nominal rate within about 3% (one standard deviation); the head-to-head
// scenario's first 1,000 came 6.6% slower (9.34 req/s of 10), so they shared
// fewer steps and the probe's figure was 11.6% over what its 1M-request run
// made (docs/speed.md). Ten times the requests: a third of that sampling error.
constexpr int64_t kProbeShareOfRun = 100;
constexpr int64_t kProbeRequestsMost = 10000;

// What the probe measured of one simulation, in events and in work units
// alike (a Rate each): per request in the steady part (its arrival, and the
// rest from its kProbeWarmup-th request done to the moment the last one has
// arrived and none waits, after which only the drain is left: a Poisson
// run's arrivals, an offline batch's full batches), and what its start and
// drain add beyond that (the run has them once). Units are measured, not
// figured from events: a step's units follow its batch, and a probe's
// drain, of smaller batches, is a larger share of it than of its run (the
// MLPerf offline rows at the default budget: 22-38% under, figured from
// events at the probe's units per event; docs/limits.md).
struct Rate {
  double per_request = 0;  // steady part
  double arrival = 0;      // its arrival's share (an event and its prompt's units)
  // A multi-turn run's arrival share, from the prompts its turns draw (-1:
  // the probe's): a turn's prompt is its session's context so far, and a
  // probe stopped at its cap saw mostly early turns, of shorter contexts.
  double arrival_of_run = -1;
  double transient = 0;    // start and drain beyond the steady rate (0 unless seen to the end)
  // A multi-turn probe of the whole run that stopped at its event cap: the
  // run's work, that handled and the projection of its unfinished turns
  // (jobs/session_projection; 0: none). The run is figured at the larger of
  // the two: the figure per turn misses the steps of a tail whose turns are
  // served alone (S.chat-offload's 107 sessions, 30% under), the projection
  // the heavier prefills of a tail served without a prefix cache
  // (S.agentic-coding's compare variant at 796 sessions: 20% under, the
  // figure per turn 11%; docs/limits.md).
  double whole_run = 0;
};
struct ProbeRate {
  int64_t probed = 0;            // requests in the probe
  int64_t events_simulated = 0;  // every event the probe handled (a caller may time it)
  int64_t units_simulated = 0;   // their work units
  Rate events, units;
  bool complete = false;         // the probe ran to its end
  // What a request of the run weighs against one of the probe (offline
  // batches only; 1 otherwise): the mean length weight of the run's requests
  // over that of the probe's (offline_length_scale). Scales the steady rate
  // but its arrivals' share.
  double length_scale = 1.0;
  bool overloaded = false;       // arrivals past the service rate (the interval's paired runs fall back)
  double units_per_event() const { return static_cast<double>(units_simulated) / static_cast<double>(std::max<int64_t>(1, events_simulated)); }
  // The events or units (`rate`) of a run of n requests of which the probe is the start.
  double of_run(const Rate& rate, int64_t n) const {
    // Beyond the probe: the run's own arrivals, and the rest scaled by its lengths.
    const double arrival = rate.arrival_of_run >= 0 ? rate.arrival_of_run : rate.arrival;
    const double steady = n == probed ? rate.per_request : arrival + (rate.per_request - rate.arrival) * length_scale;
    const double per_request = std::max(static_cast<double>(n), steady * static_cast<double>(n) + rate.transient);
    return n == probed ? std::max(rate.whole_run, per_request) : per_request;
  }
};

// A simulation's size as its probe reads it: its requests (a multi-turn
// workload's turns) and, for a multi-turn workload, its sessions (0 otherwise).
struct RunSize {
  int64_t requests = 0, sessions = 0;
  int64_t prompt_tokens = 0;  // a multi-turn workload's, summed over its turns (0: not counted)
};

// The replicas a simulation runs, every pool's.
int64_t cluster_replicas(const serve::SimulationSpec& sp);

// The requests probed for a run of `run_requests`.
int64_t probe_requests(int64_t run_requests);

// Whether a probe's arrivals can outrun its service rate (ProbeRate::overloaded):
// an offline batch's all came at once, and a closed loop's queue holds at
// most its clients (it never grows).
bool judged_for_overload(const serve::SimulationSpec& sp);

// The probe of the first requests of a run of size `run`: probe_requests()
// of them, or as many sessions as make about that many turns, at most
// `most_probed` requests (sessions for a multi-turn run), an offline batch's
// floor of full batches kept.
ProbeRate probe_rate(const Scenario& s, const RunSize& run, int64_t most_probed = kProbeRequestsMost);

// The scenario at the high cost bound (a bound run's, jobs/interval_job).
Scenario at_high_bound(const Scenario& s);

// The turns (requests) and sessions a multi-turn workload makes, as the run
// draws them. Counted at the most turns a session may take, the figure was 89%
// to 104% over what S.chat-offload and S.agentic-coding made (docs/limits.md).
RunSize sessions_of(const Scenario& s);

// Requests one simulation of a workload without sessions makes: its count, its
// trace's length, or about rate x duration for a duration-driven run (at most max_requests).
int64_t requests_without_sessions(const serve::SimulationSpec& sp);

// The size of one simulation of this scenario (a compare variant's own).
RunSize run_size_of(const Scenario& s);

}  // namespace sightline::run_probe
