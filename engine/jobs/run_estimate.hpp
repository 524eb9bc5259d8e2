#pragma once
// What a run will cost, estimated from the validated scenario before anything
// is allocated or simulated, so that a run over its budget is refused in
// milliseconds with the estimate in the message (not after minutes of work, or
// an out-of-memory abort).
//   work: a lower bound on the work units (scenario/run_limits.hpp: a serving
//     event, 16 sequences stepped or 32 prompt tokens arrived; a latency-mode
//     sequence-step) every simulation of the run makes together: a serving
//     simulation handles at least one event and its prompt per arrival, one
//     step per max_num_seqs decode tokens and a sequence stepped per decoded
//     token; the interval runs triple it.
//   memory: an estimate of the bytes the run holds at its peak: per request and
//     per replica of one simulation (they run one after another), plus the
//     per-request records and the trace the central run writes.
#include <cstdint>
#include <string>

#include "jobs/budgeted_job.hpp"
#include "jobs/make_job.hpp"
#include "scenario/scenario.hpp"

namespace sightline {

struct RunEstimate {
  int64_t work_units_at_least = 0;
  int64_t work_units_at_most = 0;  // serving: every token its own step (whether a probe is worth making)
  int64_t requests = 0, runs = 0;  // serving: requests per simulation (a multi-turn workload's turns), simulations
  int64_t sessions = 0;            // serving, multi-turn workloads: sessions per simulation (0 otherwise)
  int64_t session_prompt_tokens = 0;  // ... and their turns' prompts, summed (0 otherwise)
  int64_t full_runs = 1;           // serving: runs of every request (central, and the bounds when in full)
  int64_t short_requests = 0;      // serving: the paired short bound runs' requests (three runs), or 0
  int64_t memory_bytes = 0;
  std::string memory_breakdown;  // "600000 requests x 3 runs, 1 replicas, ..." for the message
};

RunEstimate estimate_run(const Scenario& s, IntervalMode mode);

// What a run's simulations will cost, as a range of work units, for a time
// estimate before it starts (the page's deployment search shows one before
// any candidate runs): each simulation figured as probe_work_figure figures
// it, on a shorter probe of its own (at most 400 requests or sessions, an
// offline batch's full batches kept), from the fewest units (every verdict
// decided by its first run, paired short bound runs standing) to the most
// (the short runs fallen back to full bounds, every undecided run grown to
// its cap as often as the growth rule allows, a capacity search through every
// rate it may try; these extra runs at the scenario's own probe's rate).
// Neither end passes the run's work budget, where the run stops. Latency and
// training runs: the closed-form units. The scenario's probe's own size
// (requests, units) lets a caller time it for a throughput on its machine.
struct WorkRange {
  double units_low = 0, units_high = 0;
  double units_per_request = 0;
  double units_per_event = 1;  // the probe's (serving; latency and training: 1)
  double events_high = 0;      // serving: the events of the high end, uncapped (fit's measure)
  int64_t requests_low = 0, requests_high = 0;  // every simulation of the run together
  int64_t probe_requests = 0, probe_units = 0;
};
WorkRange estimate_work(const Scenario& s, IntervalMode mode, const RunLimits& limits);

// Throws a located limit_exceeded error when the estimate is over the run's
// work budget (at /limits/max_work_units) or over the memory ceiling (at the
// input that drives it). A serving run the lower bound lets through but that
// could still be over its budget is measured on a probe (its first requests,
// simulated on their own, tens of milliseconds) and refused when the figure
// is clearly over: a 1M-request run is refused up front, not stopped after
// 40 s of work.
void check_run_estimate(const Scenario& s, const RunEstimate& e, const RunLimits& limits);

// The probe's figure's error for a run of `run_requests` (a share: 0.04 is
// 4%), which check_run_estimate adds to the figure: it covers the figure's
// measured underestimates (docs/limits.md), and depends on the probe's share
// of the run (a hundredth of a run over 100,000 requests, else its first 1,000).
double probe_error(int64_t run_requests);

// The probe's figure for a serving simulation run: the work units of every
// simulation it makes (the scenario's and each compare variant's, in full and
// as paired short bound runs), each measured on a probe of its own first
// requests and counted in its own units (a speculative event is k + 1). The
// max-QPS search's runs and steady-state reruns are not in it.
struct WorkFigure {
  double units = 0;
  double central_units_per_request = 0;
  std::string detail;  // how it was made, for the message
};
WorkFigure probe_work_figure(const Scenario& s, const RunEstimate& e);

}  // namespace sightline
