// The deployment search's analytic bounds (search/deployment_search.hpp,
// LayoutBounds): step prices from the same cost model the runs use, at its
// central bound, that floor TTFT and TPOT and cap a replica's request rate.
#include "search/deployment_search.hpp"

#include <algorithm>
#include <optional>

#include "model/operators.hpp"
#include "perf/cost_setup.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_spec.hpp"

namespace sightline::search {

namespace {

// The mean of a workload length distribution, in tokens.
double mean_tokens_of(const serve::LengthSpec& l) {
  switch (l.dist) {
    case serve::LengthDist::Fixed: return l.value;
    case serve::LengthDist::Normal:
    case serve::LengthDist::Lognormal: return l.mean;
    default: return 0.5 * static_cast<double>(l.min + l.max_possible());
  }
}

}  // namespace

LayoutBounds layout_bounds(const Scenario& s, const Candidate& c) {
  LayoutBounds lb;
  const serve::SimulationSpec& sim = *s.serving->simulation;
  const double prompt = std::max(1.0, mean_tokens_of(sim.workload.prompt));
  const double output = std::max(1.0, mean_tokens_of(sim.workload.output));
  const CostSetup cost = make_cost_setup(s.cost_model, s.hardware);
  StepOptions options;
  options.attention = s.serving->attention;
  options.fusion = s.cost_model.software_stack.fusion;
  ParallelLayout layout{c.tp, c.pp};
  if (c.attention_dp > 1 && !sim.cluster.pools.empty()) {
    // Wide EP: each GPU holds slots / ep whole experts and serves the tokens
    // of its whole data-parallel group (as the simulation prices it, less the
    // all-to-all and the imbalance, so the bound stays optimistic).
    layout = sim.cluster.pools.front().layout;
    options.moe.expert_slots = layout.expert_slots;
    const int slots = layout.expert_slots > 0 ? layout.expert_slots : s.model.moe.num_experts;
    options.moe.experts_per_gpu = slots / sim.moe.expert_parallel;
    options.moe.expert_tp = std::max(1, layout.tp / sim.moe.expert_parallel);
    options.moe.attention_dp = sim.moe.attention_data_parallel;
    options.moe.rank_sampling_excess = false;  // a lower bound: the busiest rank at the mean
  }
  auto step_s = [&](const BatchShape& b) { return cost.price(build_forward_step(s.model, s.precision, layout, b, options)).time_s; };
  // Decode steps run on the decode pool: with mixed pools, its own GPU, link and tp.
  HardwareSpec decode_hw = s.hardware;
  for (const serve::PoolSpec& p : sim.cluster.pools)
    if (p.role == serve::PoolRole::Decode) {
      if (p.gpu) decode_hw.gpu = *p.gpu;
      if (p.intra_node) decode_hw.intra_node = p.intra_node;
    }
  std::optional<CostSetup> mixed_cost;
  if (c.mixed()) mixed_cost.emplace(make_cost_setup(s.cost_model, decode_hw));
  const CostSetup& decode_cost = mixed_cost ? *mixed_cost : cost;
  const ParallelLayout decode_layout{c.decode_tp(), c.pp};
  auto decode_step_s = [&](const BatchShape& b) {
    return decode_cost.price(build_forward_step(s.model, s.precision, decode_layout, b, options)).time_s;
  };
  BatchShape one;
  one.seqs.push_back(SeqChunk{1, static_cast<int64_t>(prompt)});
  lb.decode1_s = decode_step_s(one);
  BatchShape pre;
  pre.seqs.push_back(SeqChunk{static_cast<int64_t>(prompt), 0});
  lb.prefill_s = step_s(pre);
  BatchShape full;
  const int64_t ctx = static_cast<int64_t>(prompt + output / 2);
  for (int64_t i = 0; i < c.max_num_seqs; ++i) full.seqs.push_back(SeqChunk{1, ctx});
  // Decode alone at a full batch: an upper bound on a replica's requests per
  // second (a colocated replica also spends time on prefill; a decode pool's
  // replica does only this).
  lb.replica_qps = static_cast<double>(c.max_num_seqs) / decode_step_s(full) / output;
  if (c.ratio.disaggregated()) {
    // A prefill replica's rate is bounded by the best prompt tokens per second
    // of its steps: a lone mean prompt, or the largest step the scheduler
    // allows (as many mean prompts as its token budget and max_num_seqs take).
    // Pricing every prompt at the mean undercounts attention (quadratic in the
    // prompt), and chunking a prompt only adds steps, so this errs high.
    const int64_t fit = std::min<int64_t>(c.max_num_seqs, sim.scheduler.max_num_batched_tokens / static_cast<int64_t>(prompt));
    double tokens_per_s = prompt / lb.prefill_s;
    if (fit > 1) {
      BatchShape batch;
      for (int64_t i = 0; i < fit; ++i) batch.seqs.push_back(SeqChunk{static_cast<int64_t>(prompt), 0});
      tokens_per_s = std::max(tokens_per_s, static_cast<double>(fit) * prompt / step_s(batch));
    }
    lb.prefill_replica_qps = tokens_per_s / prompt;
  }
  return lb;
}

}  // namespace sightline::search
