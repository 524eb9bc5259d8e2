#pragma once
// The steady-state max-QPS search: the highest Poisson (or gamma, fixed,
// trace-scaled) arrival rate at which the serving system is stable and meets
// its SLO once warmed up. Each candidate rate is simulated for as many
// requests as its measured occupancy asks for (steady_state.hpp); a verdict
// that stays uncertain grows the run, and one still uncertain at
// max_requests_per_run counts as a miss, so the answer errs low. A first run
// with every request arriving at once measures the service rate: the upper
// end of the bracket, and the utilization that sizes every later run. The
// rate is then bracketed by halving (doubling when there is no service rate),
// and bisected on the verdicts until the bracket is within `precision`.
// The answer must then hold in a run of 20 x search.num_requests at its rate
// (or longer), not only in the search's own runs: the attainment predicted
// for such an independent run, from the rate's estimate and standard error
// widened for that run's own noise, clears every SLO condition's share at the
// interval's one-sided level (hold_margin, steady_state.hpp). Unless the
// rate's only run predicts that by itself, the prediction stands on an
// independent replication (another seed for arrivals and lengths) twice as
// long as the longest run that passed it and at least as long as the run it
// predicts, which took no part in choosing the rate; one that falls short
// only for its own noise is rerun longer on its stream. A pass that does not replicate (a lucky stream of arrivals, a
// batch-means interval that the slow wander of a queue near saturation made
// too narrow, or an attainment too close to the share for a finite run to
// keep it) turns into a miss and the bisection goes on below it, so the
// answer holds in a long run instead of landing just above the sustainable
// rate.
// Sliced like a Job.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "serve/simulation.hpp"
#include "serve/steady_state.hpp"

namespace sightline::serve {

struct CapacityRun {
  double qps = 0;
  int64_t requests = 0;
  SteadyStateReport report;
  bool meets = false;  // the verdict the bisection used
  bool forced = false; // still uncertain at max_requests_per_run or after the last rerun: a miss
  bool confirmation = false;  // an independent replication of the bracket's lower end
  bool extended = false;      // a replication undecided for its own noise, rerun longer (its rerun decides)
  bool refuted = false;       // passed, but its replication did not predict the hold: counted as a miss
  bool hold_run = false;      // the answer's hold run: the scenario's own run of hold_requests (start_hold_run)
  json whole_run;             // its SLO conditions over all its requests (metrics.goodput.conditions' form)
  std::vector<double> window_var;  // a split pool's: each condition's share variance over windows of hold_requests / k
};

// The fewest and the most requests a capacity search of `scenario` can
// simulate, its service-rate probe included, for a time estimate before it
// runs: at least the probe and one rate's run; at most every bracket and
// bisection rate run with every extension at max_requests_per_run, and every
// confirmation at that length, and every hold run (20 x num_requests).
struct CapacityRequestRange {
  int64_t fewest = 0, most = 0;
};
CapacityRequestRange capacity_search_requests(const Scenario& scenario);

class CapacitySearch {
 public:
  // `scenario` must outlive the search; its serving.max_qps_search and slo drive it.
  explicit CapacitySearch(const Scenario& scenario);
  ~CapacitySearch();
  CapacitySearch(const CapacitySearch&) = delete;
  CapacitySearch& operator=(const CapacitySearch&) = delete;

  bool step(int64_t max_units);  // true once finished; runs about max_units work units' worth of events
  bool finished() const { return finished_; }
  double progress() const;
  int64_t events_processed() const { return events_processed_; }  // over every candidate run so far
  int64_t units_done() const { return units_done_; }               // their work units (Simulation::units_done)
  // The most units the search may do (Job::limit_work: what the run's budget
  // left it); a replication's longer rerun is made only within it.
  void limit_work(int64_t units) { work_limit_ = units; }

  bool has_answer() const { return have_lo_; }
  double qps() const { return have_lo_ ? lo_ : 0.0; }
  const std::vector<CapacityRun>& runs() const { return runs_; }
  // The bracket's upper end (unstable or failing), when a rate was found above the answer.
  std::optional<double> upper_qps() const { return have_hi_ ? std::optional<double>(hi_) : std::nullopt; }
  double service_rate_qps() const { return service_rate_qps_; }
  int64_t requests_simulated() const;  // the probe's and every run's requests
  json to_json() const;  // the result's "max_qps" block

 private:
  void start(double rate, int64_t requests);
  void on_run_finished();
  void next_rate();
  int64_t planned_requests(double rate) const;
  void try_rate(double rate);
  double rho(double rate) const;
  void guesses(double rate, double& in_system, double& correlation) const;
  bool start_confirmation();
  bool start_hold_run();
  void on_hold_run_finished(CapacityRun run);
  void check_answer();
  void refute_lo();
  int64_t hold_requests() const;  // the run length the answer is predicted to hold in
  bool holds(const CapacityRun& run) const;
  double margin_of(const CapacityRun& run) const;
  bool shown_to_hold(double rate) const;
  bool replication_undecided(const CapacityRun& run) const;
  bool rerun_fits(int64_t requests) const;
  void settle();
  void on_confirmation_finished(CapacityRun run);

  const Scenario& s_;
  const SimulationSpec& spec_;
  SteadyStateOptions options_;
  std::unique_ptr<Simulation> sim_;
  double rate_ = 0;
  int64_t requests_ = 0;
  std::vector<CapacityRun> runs_;
  double lo_ = 0, hi_ = 0;
  bool have_lo_ = false, have_hi_ = false;
  int bracket_steps_ = 0, bisect_steps_ = 0;
  bool finished_ = false;
  bool probing_ = false;
  bool confirming_ = false;
  bool holding_ = false;  // the hold run is running
  int hold_runs_ = 0;
  int confirmations_ = 0;
  double service_rate_qps_ = 0;  // measured by the probe; 0 if it measured nothing
  int probe_scale_ = 1;           // replicas the probed one stands for
  std::unique_ptr<Scenario> probe_scenario_;  // one replica of the pool, while probing
  int split_ = 1;  // replicas a round-robin pool's rate is split over: each rate runs one replica (capacity_search.cpp)
  std::unique_ptr<Scenario> replica_scenario_;  // that replica, fed every split_-th arrival
  int64_t probe_requests_ = 0;
  std::string note_;
  int64_t events_processed_ = 0;
  int64_t units_done_ = 0;
  int64_t run_start_units_ = 0;     // units_done_ when the current run started
  int64_t work_limit_ = INT64_MAX;  // limit_work()
  bool rerun_declined_ = false;     // a replication's rerun did not fit work_limit_: it refuted its rate
};

}  // namespace sightline::serve
