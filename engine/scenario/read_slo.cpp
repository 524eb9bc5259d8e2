// serving.slo: reading the SLO (its bounds, attainment share and per-bound
// percentiles), the conditions it judges and its one JSON writer.
#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "scenario/simulation_sections.hpp"
#include "scenario/simulation_spec.hpp"

namespace sightline::serve {

// serving.slo: the bounds, the attainment share and per-bound percentiles.
void read_slo(const ObjectReader& r, SimulationSpec& sp) {
  if (const json* sv = r.find("slo")) {
    const std::string spath = r.child_path("slo");
    ObjectReader sr(*sv, spath, {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "attainment", "percentiles"});
    sp.slo.enabled = true;
    sp.slo.ttft_ms = sr.number("ttft_ms", 0.0, 1e9, 0.0);
    sp.slo.tpot_ms = sr.number("tpot_ms", 0.0, 1e9, 0.0);
    sp.slo.itl_ms = sr.number("itl_ms", 0.0, 1e9, 0.0);
    sp.slo.e2e_ms = sr.number("e2e_ms", 0.0, 1e9, 0.0);
    sp.slo.attainment = sr.number("attainment", 0.01, 1.0, 0.9);
    if (sp.slo.ttft_ms <= 0 && sp.slo.tpot_ms <= 0 && sp.slo.itl_ms <= 0 && sp.slo.e2e_ms <= 0)
      fail(error_code::kInvalidValue, spath, "an SLO needs at least one of ttft_ms, tpot_ms, itl_ms, e2e_ms above 0");
    // "percentiles": {"ttft": "p99", ...}: the named bound is judged alone at
    // that percentile; "joint" (the default) keeps it in the attainment share.
    static const std::vector<std::string> kPct = {"joint", "p50", "p90", "p95", "p99"};
    static const double kPctShare[] = {0.0, 0.5, 0.9, 0.95, 0.99};
    const json none = json::object();
    const json* pv = sr.find("percentiles");
    const std::string ppath = pointer_append(spath, "percentiles");
    ObjectReader pr(pv ? *pv : none, ppath, {"ttft", "tpot", "itl", "e2e"});
    const struct { const char* key; const char* bound; double* pct; double ms; } rows[] = {
        {"ttft", "ttft_ms", &sp.slo.ttft_percentile, sp.slo.ttft_ms},
        {"tpot", "tpot_ms", &sp.slo.tpot_percentile, sp.slo.tpot_ms},
        {"itl", "itl_ms", &sp.slo.itl_percentile, sp.slo.itl_ms},
        {"e2e", "e2e_ms", &sp.slo.e2e_percentile, sp.slo.e2e_ms}};
    for (const auto& row : rows) {
      const std::string v = pr.choice(row.key, kPct, std::string("joint"));
      for (size_t i = 0; i < kPct.size(); ++i)
        if (v == kPct[i]) *row.pct = kPctShare[i];
      if (*row.pct > 0 && row.ms <= 0)
        fail(error_code::kConstraint, pointer_append(ppath, row.key),
             std::string("a percentile for ") + row.key + " needs a bound: set slo." + row.bound + " above 0");
    }
    const bool joint_left = (sp.slo.ttft_ms > 0 && sp.slo.ttft_percentile == 0) ||
                            (sp.slo.tpot_ms > 0 && sp.slo.tpot_percentile == 0) ||
                            (sp.slo.itl_ms > 0 && sp.slo.itl_percentile == 0) ||
                            (sp.slo.e2e_ms > 0 && sp.slo.e2e_percentile == 0);
    if (!joint_left && sr.has("attainment"))
      fail(error_code::kConstraint, pointer_append(spath, "attainment"),
           "attainment applies to the bounds that name no percentile, and every bound names one: drop attainment "
           "or a percentile");
  }
}

double SloSpec::bound_ms(SloMetric m) const {
  switch (m) {
    case kSloTtft: return ttft_ms;
    case kSloTpot: return tpot_ms;
    case kSloItl: return itl_ms;
    case kSloE2e: return e2e_ms;
  }
  return 0;
}

double SloSpec::percentile(SloMetric m) const {
  switch (m) {
    case kSloTtft: return ttft_percentile;
    case kSloTpot: return tpot_percentile;
    case kSloItl: return itl_percentile;
    case kSloE2e: return e2e_percentile;
  }
  return 0;
}

namespace {
const SloMetric kSloMetrics[] = {kSloTtft, kSloTpot, kSloItl, kSloE2e};
}  // namespace

std::vector<SloCondition> slo_conditions(const SloSpec& slo) {
  std::vector<SloCondition> out;
  SloCondition joint{0, slo.attainment};
  for (SloMetric m : kSloMetrics)
    if (slo.bound_ms(m) > 0 && slo.percentile(m) == 0) joint.metrics |= m;
  if (joint.metrics != 0) out.push_back(joint);
  for (SloMetric m : kSloMetrics)
    if (slo.bound_ms(m) > 0 && slo.percentile(m) > 0) out.push_back({static_cast<unsigned>(m), slo.percentile(m)});
  return out;
}

double slo_strictest_share(const SloSpec& slo) {
  double s = 0;
  for (const SloCondition& c : slo_conditions(slo)) s = std::max(s, c.share);
  return s > 0 ? s : slo.attainment;
}

const char* slo_metric_name(SloMetric m) {
  switch (m) {
    case kSloTtft: return "TTFT";
    case kSloTpot: return "TPOT";
    case kSloItl: return "ITL";
    case kSloE2e: return "E2E";
  }
  return "?";
}

json slo_to_json(const SloSpec& slo) {
  // attainment only where a bound is judged in the joint share (a document
  // with every bound at a percentile and an attainment does not read).
  json j = json::object();
  const std::vector<SloCondition> cs = slo_conditions(slo);
  if (cs.empty() || slo.percentile(static_cast<SloMetric>(cs.front().metrics)) == 0) j["attainment"] = slo.attainment;
  if (slo.ttft_ms > 0) j["ttft_ms"] = slo.ttft_ms;
  if (slo.tpot_ms > 0) j["tpot_ms"] = slo.tpot_ms;
  if (slo.itl_ms > 0) j["itl_ms"] = slo.itl_ms;
  if (slo.e2e_ms > 0) j["e2e_ms"] = slo.e2e_ms;
  json pct = json::object();
  static const char* kKeys[] = {"ttft", "tpot", "itl", "e2e"};
  for (int i = 0; i < 4; ++i) {
    const double p = slo.percentile(kSloMetrics[i]);
    if (p > 0) pct[kKeys[i]] = "p" + std::to_string(static_cast<int>(p * 100 + 0.5));
  }
  if (!pct.empty()) j["percentiles"] = pct;
  return j;
}

}  // namespace sightline::serve
