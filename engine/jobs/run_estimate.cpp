#include "jobs/run_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "jobs/interval_job.hpp"
#include "jobs/run_probe.hpp"
#include "jobs/short_run_verdict.hpp"
#include "core/error.hpp"
#include "scenario/simulation_spec.hpp"
#include "serve/capacity_search.hpp"
#include "serve/sim_state.hpp"
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

// The probe's parts (jobs/run_probe.hpp), read here by their names.
using run_probe::at_high_bound;
using run_probe::cluster_replicas;
using run_probe::judged_for_overload;
using run_probe::kProbeEvents;
using run_probe::kProbeMinRequests;
using run_probe::kProbeRequests;
using run_probe::kProbeShareOfRun;
using run_probe::probe_rate;
using run_probe::probe_requests;
using run_probe::ProbeRate;
using run_probe::requests_without_sessions;
using run_probe::run_size_of;
using run_probe::RunSize;
using run_probe::sat_add;
using run_probe::sat_mul;
using run_probe::sessions_of;

// The smallest value a length draw can take: a lower bound per request.
int64_t least_length(const serve::LengthSpec& l) {
  if (l.dist == serve::LengthDist::Fixed) return std::max<int64_t>(1, static_cast<int64_t>(l.value));
  return std::max<int64_t>(1, l.min);
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

// The units of one scenario's simulations, from its probe `r`: `full_runs`
// runs of its `n` requests and, when `short_requests` > 0, the three paired
// short runs of that many. A simulation stops at its own
// serving.limits.max_events (keeping its result): that many events' units at
// most each.
double simulations_units(const ProbeRate& r, const serve::SimulationSpec& sp, int64_t n, int64_t full_runs,
                         int64_t short_requests) {
  const double most = static_cast<double>(sp.limits.max_events) * r.units_per_event();
  auto capped = [&](int64_t requests) { return std::min(most > 0 ? most : 1e300, r.of_run(r.units, requests)); };
  double units = static_cast<double>(full_runs) * capped(n);
  if (short_requests > 0) units += 3.0 * capped(std::min(n, short_requests));
  return units;
}

// Each simulation the run makes: the scenario itself and each compare variant.
std::vector<const Scenario*> simulated_variants(const Scenario& s) {
  std::vector<const Scenario*> variants = {&s};
  for (const auto& v : s.serving->simulation->compares)
    if (v.scenario && v.scenario->serving && v.scenario->serving->simulation) variants.push_back(v.scenario.get());
  return variants;
}

// A simulation's size: the scenario's own as estimate_run counted it (its
// turns' prompts with it), a compare variant's from its own workload.
RunSize variant_size(const RunEstimate& e, const Scenario& s, const Scenario& v) {
  return &v == &s ? RunSize{e.requests, e.sessions, e.session_prompt_tokens} : run_size_of(v);
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
    const int64_t least = sat_add(sat_add(sat_mul(n, 1 + prompt_units), steps), decode_tokens / serve::RunProgress::kSequencesPerUnit);
    // A simulation stops at its max_events (keeping its result), and an event
    // is at least a unit: it makes at least the fewer of the two (I3.3 at
    // 20,000 requests: 62.7M "at least" against the 25.3M its run made).
    return sp.limits.max_events > 0 ? std::min(least, sp.limits.max_events) : least;
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
  const std::vector<const Scenario*> variants = simulated_variants(s);
  std::string parts;
  bool fallback = false;  // the paired short runs fall back to full bound runs: decided on the scenario's own run
  for (size_t i = 0; i < variants.size(); ++i) {
    const Scenario& v = *variants[i];
    const RunSize size = variant_size(e, s, v);
    const int64_t n = size.requests;
    const ProbeRate r = probe_rate(v, size);
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
                 (verdict == ShortRunsVerdict::Unknown && probe_rate(at_high_bound(v), size).overloaded);
    }
    const int64_t full_runs = fallback ? 3 : e.full_runs;
    const double units = simulations_units(r, *v.serving->simulation, n, full_runs, e.short_requests);
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
  // The run's own simulations figured as the budget check figures them
  // (probe_work_figure: each compare variant on its own probe, a multi-turn
  // run's arrivals from its turns' drawn prompts, each simulation capped at
  // its max_events), on a shorter probe of each (at most kProbeMinRequests
  // requests or sessions): a search estimates every candidate before running
  // any. Its paired short runs stand at the low end and fall back to full
  // bound runs at the high end (jobs/interval_job.hpp; not judged here).
  double run_units_low = 0, run_units_high = 0;
  ProbeRate p;  // the scenario's own: its extra runs' rate, and the probe's size and speed for the caller
  for (const Scenario* v : simulated_variants(s)) {
    const RunSize size = variant_size(e, s, *v);
    const ProbeRate r = probe_rate(*v, size, kProbeMinRequests);
    const serve::SimulationSpec& vs = *v->serving->simulation;
    run_units_low += simulations_units(r, vs, size.requests, e.full_runs, e.short_requests);
    run_units_high += e.short_requests > 0 ? simulations_units(r, vs, size.requests, 3, 0)
                                           : simulations_units(r, vs, size.requests, e.full_runs, 0);
    if (v == &s) p = r;
  }
  w.units_per_request = p.units.per_request;
  w.units_per_event = p.units_per_event();
  w.probe_requests = p.probed;
  w.probe_units = p.units_simulated;
  // On top of them, at the scenario's own rate: a capacity search's runs
  // (from its fewest to its most) and steady-state reruns (the high end).
  int64_t extra_low = 0, extra_high = 0;
  if (sp.steady_state.enabled && e.requests < sp.steady_state.max_requests)
    extra_high = sat_mul(sat_mul(e.runs, serve::kMaxRunExtensions), sp.steady_state.max_requests);
  if (sp.search.enabled) {
    const serve::CapacityRequestRange r = serve::capacity_search_requests(s);
    extra_low = sat_mul(e.runs, r.fewest);
    extra_high = sat_add(extra_high, sat_mul(e.runs, r.most));
  }
  const int64_t variants = 1 + static_cast<int64_t>(sp.compares.size());
  const int64_t run_requests = sat_add(sat_mul(e.requests, e.runs), sat_mul(sat_mul(3, variants), e.short_requests));
  const int64_t fallen_back = e.short_requests > 0 ? sat_mul(e.requests, sat_mul(3, variants)) : run_requests;
  w.requests_low = sat_add(run_requests, extra_low);
  w.requests_high = sat_add(fallen_back, extra_high);
  auto extra_units = [&](int64_t n) { return n > 0 ? p.of_run(p.units, n) : 0.0; };
  w.units_low = std::min(budget, std::max(static_cast<double>(e.work_units_at_least), run_units_low + extra_units(extra_low)));
  w.units_high = std::min(budget, std::max(w.units_low, run_units_high + extra_units(extra_high)));
  // In events, as before: fit's replays (one simulation, no extras) are sized by it.
  w.events_high = p.of_run(p.events, w.requests_high);
  return w;
}

}  // namespace sightline
