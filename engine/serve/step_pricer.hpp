#pragma once
// The serving simulator's step pricing: each pool's cost setup (target,
// co-located and draft models), a formed batch priced for its exact mix by
// the cost model (with the draft's passes, LoRA adapter loads and GEMMs, KV
// swaps, offload-tier reloads and the scheduler's CPU time), and what the
// priced time was made of. The Simulation asks it for a step's seconds; it
// knows nothing of the clock or the requests' lifecycle.
#include <cstdint>
#include <memory>
#include <vector>

#include "perf/cost_setup.hpp"
#include "scenario/scenario.hpp"
#include "serve/sim_state.hpp"

namespace sightline::serve {

// What a step's work would take at the GPU's peaks, in GPU-seconds summed
// over the tensor-parallel ranks that run it (StepCost::compute_peak_s and
// memory_peak_s x the pass's tp, over the target and draft passes: a draft
// model may run on fewer ranks than the target).
struct PeakWork {
  double compute_gpu_s = 0, memory_gpu_s = 0;
};

// The run's priced step time by what it was spent on, in seconds per GPU
// (the serving metrics' busy time by family and the features' shares).
struct PricedTime {
  static constexpr int kFamilies = 11;  // OpFamily values
  double family_s[kFamilies] = {};
  double expert_s = 0, draft_s = 0, swap_s = 0, cpu_s = 0, lora_gemm_s = 0;
  int64_t adapter_loads = 0;
  double lora_load_s = 0;
  double reload_s = 0, reload_exposed_s = 0;  // offload-tier reloads, and the part no compute hid
  // Two-batch overlap's steps: their EP all-to-alls as priced, and the part
  // no stage of the other micro-batch hid (serve/two_batch_overlap.hpp).
  double overlap_all_to_all_s = 0, overlap_exposed_s = 0;
};

// A pool's cost entries: one per model it serves (the target, then the
// co-located model), and the draft's (-1 without a draft pass).
struct PoolCosts {
  std::vector<int> models;
  int draft = -1;
};

class StepPricer {
 public:
  // `reqs`: the simulation's requests (a step's items name them), read for
  // their LoRA adapters.
  StepPricer(const Scenario& scenario, const std::vector<SimRequest>& reqs);

  // The cost setups of one pool on `gpu`; `first`: the first pool, whose GPU
  // sets the LoRA adapter load time.
  PoolCosts add_pool(const PoolSpec& pool, const GpuSpec& gpu, bool first);
  // The GPU a cost entry prices on (stable for the pricer's life).
  const GpuSpec& gpu(int cost_index) const;

  // The step's priced seconds on its own: the target's pass (and the draft's
  // or the n-gram lookup), offload reloads, swaps, adapter loads into the GPU's
  // slots (the engine's LRU of adapters moves), the scheduler's CPU time and
  // `extra_s`. Adds the peaks' work to `work` and the time to totals().
  double price_batch(const Replica& r, ModelEngine& e, const StepBatch& b, double extra_s, PeakWork& work);
  // One pass of cost entry `cost_index` over `shape` with `adapters` distinct
  // LoRA adapters; `accumulate`: count its time in totals(). `summary`:
  // the shape's (summarize_batch) when the caller has counted it.
  double price(int cost_index, const BatchShape& shape, int adapters, bool accumulate, PeakWork* work,
               const BatchSummary* summary = nullptr);

  // While a wide-EP lockstep group's step is priced: all its ranks' tokens,
  // which the target's MoE layers serve together (0 otherwise).
  void set_group_moe_tokens(int64_t tokens) { group_moe_tokens_ = tokens; }
  // kv_aware routing: each cost entry's prefill time per token (the weight of
  // a reload against recomputing), 0 for a draft's.
  std::vector<double> prefill_s_per_token();

  const PricedTime& totals() const { return totals_; }
  double lora_load_time_s() const { return lora_load_time_s_; }

