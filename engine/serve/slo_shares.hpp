#pragma once
// The share of a run's requests within each condition of the SLO, counted
// the same way everywhere: the joint condition (every bound that names no
// percentile) and each bound with a percentile counts requests; ITL alone
// counts gaps between tokens. An unfinished request misses every condition
// (for ITL alone it counts as one gap out of bound). The steady-state
// verdict counts per batch with count_slo_condition; a whole run's shares
// (metrics.goodput.conditions, which check-capacity's long runs are judged
// by) come from SloShareCounter.
#include <vector>

#include "core/json_text.hpp"
#include "scenario/simulation_spec.hpp"
#include "serve/simulation.hpp"

namespace sightline::serve {

// Adds one request to the condition's tally: `count` is what it weighs (1, or
// its gaps for ITL alone) and `within` how much of it is within the bounds.
void count_slo_condition(const RequestOutcome& r, const SloSpec& slo, const SloCondition& c, double& within, double& count);

class SloShareCounter {
 public:
  explicit SloShareCounter(const SloSpec& slo);
  void add(const RequestOutcome& r);
  // Every condition's share reaches what it asks for (and there is one).
  bool meets() const;
  // The binding condition: the one whose share falls furthest below (or
  // stays nearest above) what it asks for, the first such; false when there
  // is no condition.
  bool binding(double& share_within, double& required_share) const;
  // [{metrics: ["ttft", ...], statistic: "joint" | "p99" ..., counts: "requests" | "gaps",
  //   required_share, share_within, meets}]
  json to_json() const;

 private:
  SloSpec slo_;
  std::vector<SloCondition> conditions_;
  std::vector<double> within_, count_;
};

}  // namespace sightline::serve
