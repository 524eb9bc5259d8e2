#include "api/run_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "api/interval_job.hpp"
#include "core/error.hpp"
#include "scenario/simulation_spec.hpp"
#include "serve/capacity_search.hpp"
#include "serve/simulation.hpp"
#include "serve/steady_state.hpp"

namespace sightline {

namespace {

// Bytes one simulated request holds (its state, KV block list, timings)
// and one replica (its engines, KV pool, step slots): measured on the
// serving simulator (1M replicas took 7.95 GB, about 8 KB each), rounded up.
constexpr int64_t kBytesPerRequest = 768;  // 2,000,000 requests at once peaked at 1.41 GB
constexpr int64_t kBytesPerReplica = 8192;
// Multi-LoRA: each replica's engine keeps a reference count and an LRU stamp
// per adapter (serve/simulation), 100,000 adapters x 8,192 replicas held 3 GB.
constexpr int64_t kBytesPerAdapterPerReplica = 24;
// Written outputs, as JSON in memory: one per-request record, one trace step.
constexpr int64_t kBytesPerRequestRecord = 600;
constexpr int64_t kBytesPerTraceStep = 400;

int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }
int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > INT64_MAX / b ? INT64_MAX : a * b;
}

// The smallest value a length draw can take: a lower bound per request.
int64_t least_length(const serve::LengthSpec& l) {
  if (l.dist == serve::LengthDist::Fixed) return std::max<int64_t>(1, static_cast<int64_t>(l.value));
  return std::max<int64_t>(1, l.min);
}

// The probe: the scenario's first kProbeRequests requests at the same rate,
// simulated on their own, at most kProbeUnits events (tens of milliseconds).
constexpr int64_t kProbeRequests = 400;
constexpr int64_t kProbeWarmup = 50;    // arrivals before the measured window
constexpr int64_t kProbeUnits = 20000;
// A run is refused on the probe's figure only when it is clearly over: the
// figure is an estimate, not a bound (a run a little over is stopped by the
// budget itself).
constexpr double kProbeRefuseFactor = 1.25;

// Work units per request of the central simulation, measured on the probe
// between its kProbeWarmup-th and its last arrival: the empty system at the
// start and the drain at the end (which a long run has once, not per
// probe-sized piece) do not count. If the probe's budget runs out first, the
// units so far per arrival so far. `arrived` and `units` say how much the
// probe simulated.
struct Probe {
  double units_per_request = 0;
  int64_t arrived = 0, units = 0;
};

Probe probe_units_per_request(const Scenario& s) {
  serve::WorkloadOverride o;
  o.num_requests = kProbeRequests;
  serve::Simulation sim(s, o, false);
  int64_t window_events = -1, window_arrivals = 0;
  while (!sim.finished() && sim.events_processed() < kProbeUnits) {
    sim.run(1);
    if (window_events < 0 && sim.arrived() >= kProbeWarmup) {
      window_events = sim.events_processed();
      window_arrivals = sim.arrived();
    }
    if (sim.arrived() >= sim.num_requests()) break;
  }
  Probe p;
  p.arrived = sim.arrived();
  p.units = sim.events_processed();
  const int64_t arrived = std::max<int64_t>(1, sim.arrived());
  if (window_events >= 0 && sim.arrived() > window_arrivals)
    p.units_per_request = static_cast<double>(sim.events_processed() - window_events) / static_cast<double>(sim.arrived() - window_arrivals);
  else
    p.units_per_request = static_cast<double>(sim.events_processed()) / static_cast<double>(arrived);
  return p;
}

std::string gib(int64_t bytes) {
  char b[64];
  std::snprintf(b, sizeof b, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return b;
}

}  // namespace

