#pragma once
// Reusing a candidate's central run for its siblings: candidates whose
// scenarios differ only in max_num_seqs (a family) often run the very same
// simulation, because the batch limit never binds and the KV pool, whose size
// max_num_seqs also sets through the memory plan, is never short. Each run
// records what its limits decided (serve/limit_facts.hpp) and a sibling takes
// its outcome only when serve::runs_alike() proves the sibling's run would
// answer every one of those checks the same; otherwise the sibling runs.
//
// The runs go in rounds: each family's largest unresolved max_num_seqs runs
// (all families at once, on `for_each`), then every unresolved sibling is
// checked against its family's runs so far. The largest limit runs first
// because its facts prove the most: its pool is the smallest (the largest
// activation reserve), so a larger pool never answers its KV checks otherwise.
// The rounds make the outcome independent of the threads' order. A round is
// settle_round(): the CLI runs its rounds on threads (run_central_reusing),
// the page on its workers, asking the engine each time (api::search_reuse).
#include <cstddef>
#include <map>
#include <optional>
#include <vector>

#include "search/deployment_search.hpp"
#include "serve/limit_facts.hpp"

namespace sightline::search {

// One candidate's run and what its limits decided.
struct CandidateRun {
  CandidateOutcome outcome;
  serve::LimitFacts facts;   // opaque when the run did not finish
  serve::RunLimits limits;   // the limits it ran under
};
// Runs one candidate scenario at a cost bound (thread-safe: shares nothing).
CandidateRun run_candidate(const json& scenario, CostBound bound);

// Whether a question's runs may be reused at all: the budget question's
// capacity searches run other scenarios than their own (serve::LimitFacts
// marks them opaque), so nothing is reused there and every candidate runs.
bool reuses_runs(const DeploymentSearchSpec& spec);

// The limits each candidate of `scenarios` would run under (its memory plan),
// read once when first asked, without running it; none when its scenario does
// not read (it runs, and fails, on its own).
class CandidateLimits {
 public:
  explicit CandidateLimits(const std::vector<json>& scenarios) : scenarios_(scenarios) {}
  const std::optional<serve::RunLimits>& operator()(size_t k);

 private:
  const std::vector<json>& scenarios_;
  std::map<size_t, std::optional<serve::RunLimits>> read_;
};

// What the central runs so far settle. `ran[k]`: candidate k's run, null when
// it has not run. Each candidate not run takes the first run of its family
// (largest max_num_seqs first) that proves it the same; the next round runs
// each family's largest candidate neither run nor settled.
struct ReuseRound {
  std::vector<int> reused_from;  // per candidate: the candidate whose run it takes, -1 when none (yet)
  std::vector<size_t> next;      // the next round's runs, by family; empty once every candidate is settled
};
ReuseRound settle_round(const std::vector<std::vector<size_t>>& families, const std::vector<const CandidateRun*>& ran,
                        CandidateLimits& limits);

// Candidates (plan indices) in families of scenarios equal but for
// /serving/scheduler/max_num_seqs, each by max_num_seqs from the largest;
// families in the order of their first candidate.
std::vector<std::vector<size_t>> seqs_families(const Plan& plan);

// Every candidate's central outcome, a sibling's copied from a run that
// proves it the same. `reused_from[k]`: the candidate whose run candidate k
// took, or -1 when k ran (may be null).
std::vector<CandidateOutcome> run_central_reusing(const Plan& plan, const ForEach& for_each, std::vector<int>* reused_from);

}  // namespace sightline::search
