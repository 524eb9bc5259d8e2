#pragma once
// The one search explorer that the deployment and the training search are
// adapters of: product(axes) -> plan -> run(plan, evaluate) -> rank.
//
// - product: every combination of the question's axes, in one fixed order
//   (the first axis slowest), where an axis's values may depend on the values
//   chosen before it (the token budget's list follows chunked prefill; the
//   sequence-parallel choice follows tp). The adapter turns each combination
//   into a candidate and prunes or keeps it (its plan).
// - run: every planned candidate evaluated at the cost model's central bound,
//   the adapter picks the interval points from those outcomes, and each is
//   evaluated again at the kernels' low and high bounds; `for_each` places the
//   evaluations (the CLI's threads, a worker's loop).
// - rank: the adapter's, from the central outcomes and the interval runs
//   (interval_runs_of() finds a candidate's).
// The GPU options both searches take are read here too (read_gpu_option).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "perf/cost_bounds.hpp"

namespace sightline::search {

// `for_each(n, task)` calls task(k) for every k in [0, n), in any order and on
// any threads (the CLI's thread pool; sequential in the page's worker).
using ForEach = std::function<void(size_t n, const std::function<void(size_t)>& task)>;

// The axes' product: `values(axis, at)` is how many values axis `axis` takes
// given the indices `at[0..axis)` already chosen (at least 1: an absent
// optional axis is one value, "the base's"); `visit(at)` is called for each
// combination of `axes` indices, the last axis fastest.
void for_each_combination(size_t axes, const std::function<size_t(size_t axis, const std::vector<size_t>& at)>& values,
                          const std::function<void(const std::vector<size_t>& at)>& visit);

// What a search covered, in both searches' answers: the combinations of its
// axes, those pruned before any run, and those run (one central outcome each).
struct SpaceCounts {
  int64_t planned = 0, pruned = 0, run = 0;
};
// A plan's counts, after checking that the rank step got one central outcome
// per planned candidate (a located error at /results otherwise: the page
// hands the outcomes back through the API).
SpaceCounts space_counts(int64_t planned, size_t pruned, size_t candidates, size_t outcomes);

// A plan's runs: one central outcome per candidate, the picked interval points
// (candidate indices) and their low and high bound outcomes, in picked order.
template <class Outcome>
struct ExplorerRuns {
  std::vector<Outcome> central;
  std::vector<size_t> picked;
  std::vector<Outcome> low, high;
};

// The interval half of run_plan: given the central outcomes, the picked
// points' runs at the low and high bounds.
template <class Outcome>
void run_intervals(ExplorerRuns<Outcome>& runs, const ForEach& for_each,
                   const std::function<Outcome(size_t candidate, CostBound bound)>& evaluate,
                   const std::function<std::vector<size_t>(const std::vector<Outcome>& central)>& pick) {
  runs.picked = pick(runs.central);
  runs.low.resize(runs.picked.size());
  runs.high.resize(runs.picked.size());
  for_each(2 * runs.picked.size(), [&](size_t k) {
    const size_t i = runs.picked[k / 2];
    if (k % 2 == 0) runs.low[k / 2] = evaluate(i, CostBound::Low);
    else runs.high[k / 2] = evaluate(i, CostBound::High);
  });
}

template <class Outcome>
ExplorerRuns<Outcome> run_plan(size_t candidates, const ForEach& for_each,
                               const std::function<Outcome(size_t candidate, CostBound bound)>& evaluate,
                               const std::function<std::vector<size_t>(const std::vector<Outcome>& central)>& pick) {
  ExplorerRuns<Outcome> runs;
  runs.central.resize(candidates);
  for_each(candidates, [&](size_t k) { runs.central[k] = evaluate(k, CostBound::Central); });
  run_intervals(runs, for_each, evaluate, pick);
  return runs;
}

// Candidate `i`'s interval runs, when it is one of `picked` and both its runs
// were given (a client may send fewer): true and `low`/`high` set.
template <class Outcome>
bool interval_runs_of(size_t i, const std::vector<size_t>& picked, const std::vector<Outcome>& low,
                      const std::vector<Outcome>& high, const Outcome*& low_out, const Outcome*& high_out) {
  for (size_t k = 0; k < picked.size(); ++k) {
    if (picked[k] != i) continue;
    if (k >= low.size() || k >= high.size()) return false;
    low_out = &low[k];
    high_out = &high[k];
    return true;
  }
  return false;
}

// A ranked candidate's outcomes as both searches write them into its row `j`:
// the central run's fields, and with interval runs the low and high bound
// runs' under interval_80pct. `outcome_json` writes one outcome.
template <class Ranked, class WriteOutcome>
void write_ranked_outcomes(json& j, const Ranked& r, WriteOutcome outcome_json) {
  j.update(outcome_json(r.central));
  if (r.has_interval)
    j["interval_80pct"] = {{"low_cost_bound", outcome_json(r.low)}, {"high_cost_bound", outcome_json(r.high)}};
}

// One GPU option of a search question: a GPU preset with its price and links.
struct GpuOptionFields {
  std::string gpu;          // GPU preset id
  double usd_per_hour = 0;  // per GPU
  std::string intra_node;   // interconnect preset ids
  std::string inter_node;
  int gpus_per_node = 0;  // always read: the question's, else the GPU's own node_gpus (no node size assumed)
};
// Reads {gpu, usd_per_hour, intra_node, inter_node, gpus_per_node} from `r`
// (whose allowed keys the caller sets): the links default to the GPU preset's
// own and must be of their scope, the server size to the GPU's own node size
// (no more than its link joins). `usd_default`: absent means required.
GpuOptionFields read_gpu_option(const ObjectReader& r, std::optional<double> usd_default);

}  // namespace sightline::search
