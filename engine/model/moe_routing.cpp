#include "model/moe_routing.hpp"

#include <algorithm>
#include <cmath>

#include "core/det_math.hpp"

namespace sightline {

double ipow(double x, int64_t n) {
  double result = 1.0;
  while (n > 0) {
    if (n & 1) result *= x;
    x *= x;
    n >>= 1;
  }
  return result;
}

namespace {

// Phi^-1(p) for p in (0.5, 1): P. J. Acklam's rational approximation
// (relative error below 1.2e-9), with the project's deterministic log so that
// native and wasm agree.
double routing_normal_quantile_upper(double p) {
  constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                          1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                          6.680131188771972e+01,  -1.328068155288572e+01};
  constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                          -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                          3.754408661907416e+00};
  constexpr double kHigh = 1.0 - 0.02425;
  if (p <= 0.5) return 0.0;
  if (p < kHigh) {
    const double q = p - 0.5, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  }
  const double q = std::sqrt(-2.0 * det_log(1.0 - p));
  return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
         ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
}

int64_t routed_tokens(int64_t tokens, const MoeRouting& routing) {
  if (routing.group_tokens > 0) return routing.group_tokens;
  if (routing.attention_dp > 1) return tokens * routing.attention_dp;
  return tokens;
}

}  // namespace

double busiest_rank_sampling_factor(double assignments, int ranks) {
  if (ranks <= 1 || assignments <= 0) return 1.0;
  const double R = ranks;
  const double mu = assignments / R;
  const double z = routing_normal_quantile_upper((R - 0.375) / (R + 0.25));
  return std::min(R, 1.0 + z * std::sqrt((1.0 - 1.0 / R) / mu));
}

double busiest_rank_factor(int num_experts, int top_k, int64_t tokens, const MoeRouting& routing) {
  const double hot = std::max(routing.load_imbalance, 1.0);
  if (!routing.rank_sampling_excess || routing.experts_per_gpu <= 0 || num_experts <= 0 || top_k <= 0 || tokens <= 0)
    return hot;
  const int slots = routing.expert_slots > num_experts ? routing.expert_slots : num_experts;
  const int ranks = slots / std::min(routing.experts_per_gpu, slots);
  const double assignments = static_cast<double>(routed_tokens(tokens, routing)) * top_k;
  return hot * busiest_rank_sampling_factor(assignments, ranks);
}

MoeLoad expected_moe_load(int num_experts, int top_k, int64_t tokens, const MoeRouting& routing) {
  MoeLoad l;
  if (num_experts <= 0 || top_k <= 0 || tokens <= 0) return l;
  const double E = routing.expert_slots > num_experts ? routing.expert_slots : num_experts;
  const double resident =
      routing.experts_per_gpu > 0 ? std::min<double>(routing.experts_per_gpu, E) : E;
  const double p = std::min(1.0, busiest_rank_factor(num_experts, top_k, tokens, routing) * top_k / E);
  tokens = routed_tokens(tokens, routing);
  l.experts_hit = resident * (1.0 - ipow(1.0 - p, tokens));
  // Each resident expert receives tokens·p assignments in expectation.
  l.assignments = static_cast<double>(tokens) * p * resident;
  l.tokens_per_expert = l.experts_hit > 0 ? l.assignments / l.experts_hit : 0.0;
  l.routed_tokens = tokens;
  l.expert_p = p;
  return l;
}

namespace {

// P(Z > z) for a standard normal Z: Abramowitz & Stegun 7.1.26 for erfc
// (absolute error under 1.5e-7), with det_exp so that native and wasm agree.
double normal_upper_tail(double z) {
  const double x = std::fabs(z) / std::sqrt(2.0);
  const double t = 1.0 / (1.0 + 0.3275911 * x);
  const double poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const double upper = 0.5 * poly * det_exp(-x * x);
  return z >= 0 ? upper : 1.0 - upper;
}

}  // namespace

double expected_row_tiles_per_hit_expert(int64_t trials, double p, double tile_rows) {
  if (trials <= 0 || !(p > 0) || !(tile_rows >= 1)) return 0;
  const double n = static_cast<double>(trials);
  const double hit = p >= 1 ? 1.0 : 1.0 - ipow(1.0 - p, trials);
  if (!(hit > 0)) return 0;
  const double mean = n * p;
  const double sd = std::sqrt(n * p * (1.0 - p));
  if (!(sd > 1e-9)) return std::ceil(mean / tile_rows);  // every expert gets every token
  // E[ceil(X / t)] = sum over j >= 0 of P(X > j·t); j = 0 is the hit probability.
  // Edges more than 8 sd below the mean are passed for certain (each adds 1,
  // to within 1e-15); the loop starts at the first edge that is not.
  const double certain = std::max(1.0, std::ceil((mean - 8.0 * sd - 0.5) / tile_rows)) - 1.0;
  double tiles = hit + certain;
  for (double edge = (certain + 1.0) * tile_rows; edge < n; edge += tile_rows) {
    const double z = (edge + 0.5 - mean) / sd;
    if (z > 8.0) break;  // the rest add under 1e-15 each
    tiles += normal_upper_tail(z);
  }
  return tiles / hit;
}

}  // namespace sightline
