#include "jobs/run_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "jobs/interval_job.hpp"
#include "jobs/probe_sample.hpp"
#include "jobs/session_projection.hpp"
#include "jobs/short_run_verdict.hpp"
#include "core/error.hpp"
#include "scenario/simulation_spec.hpp"
#include "serve/capacity_search.hpp"
#include "serve/headline.hpp"
#include "serve/simulation.hpp"
#include "serve/steady_state.hpp"
#include "serve/workload.hpp"

namespace sightline {

namespace {

// Bytes one simulated request holds (its state, KV block list, timings)
// and one replica (its engines, KV pool, step slots): measured on the
// serving simulator (1M replicas took 7.95 GB, about 8 KB each), rounded up.
// Per request, an upper bound: 2,000,000 head-to-head requests peaked at
// 466 MiB central only (244 B each) and 919 MiB with the 80% interval (470 B:
// the central run's outcomes are held while a full bound runs), 2026-11-30,
// main e2c1f22 (docs/limits.md).
constexpr int64_t kBytesPerRequest = 768;
constexpr int64_t kBytesPerReplica = 8192;
// Multi-LoRA: each replica's engine keeps a reference count and an LRU stamp
// per adapter (serve/sim_state.hpp, ModelEngine), 100,000 adapters x 8,192 replicas held 3 GB.
constexpr int64_t kBytesPerAdapterPerReplica = 24;
// Written outputs, as JSON in memory: one per-request record, one trace step.
constexpr int64_t kBytesPerRequestRecord = 600;
constexpr int64_t kBytesPerTraceStep = 400;

int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }
int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > INT64_MAX / b ? INT64_MAX : a * b;
}

// The replicas a simulation runs, every pool's.
int64_t cluster_replicas(const serve::SimulationSpec& sp) {
  int64_t replicas = 0;
  for (const auto& p : sp.cluster.pools) replicas = sat_add(replicas, p.replicas);
  return replicas;
}

