// Wide expert parallelism against hand arithmetic: the routed experts'
// placement decides the expert load per GPU and the weights it holds.
#include <doctest/doctest.h>

#include "mem/inference_memory.hpp"
#include "model/architecture.hpp"
#include "model/moe_routing.hpp"
#include "model/operators.hpp"
#include "model/param_count.hpp"

using namespace sightline;

TEST_CASE("wide EP: a GPU's experts serve the tokens of every attention data-parallel rank") {
  // 8 ranks of 32 tokens route into 64 experts; this GPU holds 8 of them.
  MoeRouting one_rank;
  one_rank.experts_per_gpu = 8;
  MoeRouting dp8 = one_rank;
  dp8.attention_dp = 8;
  const MoeLoad a = expected_moe_load(64, 4, 32, dp8), b = expected_moe_load(64, 4, 8 * 32, one_rank);
  CHECK(a.assignments == doctest::Approx(b.assignments));
  CHECK(a.experts_hit == doctest::Approx(b.experts_hit));
  // 8·32 tokens × 4 picks spread over 64 experts, 8 of them here: 128 rows
  // on the mean GPU, times the busiest of the 8 GPUs' sampling excess.
  CHECK(a.assignments == doctest::Approx(8.0 * 32 * 4 / 64 * 8 * busiest_rank_sampling_factor(8.0 * 32 * 4, 8)));
}

TEST_CASE("wide EP: redundant experts spread the same assignments over more slots") {
  MoeRouting plain;
  plain.experts_per_gpu = 4;  // 256 experts over 64 GPUs
  MoeRouting eplb;
  eplb.experts_per_gpu = 4;  // 256 + 32 copies over 72 GPUs
  eplb.expert_slots = 288;
  const double t = 72 * 16;
  CHECK(expected_moe_load(256, 8, 72 * 16, eplb).assignments ==
        doctest::Approx(t * 8 / 288 * 4 * busiest_rank_sampling_factor(t * 8, 72)));
  CHECK(expected_moe_load(256, 8, 72 * 16, eplb).assignments < expected_moe_load(256, 8, 72 * 16, plain).assignments);
}

TEST_CASE("wide EP: weights per GPU are the replicated non-expert weights plus their share of the expert copies") {
  const ModelArch m = read_model(json("deepseek-v3"), "/model");
  const ParamCounts c = count_params(m);
  double routed = 0;
  for (const GroupParams& g : c.groups) routed += g.group.count * static_cast<double>(g.layer.routed_experts);
  REQUIRE(routed > 0.9 * static_cast<double>(c.total));  // DeepSeek-V3 is mostly routed experts
  Precision p;  // bf16: two bytes a weight
  const double all_tp1 = weight_bytes_per_gpu(m, p, ParallelLayout{1, 1});
  ParallelLayout ep72{1, 1};
  ep72.ep = 72;
  ep72.expert_slots = 256;
  CHECK(weight_bytes_per_gpu(m, p, ep72) == doctest::Approx(all_tp1 - routed * 2 + routed * 2 / 72).epsilon(1e-9));
  ParallelLayout eplb = ep72;
  eplb.expert_slots = 288;
  CHECK(weight_bytes_per_gpu(m, p, eplb) - weight_bytes_per_gpu(m, p, ep72) ==
        doctest::Approx(routed * 2 * (288.0 / 256 - 1) / 72).epsilon(1e-9));
  // EP inside TP (ep divides tp) is the tensor-parallel split it always was.
  ParallelLayout tp8{8, 1}, tp8ep8{8, 1};
  tp8ep8.ep = 8;
  CHECK(weight_bytes_per_gpu(m, p, tp8ep8) == doctest::Approx(weight_bytes_per_gpu(m, p, tp8)).epsilon(1e-12));
}
