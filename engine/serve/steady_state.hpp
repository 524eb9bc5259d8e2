#pragma once
// Steady-state verdict on one serving run at a fixed arrival rate: is the
// system stable (the number of requests in it does not keep growing, and
// completions keep pace with arrivals), and does it meet the SLO once warmed
// up? The SLO attainment is estimated by batch means over the requests that
// arrived after the warm-up (and before the cool-down at the end, where
// arrivals stop), with a Student-t confidence interval, so a verdict carries
// its own uncertainty. Pure functions of the per-request outcomes.
#include <cstdint>
#include <vector>

#include "scenario/simulation_spec.hpp"
#include "serve/simulation.hpp"

namespace sightline::serve {

enum class Verdict { Meets, Fails, Uncertain };
const char* to_string(Verdict v);

struct SteadyStateOptions {
  double confidence = 0.9;        // two-sided level of the batch-means interval
  int batches = 10;               // batch means over the measured window
  int64_t min_batch_requests = 50;
  // A workload whose arrival rate may ramp (judge_as_workload: a multi-turn
  // workload's turns, a replayed trace): the window's overload tests hold
  // completions to the arrivals one mean service time (first token to
  // completion) earlier (offered_load.hpp, expected_served). The other
  // arrival processes are stationary by construction. (A run too short for a
  // window is judged with the lag whatever its workload: its fill has not ended.)
  bool lag_arrivals = false;
  // A multi-turn workload's ramp-up (seconds from its first arrival): its
  // turns' rate grows for about a session's lifetime, so the turns arriving
  // within it are warm-up whatever L says (0: none).
  double ramp_s = 0;
};

// Sets what `w` changes in how its runs are judged: lagged arrivals for a
// multi-turn workload or a replayed trace; a multi-turn workload's ramp-up
// (its sessions' least lifetime: a typical session's turns after the first,
// each a typical think time later, latencies not counted; for a replayed
// session trace, its sessions' mean recorded span from first turn to last).
void judge_as_workload(SteadyStateOptions& o, const WorkloadSpec& w);

struct SteadyStateReport {
  int64_t requests = 0;            // in the run
  int64_t warmup_requests = 0;     // skipped at the start (arrival order)
  int64_t cooldown_requests = 0;   // skipped at the end
  int64_t measured_requests = 0;   // judged
  int64_t unfinished = 0;          // dropped or never completed (whole run)
  double in_system_mean = 0;       // mean requests in the system over the window (Little's L)
  double correlation_requests = 0; // autocorrelation time of that number, in arrivals
  double in_system_growth = 0;     // its growth across the window: arrivals - completions
  double in_system_growth_se = 0;  // its Poisson scale: sqrt(arrivals + completions)
  double arrival_rate_qps = 0;     // over the window
  double completion_rate_qps = 0;  // completions inside the window's time span / its length
  double e2e_mean_s = 0;           // measured requests' mean end-to-end time
  bool stable = false;
  const char* unstable_reason = nullptr;
  // Arrivals outrun the service rate (the in-system count grows, or
  // completions or admissions fall behind arrivals): the headline's overload.
  bool overloaded = false;
  double attainment = 0;           // point estimate (mean of batch means)
  double attainment_low = 0, attainment_high = 0;  // confidence interval
  double attainment_target = 0;    // the share its condition asks for
  unsigned binding_metrics = 0;    // SloMetric bits of the reported (least-margin) condition
  int64_t needed_requests = 0;     // run size this window's L asks for (see required_requests)
  Verdict verdict = Verdict::Uncertain;
  // A pass at the full confidence: stable, and every condition's interval
  // lower end at or above its share (not a narrow interval decided at 75%).
  bool shown = false;
  // Every SLO condition's batch-means estimate over the window, for a
  // prediction of another run's attainment (attainment_hold_low).
  struct Estimate {
    double mean = 0;   // mean of the batch means
    double se = 0;     // its standard error: the batch means' spread / sqrt(batches)
    double share = 0;  // the share the condition asks for
  };
  std::vector<Estimate> estimates;
  int batches = 0;                 // batch means behind each estimate
};

// The lower prediction bound, at the one-sided level of `o.confidence`'s
// interval, for the binding condition's attainment over an independent run
// of `horizon` requests at the same rate, minus its share (>= 0 for every
// condition: the run is predicted to meet the SLO); -1 when the report has no
// estimate. See capacity_search.cpp for why the search's answer is judged on it.
//   A run of H requests in steady state has an attainment whose sampling
//   variance is sigma^2 / H, where sigma^2 = m s_b^2 is the asymptotic
//   (autocorrelation-inclusive) variance per request that batch means of m
//   requests estimate (s_b^2 their variance). This run's estimate, over a
//   window of W = B m requests, has variance sigma^2 / W = s_b^2 / B = se^2.
//   The two are independent, so the estimate minus the other run's
//   attainment has variance se^2 (1 + W / H): the bound is
//   mean - t se sqrt(1 + W / H) with the Student-t quantile of B - 1 degrees
//   of freedom. As H grows it tends to the interval's lower end (the
//   steady-state attainment itself); a finite run adds its own noise.
double hold_margin(const SteadyStateReport& r, int64_t horizon, const SteadyStateOptions& o);
// The hold margin a longer run at the same rate would reach as its length
// grows without bound, its estimates' means and per-request variance staying
// as measured: mean - t se sqrt(W / H) - share, the part of the prediction's
// width that is the other run's own noise (capacity_search.cpp: a replication
// below 0 here is refuted; one below 0 only in hold_margin is rerun longer).
double hold_margin_limit(const SteadyStateReport& r, int64_t horizon, const SteadyStateOptions& o);

// How long a run must be. The warm-up and every batch span at least
// `correlation` requests (the integrated autocorrelation time of the number
// of requests in the system, measured in the run: a continuous-batching
// server's occupancy wanders slowly, because its service rate grows with its
// batch), at least the heavy-traffic relaxation time rho / (1 - sqrt(rho))^2
// of a queue at utilization `rho` (arrival rate / measured service rate;
// <= 0: unknown), a few turnovers of the system's contents (`in_system`,
// Little's L = rate x mean time in the system), and enough requests to see a
// few SLO misses at `attainment`.
struct RunSize {
  int64_t warmup = 0, batch = 0, cooldown = 0;
  int64_t total(int batches) const { return warmup + batches * batch + cooldown; }
};
RunSize run_size(double in_system, double correlation, double rho, double attainment, const SteadyStateOptions& o);
double relaxation_requests(double rho);

// Integrated autocorrelation time of a series, in samples (Geyer's initial
// positive sequence on a series thinned to at most 2000 points).
double autocorrelation_time(const std::vector<double>& x);

// The requests that arrived, in arrival order: what a run's judges read. A
// run stopped at one of serving.limits holds the records of requests due
// after the stop; read as arrivals they made a queue that seemed to outgrow
// its server (I3.3 at 3,000 requests, one a minute and each done in 19 s,
// stopped at one simulated day: "overloaded"). `outcomes` itself, or its
// first part, when already in order (no copy); else a sorted copy in `storage`.
OutcomeView arrived_by_arrival(const OutcomeView& outcomes, std::vector<RequestOutcome>& storage);

// Judges a run. `in_system_guess`, `correlation_guess` and `rho` size the
// warm-up (the run's own measurements can only lengthen it).
SteadyStateReport judge_steady_state(const OutcomeView& outcomes, const SloSpec& slo,
                                     double in_system_guess, double correlation_guess, double rho,
                                     const SteadyStateOptions& o);

// The most requests per second the system completes when it is never idle:
// completions between the first and the third quartile of completion times of
// a run whose requests all arrive at once (0 if it has too few).
double saturated_service_rate(const OutcomeView& outcomes);

// An undecided verdict reruns the same rate longer, at most this many times,
// before it counts as a miss; each rerun is what the measured occupancy asks
// for, at least twice as long, never past `max_requests`.
constexpr int kMaxRunExtensions = 3;
int64_t extended_run_requests(const SteadyStateReport& r, int64_t requests, int64_t max_requests);

// Two-sided Student-t quantile for `dof` degrees of freedom at `confidence`.
double student_t_quantile(int dof, double confidence);

}  // namespace sightline::serve