// The smallest value a length draw can take: a lower bound per request.
int64_t least_length(const serve::LengthSpec& l) {
  if (l.dist == serve::LengthDist::Fixed) return std::max<int64_t>(1, static_cast<int64_t>(l.value));
  return std::max<int64_t>(1, l.min);
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

// The requests probed for a run of `run_requests`.
int64_t probe_requests(int64_t run_requests) {
  return std::min(run_requests, std::clamp(run_requests / kProbeShareOfRun, kProbeRequests, kProbeRequestsMost));
}
// The probe's figure is an estimate. A run is refused when its figure raised
// by its error is over the budget, so a run let through normally finishes:
// the error must cover the figure's underestimates where the rule decides, at
// runs of about the budget's size. Measured by ./build/bench_run_estimate
// --units U (every shipped serving preset and the head-to-head example sized
// to make U units, central only and with intervals; 2026-11-30,
// docs/limits.md), it depends on the probe's share of the run:
//   - probed on a hundredth (runs over 100,000 requests): at most 2.6% under
//     (U = 10M, the default budget, and 1M), so 4%;
//   - probed on its first 1,000 requests (runs up to 100,000): at most 7.9%
//     under (an offline batch of 18,000 requests, U = 1M), so 10%.
// Both were 25%, over the old figure's underestimates of up to 24% (I4.4:
// an offline batch's arrivals uncounted).
constexpr double kProbeErrorOfHundredth = 0.04;
constexpr double kProbeErrorOfFirstRequests = 0.10;

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

// What the probe's override asks for: probe_requests(requests) requests; a
// multi-turn workload's override counts sessions, so its probe is the first
// probe_requests(k) of its sessions, k the sessions that make `requests` turns
// at the run's own turns per session (at most the run's: a probe of more
// sessions than the run has runs at another concurrency, S.chat-offload's 100
// sessions at a sixth of the events per turn its run makes).
int64_t probe_override_count(int64_t requests, const RunSize& run) {
  if (run.sessions <= 0) return probe_requests(requests);
  const double sessions =
      std::round(static_cast<double>(requests) * static_cast<double>(run.sessions) / static_cast<double>(std::max<int64_t>(1, run.requests)));
  return probe_requests(std::clamp<int64_t>(static_cast<int64_t>(sessions), 1, run.sessions));
}

// An offline batch (every request at once) keeps every replica's batch at
// max_num_seqs until its queue empties, and a request's share of a step's
// events follows the batch it runs in: a probe of fewer requests than the
// cluster runs at once runs them in smaller batches than its run does (the
// MLPerf llama2-70b offline row, 8 replicas of 806: a probe of its first
// 1,000 requests figured 32% over a 100,000-request run). So an offline
// batch's probe takes at least this many times the requests the cluster
// runs at once (at most the run's), so that its window sees full batches.
constexpr int64_t kOfflineProbeBatches = 4;

// The requests an offline batch's probe takes at least: kOfflineProbeBatches
// times what its replicas run at once (0 for any other arrival process).
int64_t offline_probe_floor(const serve::SimulationSpec& sp) {
  if (sp.workload.arrival.process != serve::ArrivalProcess::AllAtOnce || sp.workload.sessions.enabled) return 0;
  return sat_mul(kOfflineProbeBatches,
                 sat_mul(std::max<int64_t>(1, cluster_replicas(sp)), std::max<int64_t>(1, sp.scheduler.max_num_seqs)));
}

// Whether a probe's arrivals can outrun its service rate (ProbeRate::overloaded):
// an offline batch's all came at once, and a closed loop's queue holds at
// most its clients (it never grows).
bool judged_for_overload(const serve::SimulationSpec& sp) {
  const auto process = sp.workload.arrival.process;
  return process != serve::ArrivalProcess::AllAtOnce && process != serve::ArrivalProcess::ClosedLoop;
}

// The probe of the first requests of a run of size `run` (`requests` of them, or
// as many sessions as make about that many turns).
ProbeRate probe_rate(const Scenario& s, int64_t requests, const RunSize& run) {
  serve::WorkloadOverride o;
  const int64_t offline_floor = offline_probe_floor(*s.serving->simulation);  // 0 unless an offline batch
  o.num_requests = std::max(probe_override_count(requests, run), std::min(requests, offline_floor));
  o.rate_qps = probe_rate_qps(s, *o.num_requests, requests);
  serve::Simulation sim(s, o, false);
  const int64_t n = sim.num_requests();
  const int64_t warmup = std::min(kProbeWarmup, n / 8);
  // Every request's arrival is one event (and its prompt's units), in the run
  // as in the probe, wherever it falls: an offline batch's all come first,
  // before the window opens, so a rate of the window's events left the run's
  // arrivals beyond the probe's uncounted (I2.4 at the default budget:
  // figured 5.4% low). The arrivals are counted apart, per request; the
  // window measures the others (steps, schedules, transfers) per request done.
  struct Tally {
    int64_t events = -1, units = 0;
  };
  auto others = [&sim] {
    return Tally{sim.events_processed() - sim.arrived(), sim.units_done() - sim.arrival_units()};
  };
  Tally start, end, at_done;  // the others when the window opened, closed, and the last request so far was done
  int64_t done = 0;
  // Where the window opened and closed, in requests done (requests_progressed for an offline batch).
  const bool offline = offline_floor > 0;
  auto position = [&sim, offline] { return offline ? requests_progressed(sim) : static_cast<double>(sim.done()); };
  double start_position = 0, end_position = 0;
  while (!sim.finished() && sim.events_processed() < kProbeEvents) {
    sim.run(1);
    if (sim.done() > done) {
      done = sim.done();
      at_done = others();
    }
    if (start.events < 0 && sim.done() >= warmup) {
      start = others();
      start_position = position();
    }
    if (end.events < 0 && sim.arrived() >= n && sim.waiting() == 0) {
      end = others();
      end_position = position();
    }
  }
  ProbeRate r;
  r.probed = n;
  r.events_simulated = sim.events_processed();
  r.units_simulated = sim.units_done();
  r.complete = sim.finished();
  if (end.events < 0 || end.events < start.events) {  // the window did not close (or closed before it opened)
    end = others();
    end_position = position();
  }
  const double window_requests = start.events >= 0 ? end_position - start_position : 0.0;
  const int64_t arrived = std::max<int64_t>(1, sim.arrived());
  const Tally all = others();
  // One counter's rate: `arrival` per request arrived, `pick` reads a Tally's count.
  auto rate_of = [&](double arrival, auto pick, int64_t total) {
    Rate rt;
    rt.arrival = arrival;
    if (window_requests >= static_cast<double>(kProbeWarmup)) {
      const double others_per_request = static_cast<double>(pick(end) - pick(start)) / window_requests;
      rt.per_request = arrival + others_per_request;
      if (r.complete) rt.transient = static_cast<double>(pick(all)) - others_per_request * static_cast<double>(n);
    } else if (r.complete) {
      rt.per_request = static_cast<double>(total) / static_cast<double>(n);
    } else if (done > 0) {
      // Too few requests done for a window (long requests, kProbeEvents
      // reached): the others per request done, up to the last one done. Per
      // request arrived, the requests still in progress or queued counted as if
      // done (I3.3, one request at a time: 4,000 events a request against the
      // 4,098 its run made).
      rt.per_request = arrival + static_cast<double>(pick(at_done)) / static_cast<double>(done);
    } else {
      rt.per_request = static_cast<double>(total) / static_cast<double>(arrived);
    }
    return rt;
  };
  r.events = rate_of(1.0, [](const Tally& t) { return t.events; }, r.events_simulated);
  r.units = rate_of(static_cast<double>(sim.arrival_units()) / static_cast<double>(arrived), [](const Tally& t) { return t.units; },
                    r.units_simulated);
  if (offline) r.length_scale = offline_length_scale(s, n, requests);
  // A multi-turn run's arrivals, counted from its drawn turns: their units
  // are an event and a unit per kPromptTokensPerUnit prompt tokens, times
  // the probe's factor for speculative steps (arrival_units over that).
  double run_arrival_units = -1;  // the whole run's, when its prompts were counted
  if (run.sessions > 0 && run.prompt_tokens > 0 && sim.arrived() > 0) {
    const int64_t per_unit = serve::RunProgress::kPromptTokensPerUnit;
    const double factor = static_cast<double>(sim.arrival_units()) /
                          static_cast<double>(sim.arrived() + prompt_tokens_arrived(sim) / per_unit);
    run_arrival_units = factor * static_cast<double>(run.requests + run.prompt_tokens / per_unit);
    r.units.arrival_of_run = run_arrival_units / static_cast<double>(std::max<int64_t>(1, run.requests));
  }
  // A multi-turn probe that is the whole run (up to 1,000 sessions) and
  // stopped at its cap: its rest projected on the sessions' drawn think times,
  // in events. Its units: the turns still to arrive (their prompts, as the
  // run draws them), the other events at its others' units per event
  // (at the probe's units per event, S.chat-offload's 107 and 359 sessions
  // were figured 19% and 30% over: a late turn's long prompt is one arrival).
  if (run.sessions > 0 && *o.num_requests == run.sessions && !r.complete) {
    r.events.whole_run = project_session_events(sim, kProbeWarmup);
    const double turns_left = static_cast<double>(std::max<int64_t>(0, n - sim.arrived()));
    const double others_left = std::max(0.0, r.events.whole_run - static_cast<double>(r.events_simulated) - turns_left);
    const double others_per_event = static_cast<double>(all.units) / static_cast<double>(std::max<int64_t>(1, all.events));
    // The turns still to arrive: their own prompts where counted, else at the probe's units per arrival.
    const double arrivals_left = run_arrival_units >= 0
                                     ? std::max(0.0, run_arrival_units - static_cast<double>(sim.arrival_units()))
                                     : turns_left * static_cast<double>(sim.arrival_units()) / static_cast<double>(arrived);
    r.units.whole_run = static_cast<double>(r.units_simulated) + arrivals_left + others_left * others_per_event;
  }
  // Arrivals past the service rate: the probe's own verdict, by the judge the
  // run's paired short runs take theirs from (serve/headline).
  const serve::SimulationSpec& sp = *s.serving->simulation;
  if (r.complete && judged_for_overload(sp))
    r.overloaded = serve::serving_headline(sim.outcome_view(), sp.slo, sp.workload).overloaded;
  return r;
}

// The scenario at the high cost bound (a bound run's, jobs/interval_job).
Scenario at_high_bound(const Scenario& s) {
  Scenario high = s;
  high.cost_model.bound = CostBound::High;
  return high;
}

// The turns (requests) and sessions a multi-turn workload makes, as the run
// draws them. Counted at the most turns a session may take, the figure was 89%
// to 104% over what S.chat-offload and S.agentic-coding made (docs/limits.md).
RunSize sessions_of(const Scenario& s) {
  const serve::SessionCount c = serve::count_sessions(*s.serving->simulation, s.seed);
  return {std::max<int64_t>(1, c.turns), c.sessions, c.prompt_tokens};
}

// Requests one simulation of a workload without sessions makes: its count, its
// trace's length, or about rate x duration for a duration-driven run (at most max_requests).
int64_t requests_without_sessions(const serve::SimulationSpec& sp) {
  const serve::WorkloadSpec& w = sp.workload;
  if (w.arrival.process == serve::ArrivalProcess::Trace) {
    const int64_t n = static_cast<int64_t>(w.arrival.trace.size());
    return w.num_requests > 0 ? std::min<int64_t>(w.num_requests, n) : n;
  }
  if (w.num_requests > 0) return w.num_requests;
  if (w.duration_s > 0)
    return static_cast<int64_t>(std::min(static_cast<double>(sp.limits.max_requests),
                                         std::ceil(std::max(0.0, w.arrival.rate_qps) * w.duration_s)));
  return sp.limits.max_requests;
}

// The size of one simulation of this scenario (a compare variant's own).
RunSize run_size_of(const Scenario& s) {
  const serve::SimulationSpec& sp = *s.serving->simulation;
  return sp.workload.sessions.enabled ? sessions_of(s) : RunSize{requests_without_sessions(sp), 0};
}

std::string gib(int64_t bytes) {
  char b[64];
  std::snprintf(b, sizeof b, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return b;
}

}  // namespace

double probe_error(int64_t run_requests) {
  return run_requests / kProbeShareOfRun > kProbeRequests ? kProbeErrorOfHundredth : kProbeErrorOfFirstRequests;
}

RunEstimate estimate_run(const Scenario& s, IntervalMode mode) {
  RunEstimate e;
  // The paired short bound runs (jobs/interval_job.hpp) add three runs of the
  // first short_n requests; otherwise the bounds run in full.
  const int64_t short_n = short_bound_requests(s, mode);
  const int64_t bound_runs = mode == IntervalMode::Bounds && short_n == 0 ? 3 : 1;
  if (!s.serving) return e;  // training: a handful of schedule slices, bounded by its readers
  if (s.serving->mode != "simulate" || !s.serving->simulation) {
    // Latency mode: one prefill and output_tokens - 1 decode steps, each
    // priced for batch_size sequences (a unit is one sequence-step).
    const auto& w = s.serving->workload;
    e.work_units_at_least = sat_mul(bound_runs, sat_mul(std::max<int64_t>(1, w.output_tokens), std::max<int64_t>(1, w.batch_size)));
    e.memory_bytes = sat_mul(w.batch_size, 64);
    return e;
  }
  const serve::SimulationSpec& sp = *s.serving->simulation;
  const serve::WorkloadSpec& w = sp.workload;
  int64_t requests = w.num_requests;
  if (w.arrival.process == serve::ArrivalProcess::Trace)
    requests = std::min<int64_t>(requests > 0 ? requests : INT64_MAX, static_cast<int64_t>(w.arrival.trace.size()));
  else if (requests == 0)
    requests = sp.limits.max_requests;  // driven by duration: at most this many
  // For the probe's figure: a duration-driven run makes about rate x duration.
  int64_t expected_requests = requests_without_sessions(sp);
  if (w.sessions.enabled) {
    const RunSize turns = sessions_of(s);
    requests = expected_requests = turns.requests;
    e.sessions = turns.sessions;
    e.session_prompt_tokens = turns.prompt_tokens;
  }
  const int64_t replicas = cluster_replicas(sp);
  const int64_t variants = 1 + static_cast<int64_t>(sp.compares.size());
  const int64_t runs = sat_mul(bound_runs, variants);
  // Every arrival is an event and brings its prompt's units; every step ends
  // with one, a step decodes at most max_num_seqs tokens on one replica, and
  // each decoded token is a sequence stepped (k + 1 of them at most for a
  // speculative sequence, whose units count k + 1 times: at least one).
  const int64_t prompt_units = least_length(w.prompt) / serve::RunProgress::kPromptTokensPerUnit;
  auto least_units = [&](int64_t n) {
    const int64_t decode_tokens = sat_mul(n, least_length(w.output) - 1);
    const int64_t steps = decode_tokens / std::max<int64_t>(1, sp.scheduler.max_num_seqs * std::max<int64_t>(1, replicas));
    return sat_add(sat_add(sat_mul(n, 1 + prompt_units), steps), decode_tokens / serve::RunProgress::kSequencesPerUnit);
  };
  e.work_units_at_least = sat_mul(runs, least_units(requests));
  if (short_n > 0) e.work_units_at_least = sat_add(e.work_units_at_least, sat_mul(sat_mul(3, variants), least_units(short_n)));
  e.requests = expected_requests;
  e.runs = runs;
  e.full_runs = bound_runs;
  e.short_requests = short_n;
  // The most a request can take: its arrival and its prompt's units, and a
  // schedule and a step-end event for each of its tokens (one token per step
  // at the lowest load), each token a sequence stepped. A speculative
  // simulation's units count k + 1 times (serve/sim_state.hpp, RunProgress).
  int64_t units_per_event_most = sp.speculative.method != serve::SpecMethod::None ? 1 + std::max(0, sp.speculative.k) : 1;
  for (const auto& v : sp.compares)
    if (v.scenario && v.scenario->serving && v.scenario->serving->simulation) {
      const auto& vs = v.scenario->serving->simulation->speculative;
      if (vs.method != serve::SpecMethod::None) units_per_event_most = std::max<int64_t>(units_per_event_most, 1 + std::max(0, vs.k));
    }
  const int64_t tokens_most = std::max<int64_t>(1, w.output.max_possible());
  // A multi-turn turn's prompt is its session's whole context so far.
  const auto& ss = w.sessions;
  const int64_t prompt_most =
      ss.enabled ? sat_add(sat_add(ss.system_prompt_tokens, ss.first_input.max_possible()),
                           sat_mul(ss.turns.max_possible(), sat_add(ss.input.max_possible(), ss.output.max_possible())))
                 : w.prompt.max_possible();
  const int64_t per_request_most = sat_mul(
      units_per_event_most,
      sat_add(sat_add(3, sat_mul(2, tokens_most)), sat_add(1 + tokens_most / serve::RunProgress::kSequencesPerUnit,
                                                           1 + prompt_most / serve::RunProgress::kPromptTokensPerUnit)));
  e.work_units_at_most = sat_mul(runs, sat_mul(expected_requests, per_request_most));
  if (short_n > 0) e.work_units_at_most = sat_add(e.work_units_at_most, sat_mul(sat_mul(3, variants), sat_mul(short_n, per_request_most)));
  // Peak memory: the interval runs are made one after another (jobs/interval_job),
  // and only the central run writes its records and trace as JSON.
  const int64_t adapters = sp.lora.enabled ? sp.lora.adapters : 0;
  const int64_t per_replica = sat_add(kBytesPerReplica, sat_mul(adapters, kBytesPerAdapterPerReplica));
  const int64_t simulation = sat_add(sat_mul(requests, kBytesPerRequest), sat_mul(replicas, per_replica));
  const int64_t outputs = sat_add(sat_mul(std::min<int64_t>(requests, sp.outputs.max_request_records), kBytesPerRequestRecord),
                                  sp.outputs.trace ? sat_mul(sp.outputs.trace_max_steps, kBytesPerTraceStep) : 0);
  e.memory_bytes = sat_add(simulation, outputs);
  e.memory_breakdown = std::to_string(requests) + " requests and " + std::to_string(replicas) + " replicas per run, " +
                       (adapters > 0 ? std::to_string(adapters) + " LoRA adapters per replica, " : std::string()) +
                       std::to_string(runs) + " runs, " +
                       std::to_string(std::min<int64_t>(requests, sp.outputs.max_request_records)) + " request records" +
                       (sp.outputs.trace ? ", a trace of " + std::to_string(sp.outputs.trace_max_steps) + " steps" : "");
  return e;
}

void check_run_estimate(const Scenario& s, const RunEstimate& e, const RunLimits& limits) {
  if (e.work_units_at_least > limits.max_work_units)
    fail(error_code::kLimitExceeded, "/limits/max_work_units",
         "the run needs at least " + std::to_string(e.work_units_at_least) + " work units (every simulation it makes: the "
         "central estimate and, unless central-only, both interval bounds), over its budget of " +
             std::to_string(limits.max_work_units) + "; refused before starting. Raise /limits/max_work_units (at most " +
             std::to_string(limits.ceiling) + " here" +
             (limits.ceiling < RunLimits::kNativeCeiling ? std::string(", ") + std::to_string(RunLimits::kNativeCeiling) +
                                                               " with the native CLI's --max-work-units"
                                                         : std::string()) +
             ") or make the scenario smaller (fewer requests, shorter outputs, a smaller batch).");
  if (e.memory_bytes > RunLimits::kMaxMemoryBytes) {
    std::string where = "/serving/workload/num_requests";
    if (s.serving && s.serving->simulation) {
      const auto& sp = *s.serving->simulation;
      const int64_t replicas = cluster_replicas(sp);
      const int64_t adapters = sp.lora.enabled ? sp.lora.adapters : 0;
      if (sat_mul(2, sat_mul(replicas, sat_mul(adapters, kBytesPerAdapterPerReplica))) > e.memory_bytes) where = "/serving/lora/adapters";
      else if (sat_mul(3, sat_mul(replicas, kBytesPerReplica + adapters * kBytesPerAdapterPerReplica)) > e.memory_bytes) where = "/hardware";
      else if (sp.outputs.trace && sp.outputs.trace_max_steps * kBytesPerTraceStep * 3 > e.memory_bytes)
        where = "/serving/outputs/trace_max_steps";
    }
    fail(error_code::kLimitExceeded, where,
         "the run would hold about " + gib(e.memory_bytes) + " (" + e.memory_breakdown + "), over the " +
             gib(RunLimits::kMaxMemoryBytes) + " a run may use; refused before starting. Make it smaller.");
  }
  // The lower bound passed. A run that could still be over its budget is
  // measured on a probe (tens of milliseconds): a long run at low load makes
  // one step per token, far more units than the bound's full batches. It is
  // refused when the figure, raised by the probe's measured error, is over the
  // budget: what is let through normally finishes within it.
  if (s.serving && s.serving->simulation && e.requests > kProbeMinRequests && e.work_units_at_most > limits.max_work_units) {
    const WorkFigure f = probe_work_figure(s, e);
    const double error_share = probe_error(e.requests);
    if (f.units * (1.0 + error_share) > static_cast<double>(limits.max_work_units)) {
      char figure[96];
      std::snprintf(figure, sizeof figure, "about %.4g work units", f.units);
      char error[64];
      std::snprintf(error, sizeof error, "%.0f%%", 100.0 * error_share);
      const bool over = f.units > static_cast<double>(limits.max_work_units);
      fail(error_code::kLimitExceeded, "/limits/max_work_units",
           std::string("the run needs ") + figure + " (" + f.detail + "), " +
               (over ? std::string("over its budget of ") + std::to_string(limits.max_work_units)
                     : std::string("within the estimate's error (") + error + ") of its budget of " +
                           std::to_string(limits.max_work_units) + ", so it could stop unfinished") +
               "; refused before starting. Raise /limits/max_work_units (at most " + std::to_string(limits.ceiling) +
               " here) or make the scenario smaller (fewer requests, shorter outputs).");
    }
  }
}

WorkFigure probe_work_figure(const Scenario& s, const RunEstimate& e) {
  WorkFigure f;
  if (!s.serving || !s.serving->simulation) return f;
  const serve::SimulationSpec& sp = *s.serving->simulation;
  // Every simulation the run makes, each measured on its own probe and counted
  // in its own units: the scenario and each compare variant, in full
  // e.full_runs times (the central run, and both bounds when they run in
  // full), plus three paired short runs of e.short_requests each.
  std::vector<const Scenario*> variants = {&s};
  for (const auto& v : sp.compares)
    if (v.scenario && v.scenario->serving && v.scenario->serving->simulation) variants.push_back(v.scenario.get());
  std::string parts;
  bool fallback = false;  // the paired short runs fall back to full bound runs: decided on the scenario's own run
  for (size_t i = 0; i < variants.size(); ++i) {
    const Scenario& v = *variants[i];
    const RunSize size = i == 0 ? RunSize{e.requests, e.sessions, e.session_prompt_tokens} : run_size_of(v);
    const int64_t n = size.requests;
    const ProbeRate r = probe_rate(v, n, size);
    // The paired short runs fall back to full bound runs when the central run
    // or a short run is overloaded, or a bound's short run too short to judge
    // (jobs/interval_job.hpp), for the scenario and its variants alike; the
    // job judges the scenario's own runs. The central run: its probe's
    // verdict. The short runs: their own (jobs/short_run_verdict), or where
    // one does not finish within a probe's events a probe at the high cost
    // bound (slower steps, the short run nearest its service rate). (None
    // where no probe is judged for overload: it would say no.)
    if (i == 0 && e.short_requests > 0 && judged_for_overload(*v.serving->simulation)) {
      const ShortRunsVerdict verdict = r.overloaded ? ShortRunsVerdict::FallBack
                                                    : judge_short_runs(v, std::min(n, e.short_requests), kProbeEvents);
      fallback = verdict == ShortRunsVerdict::FallBack ||
                 (verdict == ShortRunsVerdict::Unknown && probe_rate(at_high_bound(v), n, size).overloaded);
    }
    const int64_t full_runs = fallback ? 3 : e.full_runs;
    // A simulation stops at its own serving.limits.max_events (keeping its
    // result): that many events' units at most.
    const double most = static_cast<double>(v.serving->simulation->limits.max_events) * r.units_per_event();
    auto capped = [&](int64_t requests) { return std::min(most > 0 ? most : 1e300, r.of_run(r.units, requests)); };
    double units = static_cast<double>(full_runs) * capped(n);
    if (e.short_requests > 0) units += 3.0 * capped(std::min(n, e.short_requests));
    f.units += units;
    if (i == 0) f.central_units_per_request = units / static_cast<double>(std::max<int64_t>(1, n * full_runs));
    char part[480];
    // A whole multi-turn run projected: its events per turn are the projection's.
    const bool projected = r.units.whole_run > 0 && r.units.whole_run >= r.of_run(r.units, n) && n > 0;
    std::snprintf(part, sizeof part, "%s%.0f units for %lld requests x %lld full run%s%s (%.2f units per request%s%s)",
                  i == 0 ? "" : (i == 1 ? "; compare variants: " : ", "), units, static_cast<long long>(n),
                  static_cast<long long>(full_runs), full_runs > 1 ? "s" : "",
                  e.short_requests > 0 ? (fallback ? " (arrivals near the service rate: the full bounds the paired runs fall back to)"
                                                               " and 3 paired short runs"
                                                             : " and 3 paired short runs")
                                       : "",
                  projected ? r.units.whole_run / static_cast<double>(n) : r.units.per_request,
                  projected ? ", the turns after the probe's cap projected" : "",
                  v.serving->simulation->speculative.method != serve::SpecMethod::None ? ", speculative: k + 1 times" : "");
    parts += part;
  }
  char head[160];
  std::snprintf(head, sizeof head, "measured on a probe of the first %lld requests of each simulation: ",
                static_cast<long long>(probe_requests(e.requests)));
  const bool search = sp.search.enabled || sp.steady_state.enabled;
  f.detail = std::string(head) + parts +
             (search ? "; the max-QPS search's and steady-state reruns' runs come on top" : "");
  return f;
}

WorkRange estimate_work(const Scenario& s, IntervalMode mode, const RunLimits& limits) {
  const RunEstimate e = estimate_run(s, mode);
  WorkRange w;
  const double budget = static_cast<double>(limits.max_work_units);
  if (!s.serving || s.serving->mode != "simulate" || !s.serving->simulation) {
    w.units_low = w.units_high = std::min(budget, static_cast<double>(e.work_units_at_least));
    return w;
  }
  const serve::SimulationSpec& sp = *s.serving->simulation;
  // A shorter probe than the budget check's: a search estimates every candidate before running any.
  // Without the turns' prompts (RunSize::prompt_tokens 0): the candidates' runs are
  // figured at the probe's units per arrival, as before the runs' own figure counted them.
  const ProbeRate p = probe_rate(s, std::min<int64_t>(std::max<int64_t>(1, e.requests), kProbeMinRequests), RunSize{e.requests, e.sessions});
  w.units_per_request = p.units.per_request;
  w.units_per_event = p.units_per_event();
  w.probe_requests = p.probed;
  w.probe_units = p.units_simulated;
  // The central run and, outside central-only, the bound runs (short paired ones or full ones).
  const int64_t variants = 1 + static_cast<int64_t>(sp.compares.size());
  int64_t low = sat_add(sat_mul(e.requests, e.runs), sat_mul(sat_mul(3, variants), e.short_requests));
  int64_t high = low;
  if (sp.steady_state.enabled && e.requests < sp.steady_state.max_requests)
    high = sat_add(high, sat_mul(sat_mul(e.runs, serve::kMaxRunExtensions), sp.steady_state.max_requests));
  if (sp.search.enabled) {
    const serve::CapacityRequestRange r = serve::capacity_search_requests(s);
    low = sat_add(low, sat_mul(e.runs, r.fewest));
    high = sat_add(high, sat_mul(e.runs, r.most));
  }
  w.requests_low = low;
  w.requests_high = high;
  w.units_low = std::min(budget, std::max(static_cast<double>(e.work_units_at_least), p.of_run(p.units, low)));
  w.units_high = std::min(budget, std::max(w.units_low, p.of_run(p.units, high)));
  w.events_high = p.of_run(p.events, high);
  return w;
}

}  // namespace sightline
