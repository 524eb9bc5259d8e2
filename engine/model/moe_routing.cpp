#include "model/moe_routing.hpp"

#include <algorithm>

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

MoeLoad expected_moe_load(int num_experts, int top_k, int64_t tokens, const MoeRouting& routing) {
  MoeLoad l;
  if (num_experts <= 0 || top_k <= 0 || tokens <= 0) return l;
  const double E = routing.expert_slots > num_experts ? routing.expert_slots : num_experts;
  const double resident =
      routing.experts_per_gpu > 0 ? std::min<double>(routing.experts_per_gpu, E) : E;
  const double p = std::min(1.0, std::max(routing.load_imbalance, 1.0) * top_k / E);
  if (routing.group_tokens > 0) tokens = routing.group_tokens;
  else if (routing.attention_dp > 1) tokens *= routing.attention_dp;
  l.experts_hit = resident * (1.0 - ipow(1.0 - p, tokens));
  // Each resident expert receives tokens·p assignments in expectation.
  l.assignments = static_cast<double>(tokens) * p * resident;
  l.tokens_per_expert = l.experts_hit > 0 ? l.assignments / l.experts_hit : 0.0;
  return l;
}

}  // namespace sightline