RunEstimate estimate_run(const Scenario& s, IntervalMode mode) {
  RunEstimate e;
  // The paired short bound runs (api/interval_job.hpp) add three runs of the
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
  int64_t expected_requests = requests;
  if (w.num_requests == 0 && w.arrival.process != serve::ArrivalProcess::Trace && w.duration_s > 0)
    expected_requests = static_cast<int64_t>(
        std::min(static_cast<double>(requests), std::ceil(std::max(0.0, w.arrival.rate_qps) * w.duration_s)));
  int64_t replicas = 0;
  for (const auto& p : sp.cluster.pools) replicas = sat_add(replicas, p.replicas);
  const int64_t variants = 1 + static_cast<int64_t>(sp.compares.size());
  const int64_t runs = sat_mul(bound_runs, variants);
  // Every arrival is an event; every step ends with one, and a step decodes at
  // most max_num_seqs tokens on one replica.
  const int64_t decode_tokens = sat_mul(requests, least_length(w.output) - 1);
  const int64_t steps = decode_tokens / std::max<int64_t>(1, sp.scheduler.max_num_seqs * std::max<int64_t>(1, replicas));
  e.work_units_at_least = sat_mul(runs, sat_add(requests, steps));
  if (short_n > 0) {
    const int64_t short_steps = sat_mul(short_n, least_length(w.output) - 1) /
                                std::max<int64_t>(1, sp.scheduler.max_num_seqs * std::max<int64_t>(1, replicas));
    e.work_units_at_least = sat_add(e.work_units_at_least, sat_mul(sat_mul(3, variants), sat_add(short_n, short_steps)));
  }
  e.requests = expected_requests;
  e.runs = runs;
  // The most a request can take: its arrival, and a schedule and a step-end
  // event for each of its tokens (one token per step at the lowest load).
  const int64_t per_request_most = sat_add(3, sat_mul(2, std::max<int64_t>(1, w.output.max_possible())));
  e.work_units_at_most = sat_mul(runs, sat_mul(expected_requests, per_request_most));
  if (short_n > 0) e.work_units_at_most = sat_add(e.work_units_at_most, sat_mul(sat_mul(3, variants), sat_mul(short_n, per_request_most)));
  // Peak memory: the interval runs are made one after another (api/interval_job),
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
      int64_t replicas = 0;
      for (const auto& p : sp.cluster.pools) replicas += p.replicas;
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
  // one step per token, far more units than the bound's full batches.
  if (s.serving && s.serving->simulation && e.requests > kProbeRequests && e.work_units_at_most > limits.max_work_units) {
    const double per_request = probe_units_per_request(s).units_per_request;
    const double expected = per_request * static_cast<double>(e.requests) * static_cast<double>(e.runs);
    if (expected > kProbeRefuseFactor * static_cast<double>(limits.max_work_units)) {
      char figure[160];
      std::snprintf(figure, sizeof figure, "about %.3g work units (%.1f units per request, measured on a probe of its first %lld requests, x %lld requests x %lld runs)",
                    expected, per_request, static_cast<long long>(kProbeRequests), static_cast<long long>(e.requests),
                    static_cast<long long>(e.runs));
      fail(error_code::kLimitExceeded, "/limits/max_work_units",
           std::string("the run needs ") + figure + ", over its budget of " + std::to_string(limits.max_work_units) +
               "; refused before starting. Raise /limits/max_work_units (at most " + std::to_string(limits.ceiling) +
               " here) or make the scenario smaller (fewer requests, shorter outputs).");
    }
  }
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
  const Probe p = probe_units_per_request(s);
  w.units_per_request = p.units_per_request;
  w.probe_requests = p.arrived;
  w.probe_units = p.units;
  // The central run and, outside central-only, the bound runs (short paired ones or full ones).
  const int64_t short_n = short_bound_requests(s, mode);
  const int64_t variants = 1 + static_cast<int64_t>(sp.compares.size());
  int64_t low = sat_add(sat_mul(e.requests, e.runs), sat_mul(sat_mul(3, variants), short_n));
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
  w.units_low = std::min(budget, std::max(static_cast<double>(e.work_units_at_least), p.units_per_request * static_cast<double>(low)));
  w.units_high = std::min(budget, std::max(w.units_low, p.units_per_request * static_cast<double>(high)));
  return w;
}

}  // namespace sightline
