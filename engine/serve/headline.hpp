#pragma once
// The serving headline: throughput and goodput over the steady arrival window
// (the steady-state judge's window: after the warm-up, before the cool-down
// where arrivals have stopped and the queue drains), the verdict against the
// SLO as one line ("meets the SLO at 10 req/s: P99 TTFT 126 ms of 500"), and
// an overload warning when arrivals outrun the service rate, with the
// capacity the run itself shows (its completion rate while overloaded).
// A pure function of the per-request outcomes.
#include <string>
#include <vector>

#include "core/json_text.hpp"
#include "scenario/simulation_spec.hpp"
#include "serve/simulation.hpp"

namespace sightline::serve {

struct ServingHeadline {
  bool judged = false;           // the window held enough requests to judge
  int64_t window_requests = 0;   // requests in the steady window
  double arrival_rate_qps = 0;   // over the window
  double throughput_qps = 0;     // completions inside the window's time span / its length
  int64_t window_completions = 0;  // those completions (throughput_qps × window_span_s)
  double window_span_s = 0;        // the window's span of arrival times
  // A closed loop's batch means of the completion rate (the window's span in
  // equal parts): their count (0: none, the Poisson interval applies) and the
  // standard error of their mean, the throughput.
  int throughput_batches = 0;
  double throughput_batch_se_qps = 0;
  double goodput_qps = 0;        // of them, those within every bound of the SLO
  // Of the window's requests, the share within every bound of the SLO: the
  // attainment the verdict judges (the whole run's, in metrics.goodput, also
  // counts the warm-up and the drain).
  double slo_attainment = 0;
  bool has_slo = false;
  std::string verdict;           // meets | fails | undecided (with an SLO)
  std::string line;              // the verdict line
  bool overloaded = false;
  double capacity_qps = 0;       // estimated service rate when overloaded
  std::string warning;           // the overload warning, or empty
  json to_json() const;
};

// The 80% sampling interval of the goodput: the throughput times the Wilson
// interval of the within-SLO share of the window's requests. The interval
// for a goodput the cost bounds leave where it is (every request within the
// SLO at every bound, as I5.1 at 1 req/s); false without a judged SLO window.
bool goodput_sampling_interval(const ServingHeadline& h, double& low_qps, double& high_qps);

// The 80% sampling interval of the window's SLO attainment: the Wilson
// interval of its share over the window's requests (as the goodput's);
// false without a judged SLO window.
bool attainment_sampling_interval(const ServingHeadline& h, double& low, double& high);

// The 80% sampling interval of the throughput: the Poisson score interval of
// the window's completion count over its span (the completions of a stable
// queue fed by Poisson arrivals are Poisson: Burke's theorem). The interval for
// a throughput the cost bounds leave where it is: below capacity every request
// completes inside the window at either bound, and the throughput is the
// arrival rate the window happened to draw. A closed loop's completions are
// not Poisson (a client sends when its last request ends): with batch means
// (throughput_batches > 0) the interval is theirs, a Student-t interval of
// batches - 1 degrees of freedom. false without a judged window, and for
// batch means with no spread (a loop that repeats itself exactly).
bool throughput_sampling_interval(const ServingHeadline& h, double& low_qps, double& high_qps);

// `workload`: its arrival process's rate is the offered rate the verdict
// line names (none for a trace, all_at_once, a closed loop or a rate under a
// client's max_concurrency: the line names the rate the run's arrivals had;
// a multi-turn workload's rate is of sessions, named beside its turns'
// measured rate). A closed loop's clients, and a capped rate's client, send
// only as fast as they are served: the server's queue cannot grow without
// bound, so the run gets no overload verdict.
ServingHeadline serving_headline(const OutcomeView& outcomes, const SloSpec& slo,
                                 const WorkloadSpec& workload);

// "1,000", "126", "22.1", "0.831": three significant digits, thousands separated.
std::string format_3sig(double v);

}  // namespace sightline::serve
