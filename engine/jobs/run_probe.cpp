#include "jobs/run_probe.hpp"

#include <algorithm>
#include <cmath>

#include "jobs/probe_sample.hpp"
#include "jobs/session_projection.hpp"
#include "serve/headline.hpp"
#include "serve/simulation.hpp"
#include "serve/workload.hpp"

namespace sightline::run_probe {

namespace {

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

}  // namespace

// The replicas a simulation runs, every pool's.
int64_t cluster_replicas(const serve::SimulationSpec& sp) {
  int64_t replicas = 0;
  for (const auto& p : sp.cluster.pools) replicas = sat_add(replicas, p.replicas);
  return replicas;
}

// The requests probed for a run of `run_requests`.
int64_t probe_requests(int64_t run_requests) {
  return std::min(run_requests, std::clamp(run_requests / kProbeShareOfRun, kProbeRequests, kProbeRequestsMost));
}

// Whether a probe's arrivals can outrun its service rate (ProbeRate::overloaded):
// an offline batch's all came at once, and a closed loop's queue holds at
// most its clients (it never grows).
bool judged_for_overload(const serve::SimulationSpec& sp) {
  const auto process = sp.workload.arrival.process;
  return process != serve::ArrivalProcess::AllAtOnce && process != serve::ArrivalProcess::ClosedLoop;
}

ProbeRate probe_rate(const Scenario& s, const RunSize& run, int64_t most_probed) {
  const int64_t requests = run.requests;
  serve::WorkloadOverride o;
  const int64_t offline_floor = offline_probe_floor(*s.serving->simulation);  // 0 unless an offline batch
  o.num_requests = std::max(std::min(probe_override_count(requests, run), std::max<int64_t>(1, most_probed)),
                            std::min(requests, offline_floor));
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

}  // namespace sightline::run_probe
