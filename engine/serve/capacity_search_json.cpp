// The capacity search's answer as the result's "max_qps" block: the bracket,
// its confidence, and every run the search made (kept apart from the search
// itself, capacity_search.cpp).
#include <string>

#include "serve/capacity_search.hpp"

namespace sightline::serve {

json CapacitySearch::to_json() const {
  json runs = json::array();
  const int64_t simulated = requests_simulated();
  for (const auto& run : runs_) {
    const SteadyStateReport& r = run.report;
    runs.push_back({{"qps", run.qps},
                    {"requests", run.requests},
                    {"warmup_requests", r.warmup_requests},
                    {"measured_requests", r.measured_requests},
                    {"needed_requests", r.needed_requests},
                    {"in_system_mean", r.in_system_mean},
                    {"in_system_growth", r.in_system_growth},
                    {"in_system_growth_se", r.in_system_growth_se},
                    {"correlation_requests", r.correlation_requests},
                    {"arrival_rate_qps", r.arrival_rate_qps},
                    {"completion_rate_qps", r.completion_rate_qps},
                    {"stable", r.stable},
                    {"unstable_reason", r.unstable_reason ? json(r.unstable_reason) : json(nullptr)},
                    {"slo_attainment", r.attainment},
                    {"slo_attainment_low", r.attainment_low},
                    {"slo_attainment_high", r.attainment_high},
                    {"hold_margin", r.estimates.empty() ? json(nullptr) : json(margin_of(run))},
                    {"completed_all", r.unfinished == 0},
                    {"verdict", to_string(r.verdict)},
                    {"meets_slo", run.meets},
                    {"decided", run.meets || r.verdict == Verdict::Fails || run.forced || (run.confirmation && !run.extended)},
                    {"confirmation", run.confirmation},
                    {"hold_run", run.hold_run},
                    {"whole_run_conditions", run.hold_run ? run.whole_run : json(nullptr)},
                    {"refuted_by_replication", run.refuted},
                    {"undecided_counted_as_miss", run.forced}});
  }
  const json slo = slo_to_json(spec_.slo);
  std::string note = note_;
  if (rerun_declined_)
    note += std::string(note.empty() ? "" : "; ") +
            "a replication that fell short of the hold only by its own noise counted as a miss: its longer rerun did not "
            "fit the run's work budget (limits.max_work_units), and a larger budget may answer a higher rate";
  const double pct = spec_.search.confidence * 100;
  json confidence = {{"level", spec_.search.confidence},
                     {"lower_qps", have_lo_ ? json(lo_) : json(nullptr)},
                     {"upper_qps", have_hi_ ? json(hi_) : json(nullptr)},
                     {"relative_width", have_lo_ && have_hi_ && lo_ > 0 ? json(hi_ / lo_ - 1) : json(nullptr)},
                     {"hold_requests", hold_requests()},
                     {"meaning", "the sustainable rate lies between lower_qps (stable, and the " +
                                     std::to_string(static_cast<int>(pct)) +
                                     "% batch-means interval of the post-warm-up SLO attainment at or above the target; and the "
                                     "attainment predicted for an independent run of hold_requests at that rate, from an "
                                     "independent replication or the rate's only run, at or above every condition's share at "
                                     "the interval's one-sided level: each run's hold_margin) "
                                     "and upper_qps (unstable, or that interval below the target, or undecided at "
                                     "max_requests_per_run or after 3 longer reruns, or a replication that did not predict the "
                                     "hold); the statistical bracket only: the cost model's own error "
                                     "(see accuracy) moves both"}};
  return {{"qps", have_lo_ ? lo_ : 0.0},
          {"upper_qps", have_hi_ ? json(hi_) : json(nullptr)},
          {"slo", slo},
          {"confidence", confidence},
          {"service_rate_qps", service_rate_qps_},
          {"service_rate_probe_requests", probe_requests_},
          {"replicas_split", split_},
          {"requests_per_run", spec_.search.num_requests},
          {"max_requests_per_run", spec_.search.max_requests_per_run},
          {"requests_simulated", simulated},
          {"criterion",
           "steady state: the requests in the system do not keep growing and completions keep pace with arrivals; "
           "the SLO attainment of the requests after a warm-up of 3 turnovers of the system (Little's L) and before "
           "a cool-down of 1, in 10 batch means, reaches slo.attainment with its interval"},
          {"runs", runs},
          {"note", note.empty() ? json(nullptr) : json(note)}};
}

}  // namespace sightline::serve
