#pragma once
// A serving step's MoE layers as the pool places them: where the experts are
// (expert parallelism, wide EP over attention data-parallel ranks, EPLB's
// redundant copies), how unevenly tokens reach them, and the dispatch /
// combine all-to-alls. Shared by the simulator's step pricing and the CLI's
// step decomposition (explain-step), so both price the same step.
#include <cstdint>

#include "model/moe_hot_experts.hpp"
#include "model/moe_routing.hpp"
#include "model/operators.hpp"
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

// Whether `shape` is a decode step (every sequence cached, at most
// kLowLatencyMaxTokensPerSeq new tokens): the all-to-all's auto mode and the
// overlap's stage plan both follow it.
bool is_decode_step(const BatchShape& shape);

// Appends the dispatch and combine all-to-alls of expert parallelism for the
// batch `shape` (see the comment in moe_step.cpp).
void append_moe_all_to_all(const MoeServingSpec& moe, const ModelArch& m, Dtype activations, const BatchShape& shape,
                           const MoeRouting& routing, StepOperators& ops);

}  // namespace sightline::serve
