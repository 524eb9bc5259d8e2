#include "search/candidate_reuse.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "scenario/scenario.hpp"
#include "serve/simulation.hpp"

namespace sightline::search {

namespace {

// Candidate k's outcome from one of its family's runs that proves it the same, or -1.
int proving_run(const std::vector<size_t>& family, const std::vector<CandidateRun>& runs, const std::vector<bool>& ran,
                const serve::RunLimits& limits) {
  for (size_t i : family)
    if (ran[i] && runs[i].outcome.ok && serve::runs_alike(runs[i].facts, runs[i].limits, limits)) return static_cast<int>(i);
  return -1;
}

// The limits candidate k would run under (its memory plan), without running
// it; none when its scenario does not read (it runs, and fails, on its own).
std::optional<serve::RunLimits> limits_of(const json& scenario) {
  try {
    return serve::run_limits(read_scenario(scenario));
  } catch (const SightlineError&) {
    return std::nullopt;
  }
}

}  // namespace

std::vector<std::vector<size_t>> seqs_families(const Plan& plan) {
  std::map<std::string, size_t> family_of;
  std::vector<std::vector<size_t>> families;
  for (size_t k = 0; k < plan.scenarios.size(); ++k) {
    // The candidate's document less the key its max_num_seqs sets (candidate_document).
    json rest = plan.scenarios[k];
    rest["serving"]["scheduler"].erase("max_num_seqs");
    const auto [it, added] = family_of.emplace(rest.dump(), families.size());
    if (added) families.emplace_back();
    families[it->second].push_back(k);
  }
  for (auto& f : families)
    std::stable_sort(f.begin(), f.end(), [&](size_t a, size_t b) {
      return plan.candidates[a].max_num_seqs > plan.candidates[b].max_num_seqs;
    });
  return families;
}

std::vector<CandidateOutcome> run_central_reusing(const Plan& plan, const ForEach& for_each, std::vector<int>* reused_from) {
  const size_t n = plan.scenarios.size();
  const std::vector<std::vector<size_t>> families = seqs_families(plan);
  std::vector<CandidateRun> runs(n);
  std::vector<bool> ran(n, false), done(n, false);
  std::vector<int> from(n, -1);
  std::vector<CandidateOutcome> central(n);
  std::map<size_t, std::optional<serve::RunLimits>> sibling_limits;  // read once, when first asked
  auto limits = [&](size_t k) -> const std::optional<serve::RunLimits>& {
    auto it = sibling_limits.find(k);
    if (it == sibling_limits.end()) it = sibling_limits.emplace(k, limits_of(plan.scenarios[k])).first;
    return it->second;
  };
  for (;;) {
    // This round: each family's largest unresolved max_num_seqs.
    std::vector<size_t> leaders;
    for (const auto& f : families) {
      const auto it = std::find_if(f.begin(), f.end(), [&](size_t k) { return !done[k]; });
      if (it != f.end()) leaders.push_back(*it);
    }
    if (leaders.empty()) break;
    for_each(leaders.size(), [&](size_t i) { runs[leaders[i]] = run_candidate(plan.scenarios[leaders[i]], CostBound::Central); });
    for (size_t k : leaders) {
      ran[k] = done[k] = true;
      central[k] = runs[k].outcome;
    }
    for (const auto& f : families)
      for (size_t k : f) {
        if (done[k] || !limits(k)) continue;
        const int i = proving_run(f, runs, ran, *limits(k));
        if (i < 0) continue;
        central[k] = runs[static_cast<size_t>(i)].outcome;
        from[k] = i;
        done[k] = true;
      }
  }
  if (reused_from) *reused_from = from;
  return central;
}

}  // namespace sightline::search
