#include "model/moe_hot_experts.hpp"

#include <algorithm>
#include <cstdio>

#include "model/moe_routing.hpp"

namespace sightline {

namespace {

// The published statistics (see the header): ranks, expert slots per rank,
// mean routed tokens per rank and the mean imbalance ratio (max - mean) / mean.
struct PublishedRankImbalance {
  int ranks;
  double experts_per_rank;
  double mean_tokens_per_rank;
  double imbalance_ratio;
};
constexpr PublishedRankImbalance kWithoutEplb{32, 8, 1024, 1.564272};
constexpr PublishedRankImbalance kWithEplb{36, 8, 1024, 0.115378};

// h - 1 of the one-hot-expert model: the busiest rank's excess over the mean
// at the published layout, its sampling excess divided out, times g.
double hot_expert_excess(const PublishedRankImbalance& p) {
  const double sampling = busiest_rank_sampling_factor(p.mean_tokens_per_rank * p.ranks, p.ranks);
  const double hot = (1.0 + p.imbalance_ratio) / sampling;
  return std::max(0.0, hot - 1.0) * p.experts_per_rank;
}

}  // namespace

double default_hot_expert_factor(double experts_per_rank, bool redundant, double max_factor) {
  // Computed once per kind: the published figures are constants.
  static const double excess_without = hot_expert_excess(kWithoutEplb);
  static const double excess_with = hot_expert_excess(kWithEplb);
  const double g = std::max(1.0, experts_per_rank);
  return std::max(1.0, std::min(max_factor, 1.0 + (redundant ? excess_with : excess_without) / g));
}

std::string default_hot_expert_basis(double experts_per_rank, bool redundant) {
  const PublishedRankImbalance& p = redundant ? kWithEplb : kWithoutEplb;
  char text[400];
  std::snprintf(text, sizeof text,
                "default: one hot expert per layer at the skew of DeepSeek-R1's published per-rank routed-token counts "
                "(TensorRT-LLM examples/wide_ep/ep_load_balancer: EP %d, 8 experts per rank, %s, busiest rank "
                "+%.1f%% over the mean), at %.3g experts per rank; set serving.moe.load_imbalance to override "
                "(1: even routing)",
                p.ranks, redundant ? "EPLB with 32 redundant experts" : "no EPLB", 100 * p.imbalance_ratio,
                std::max(1.0, experts_per_rank));
  return text;
}

}  // namespace sightline
