#include "serve/slo_shares.hpp"

#include <cmath>
#include <string>

namespace sightline::serve {

namespace {

bool per_gap(const SloSpec& slo, const SloCondition& c) { return c.metrics == kSloItl && slo.itl_percentile > 0; }

double share_of(double within, double count) { return count > 0 ? within / count : 1.0; }

}  // namespace

void count_slo_condition(const RequestOutcome& r, const SloSpec& slo, const SloCondition& c, double& within, double& count) {
  if (per_gap(slo, c)) {
    const bool done = r.completion >= 0;
    count += done ? static_cast<double>(r.gaps) : 1.0;
    within += done ? static_cast<double>(r.gaps - r.gaps_over_itl) : 0.0;
  } else {
    count += 1;
    if (meets_slo(r, slo, c.metrics)) within += 1;
  }
}

SloShareCounter::SloShareCounter(const SloSpec& slo)
    : slo_(slo), conditions_(slo.enabled ? slo_conditions(slo) : std::vector<SloCondition>{}) {
  within_.assign(conditions_.size(), 0.0);
  count_.assign(conditions_.size(), 0.0);
}

void SloShareCounter::add(const RequestOutcome& r) {
  for (size_t k = 0; k < conditions_.size(); ++k) count_slo_condition(r, slo_, conditions_[k], within_[k], count_[k]);
}

bool SloShareCounter::meets() const {
  if (conditions_.empty()) return false;
  for (size_t k = 0; k < conditions_.size(); ++k)
    if (share_of(within_[k], count_[k]) < conditions_[k].share) return false;
  return true;
}

bool SloShareCounter::binding(double& share_within, double& required_share) const {
  double least = 1e300;
  for (size_t k = 0; k < conditions_.size(); ++k) {
    const double share = share_of(within_[k], count_[k]);
    if (share - conditions_[k].share < least) {
      least = share - conditions_[k].share;
      share_within = share;
      required_share = conditions_[k].share;
    }
  }
  return !conditions_.empty();
}

json SloShareCounter::to_json() const {
  static const char* kKeys[] = {"ttft", "tpot", "itl", "e2e"};
  static const SloMetric kMetrics[] = {kSloTtft, kSloTpot, kSloItl, kSloE2e};
  json out = json::array();
  for (size_t k = 0; k < conditions_.size(); ++k) {
    const SloCondition& c = conditions_[k];
    json metrics = json::array();
    for (int i = 0; i < 4; ++i)
      if (c.metrics & kMetrics[i]) metrics.push_back(kKeys[i]);
    const bool alone = metrics.size() == 1 && slo_.percentile(static_cast<SloMetric>(c.metrics)) > 0;
    const double share = share_of(within_[k], count_[k]);
    out.push_back({{"metrics", metrics},
                   {"statistic", alone ? "p" + std::to_string(static_cast<int>(std::lround(c.share * 100))) : std::string("joint")},
                   {"counts", per_gap(slo_, c) ? "gaps" : "requests"},
                   {"required_share", c.share},
                   {"share_within", share},
                   {"meets", share >= c.share}});
  }
  return out;
}

}  // namespace sightline::serve
