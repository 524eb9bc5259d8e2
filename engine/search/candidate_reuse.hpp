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
// The rounds make the outcome independent of the threads' order.
#include <cstddef>
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

// Candidates (plan indices) in families of scenarios equal but for
// /serving/scheduler/max_num_seqs, each by max_num_seqs from the largest;
// families in the order of their first candidate.
std::vector<std::vector<size_t>> seqs_families(const Plan& plan);

// Every candidate's central outcome, a sibling's copied from a run that
// proves it the same. `reused_from[k]`: the candidate whose run candidate k
// took, or -1 when k ran (may be null).
std::vector<CandidateOutcome> run_central_reusing(const Plan& plan, const ForEach& for_each, std::vector<int>* reused_from);

}  // namespace sightline::search
