#pragma once
// How many experts a batch touches, and how many tokens each gets: the
// quantities a grouped MoE GEMM is priced from. Pure arithmetic on the
// routing model, no costs.
#include <cstdint>

namespace sightline {

// Where the experts live and how unevenly tokens reach them. The defaults are
// one GPU (or a tensor-parallel group) holding every expert, routed uniformly.
// Expert parallelism plugs in here: experts_per_gpu = E / ep, expert_tp the
// ranks that still split each expert's intermediate dimension.
struct MoeRouting {
  int experts_per_gpu = 0;      // experts resident on this GPU; 0: all of them
  int expert_tp = 0;            // ranks splitting one expert's intermediate; 0: the layout's tp
  // The imbalance model: on the busiest GPU each resident expert is chosen by a
  // token with probability f · top_k / E (capped at 1) instead of the uniform
  // top_k / E. f = load_imbalance (the systematic skew of hot experts after
  // placement, 1: none) times, under expert parallelism, the busiest rank's
  // sampling excess of this step's tokens (busiest_rank_sampling_factor).
  // Without expert parallelism load_imbalance is a pessimistic bound (every
  // expert priced as a hot one) and no sampling excess applies.
  double load_imbalance = 1.0;
  // false: the busiest EP rank gets exactly its share of this step's tokens
  // (a balanced reference, e.g. for showing what the sampling excess costs).
  bool rank_sampling_excess = true;
  // Wide expert parallelism: the experts on this GPU serve the tokens of
  // attention_dp data-parallel ranks, which step together (the dispatch is a
  // barrier), each assumed to carry this step's token count...
  int attention_dp = 1;
  // ...unless the caller knows the whole group's tokens this step (the
  // serving simulator steps a group's ranks in lockstep): then the experts
  // serve exactly these (0: attention_dp x this rank's tokens).
  int64_t group_tokens = 0;
  // Expert copies across the expert-parallel group: num_experts plus EPLB's
  // redundant experts (0: num_experts). A token's assignment to an expert goes
  // to one of its copies, so each slot is chosen with probability f·k/slots.
  int expert_slots = 0;
};

struct MoeLoad {
  double experts_hit = 0;        // expected distinct resident experts with at least one token
  double assignments = 0;        // expected (token, expert) pairs computed on this GPU
  double tokens_per_expert = 0;  // assignments / experts_hit (>= 1 when any token is routed)
  // The count behind these expectations: each resident expert gets
  // Binomial(routed_tokens, expert_p) tokens.
  int64_t routed_tokens = 0;
  double expert_p = 0;
};

// Expected load of one MoE layer on one GPU for `tokens` tokens (per
// attention data-parallel rank) routed top-k among `num_experts`. Each token picks its top_k experts without repetition,
// so a given expert is missed by one token with probability 1 − p (p = f·k/E)
// and by all of them with (1 − p)^tokens: experts_hit = R·(1 − (1 − p)^tokens),
// exact in expectation for independent tokens.
MoeLoad expected_moe_load(int num_experts, int top_k, int64_t tokens, const MoeRouting& routing);

// The busiest of `ranks` expert-parallel GPUs over the mean when a step routes
// `assignments` (token, expert) pairs to them uniformly at random: per-rank
// counts are binomial (mean mu = assignments / ranks, variance
// mu·(1 − 1/ranks)), and the expected largest of `ranks` of them is
// mu + z·sigma, z the expected maximum of `ranks` standard normals (Blom's
// plotting position, Phi^-1((R − 0.375) / (R + 0.25))). Law of large numbers:
// the excess shrinks as 1/sqrt(assignments per rank). At least 1, at most
// `ranks` (one rank cannot get more than everything); 1 for one rank.
double busiest_rank_sampling_factor(double assignments, int ranks);

// The factor f of MoeRouting for `tokens` tokens per rank (group_tokens or
// attention_dp applied as in expected_moe_load): load_imbalance times the
// sampling excess of the busiest of the E_slots / experts_per_gpu ranks.
double busiest_rank_factor(int num_experts, int top_k, int64_t tokens, const MoeRouting& routing);

// E[ceil(X / tile_rows) | X >= 1] for X ~ Binomial(trials, p): the row
// tiles a grouped GEMM runs for one hit expert when each expert's rows pad to
// their own tiles and the counts vary as routing draws them. P(X >= 1) is
// exact; P(X > j·tile_rows) for j >= 1 is the normal approximation with a
// continuity correction (those terms matter only where the mean is near or
// past a tile, where the approximation holds). At least ceil(1 / tile_rows) = 1.
double expected_row_tiles_per_hit_expert(int64_t trials, double p, double tile_rows);

// x^n by repeated squaring: exact-order multiplications only, so native and
// wasm agree bit for bit (libm pow need not).
double ipow(double x, int64_t n);

}  // namespace sightline
