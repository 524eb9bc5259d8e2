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
int proving_run(const std::vector<size_t>& family, const std::vector<const CandidateRun*>& ran,
                const serve::RunLimits& limits) {
  for (size_t i : family)
    if (ran[i] && ran[i]->outcome.ok && serve::runs_alike(ran[i]->facts, ran[i]->limits, limits)) return static_cast<int>(i);
  return -1;
}

}  // namespace

bool reuses_runs(const DeploymentSearchSpec& spec) { return !spec.budget(); }

const std::optional<serve::RunLimits>& CandidateLimits::operator()(size_t k) {
  auto it = read_.find(k);
  if (it != read_.end()) return it->second;
  std::optional<serve::RunLimits> l;
  try {
    l = serve::run_limits(read_scenario(scenarios_.at(k)));
  } catch (const SightlineError&) {
  }
  return read_.emplace(k, std::move(l)).first->second;
}

ReuseRound settle_round(const std::vector<std::vector<size_t>>& families, const std::vector<const CandidateRun*>& ran,
                        CandidateLimits& limits) {
  ReuseRound round;
  round.reused_from.assign(ran.size(), -1);
  for (const auto& f : families) {
    bool leader = false;
    for (size_t k : f) {
      if (ran[k]) continue;
      if (limits(k)) round.reused_from[k] = proving_run(f, ran, *limits(k));
      if (round.reused_from[k] >= 0 || leader) continue;
      round.next.push_back(k);  // the family's largest max_num_seqs neither run nor settled
      leader = true;
    }
  }
  return round;
}

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
  std::vector<const CandidateRun*> ran(n, nullptr);
  CandidateLimits limits(plan.scenarios);
  ReuseRound round = settle_round(families, ran, limits);
  while (!round.next.empty()) {
    const std::vector<size_t> next = round.next;
    for_each(next.size(), [&](size_t i) { runs[next[i]] = run_candidate(plan.scenarios[next[i]], CostBound::Central); });
    for (size_t k : next) ran[k] = &runs[k];
    round = settle_round(families, ran, limits);
  }
  std::vector<CandidateOutcome> central(n);
  for (size_t k = 0; k < n; ++k) central[k] = runs[ran[k] ? k : static_cast<size_t>(round.reused_from[k])].outcome;
  if (reused_from) *reused_from = round.reused_from;
  return central;
}

}  // namespace sightline::search