 private:
  // A step built and priced for batches of one summary (model/operators.hpp
  // BatchSummary): its operators, built in place over the last ones (with
  // StepOptions::reuse_unchanged, only the attention cores rebuilt when the
  // summary is the same), and their costs (perf/step_cost.hpp OpCostMemo).
  // One list per summary, not one in all: a request that joins or leaves
  // changes the summary, and the batch sizes a run moves between recur
  // (a decode of n sequences, a prompt, n + 1, ..., n again), so most
  // steps find their summary's list and rebuild only its cores. A 100k
  // head-to-head run (433,530 steps) built 31% of its steps whole with one
  // list, 6.6% with 16, 3.1% with 32 (no faster while every step walked the
  // lists; built_step now walks them only when the summary changed). A whole
  // build and its pricing cost about twenty core-only ones: 32 lists (30k
  // run: 3,915 of 129,970 steps whole, against 8,611 with 16).
  struct BuiltStep {
    BatchSummary key;
    uint64_t last_use = 0;  // 0: never used
    StepOperators ops;
    OpCostMemo memo;
    StepCost priced;  // its parts kept for the next core-only rebuild (StepCost::parts_build)
  };
  struct CostEntry {
    std::unique_ptr<Scenario> scenario;  // the copy CostSetup points into
    CostSetup setup;
    const ModelArch* model = nullptr;
    ParallelLayout layout;
    bool draft = false;
    std::vector<LayerGroup> layer_groups;  // model->layer_groups(), once: every step's build reads them
    // The steps last built, one per batch summary, least recently used first
    // out (built_step).
    std::vector<BuiltStep> steps;
    size_t last_pick = 0;  // the entry built_step returned last
    // The entry last picked for each hash of a summary (summary_slot): a
    // summary met before is found with one compare instead of a walk over
    // the 32 (the summary changes when a prompt joins, at its first decode
    // and when a request leaves). A hint only: checked against the entry's
    // key, and a miss walks as before, so the entries picked are the same.
    uint8_t by_hash[64] = {};
  };
  static constexpr size_t kBuiltSteps = 32;
  static_assert(kBuiltSteps <= 256, "CostEntry::by_hash holds entry indices in a byte");
  static size_t summary_slot(const BatchSummary& key);
  // The entry's built step for batches summarized as `key` (the least
  // recently used one, taken over, when none is).
  BuiltStep& built_step(CostEntry& c, const BatchSummary& key);
  uint64_t use_clock_ = 0;
  int add_cost(const PoolSpec& pool, const GpuSpec& gpu, const ModelArch& model, ParallelLayout layout, bool draft);
  // Distinct adapters in the batch and adapter loads into the GPU's slots.
  void place_adapters(ModelEngine& e, const StepBatch& b, int& adapters, int& loads);
  double price_draft(const Replica& r, const StepBatch& b, PeakWork& work);
  void append_lora_ops(StepOperators& ops, int adapters) const;
  // The target's pass over `shape` as two-batch overlap runs it (two
  // micro-batches, serve/two_batch_overlap.hpp): its seconds with the stack's host time.
  double price_two_batches(CostEntry& c, const BatchShape& shape, StepOptions options, int adapters, bool accumulate,
                           PeakWork* work);
  // The step's time with `reload_s` of prefix reloads from offload tiers.
  double with_reload(double t, double reload_s);

  const Scenario& s_;
  const SimulationSpec& spec_;
  const std::vector<SimRequest>& reqs_;
  int spec_k_ = 0;
  double lora_load_time_s_ = 0;
  std::vector<CostEntry> costs_;
  int64_t group_moe_tokens_ = 0;
  // price()'s working storage, kept between steps so pricing allocates
  // nothing in the steady state: the shape as run when graph padding adds dummies.
  BatchShape ran_scratch_;
  BatchShape overlap_a_, overlap_b_;  // two-batch overlap's micro-batches
  PricedTime totals_;
};

}  // namespace sightline::serve
