#pragma once
// A serving step's MoE layers as the pool places them: where the experts are
// (expert parallelism, wide EP over attention data-parallel ranks, EPLB's
// redundant copies), how unevenly tokens reach them, and the dispatch /
// combine all-to-alls. Shared by the simulator's step pricing and the CLI's
// step decomposition (explain-step), so both price the same step.
#include <cstdint>

#include "hw/hardware.hpp"
#include "model/moe_hot_experts.hpp"
#include "model/moe_routing.hpp"
#include "model/operators.hpp"
#include "perf/step_cost.hpp"
#include "scenario/simulation_spec.hpp"

namespace sightline::serve {

// A step whose sequences all carry a KV cache and at most this many new
// tokens (decode, speculative verification) is a decode step for the
// all-to-all's auto mode.
inline constexpr int64_t kLowLatencyMaxTokensPerSeq = 16;

// The hot-expert factor of the routing: the
// scenario's serving.moe.load_imbalance when given; under expert parallelism
// otherwise the published default (model/moe_hot_experts.hpp) for
// `experts_per_gpu` of `expert_slots` on each rank; 1 without it. Priced
// every step: arithmetic only. The basis says which, in words.
double serving_load_imbalance(const MoeServingSpec& moe, int experts_per_gpu, int expert_slots);
std::string serving_load_imbalance_basis(const MoeServingSpec& moe, int experts_per_gpu);

// The routing of one MoE step on `layout`: the busiest GPU's experts are
// load_imbalance (serving_load_imbalance) times as likely to be chosen (times the sampling excess of
// the busiest EP rank, model/moe_routing.hpp); expert parallelism keeps
// slots / ep experts per GPU, each split over tp / ep ranks. `group_tokens`:
// a lockstep group's tokens this step (0: attention_dp x this rank's).
MoeRouting serving_moe_routing(const MoeServingSpec& moe, const ModelArch& m, const ParallelLayout& layout,
                               int64_t group_tokens);

// Appends the dispatch and combine all-to-alls of expert parallelism for the
// batch `shape` (see the comment in moe_step.cpp).
void append_moe_all_to_all(const MoeServingSpec& moe, const ModelArch& m, Dtype activations, const BatchShape& shape,
                           const MoeRouting& routing, StepOperators& ops);

// Two-batch overlap (SGLang --enable-two-batch-overlap; the scenario's
// serving.moe.two_batch_overlap): each step runs as two micro-batches whose
// stages interleave on one stream, so one micro-batch's dispatch or combine
// travels while the other computes (sgl-project/sglang
// python/sglang/srt/two_batch_overlap.py and batch_overlap/operations_strategy.py
// at 0e02cef9). A decode step splits its sequences in half by count; any
// other step at the sequence where the new tokens first reach half their
// sum. `a` and `b` are left empty (false) with fewer than two sequences: one
// sequence runs as one batch.
bool split_two_batches(const BatchShape& shape, BatchShape& a, BatchShape& b);
// Whether `shape` is a decode step (every sequence cached, at most
// kLowLatencyMaxTokensPerSeq new tokens): the all-to-all's auto mode and the
// overlap's stage plan both follow it.
bool is_decode_step(const BatchShape& shape);

// One step's GPU time under two-batch overlap, from the two micro-batches'
// operators (their EP all-to-alls included) and their priced parts, in
// operator order (a host part after them is left out), and what it was made of.
struct TwoBatchOverlapTime {
  double gpu_s = 0;          // both micro-batches' kernels + the exposed all-to-all + the SM share
  double all_to_all_s = 0;   // both micro-batches' dispatch and combine, as priced
  double exposed_s = 0;      // of those, what no stage of the other micro-batch hid
  double sm_share_s = 0;     // GEMMs slowed by the SMs a normal-mode all-to-all holds (prefill)
};
// `decode`: the step's stage plan (is_decode_step of the whole step); `gpu`:
// its SM count and vendor (the SM share is NVIDIA's: SGLang leaves it unset on
// ROCm).
TwoBatchOverlapTime two_batch_overlap_time(const StepOperators& ops_a, const StepCost& a, const StepOperators& ops_b,
                                           const StepCost& b, bool decode, const ModelArch& m, const GpuSpec& gpu);

}  // namespace sightline::serve
