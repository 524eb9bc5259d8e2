#pragma once
// Hot experts under expert parallelism: how much more routed work the busiest
// expert-parallel rank gets than the mean, beyond the sampling excess of a
// step's tokens (model/moe_routing.hpp), when the scenario does not say
// (serving.moe.load_imbalance). Routers do not spread real traffic evenly:
// a few experts per layer are hot, and the rank holding one waits longest.
//
// From published per-rank statistics: TensorRT-LLM's wide-EP load-balancer
// example (NVIDIA/TensorRT-LLM examples/wide_ep/ep_load_balancer/README.md at
// 2a595f8157669fce7999f2098fbe32d8263981f0) counts DeepSeek-R1's routed
// tokens per rank over iterations 100-200 of a trtllm-bench throughput run,
// 1,024 routed tokens per rank on average, and reports the imbalance ratio
// (max - mean) / mean averaged over layers and iterations:
//   - EP 32, 256 experts (8 per rank), no redundant experts: 1.564272;
//   - EP 36, 288 slots (8 per rank, 32 redundant experts placed by EPLB from
//     the same statistics): 0.115378.
// The sampling excess of 1,024 tokens per rank explains ~6% of either; the
// rest is hot experts. The per-layer figures (0.46 to 2.46 without EPLB, with
// standard deviations of 190-570 tokens) show one rank far above the others,
// so the hot part is modelled as one hot expert per layer on the busiest rank:
// with g experts per rank and the hot one at h times the mean expert, the
// busiest rank carries (h - 1 + g) / g of the mean, so h - 1 is fitted at
// g = 8 and the factor at another layout is 1 + (h - 1) / g. Fewer experts per
// rank (wider EP) leave less to average the hot one out; EPLB's replicas split
// the hot experts, which is the second figure. One model's routing on one
// dataset: a stated default the scenario can override, not a law.
#include <string>

namespace sightline {

// The default hot-expert factor (the busiest rank's routed work over the
// mean, sampling excess excluded) for `experts_per_rank` expert slots on each
// expert-parallel rank, with (`redundant`) or without EPLB's redundant experts;
// at most `max_factor` (a rank cannot take more than every token: the caller's
// bound, e.g. the number of ranks). Arithmetic only: priced every step.
double default_hot_expert_factor(double experts_per_rank, bool redundant, double max_factor);

// Where that factor comes from, in words, for the result.
std::string default_hot_expert_basis(double experts_per_rank, bool redundant);

}  // namespace sightline
