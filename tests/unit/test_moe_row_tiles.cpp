// A grouped expert GEMM pads each expert's rows to its own tiles, and routing
// draws how many rows each expert gets (Binomial per resident expert, the
// routing model of model/moe_routing.hpp). The expected row tiles per hit
// expert are checked against the exact binomial sum, and the pricing against
// its two limits: one fixed count per expert, and a draw whose mean sits on a
// tile edge (where padding each draw costs most). Measured on an H200
// (presets/calibrations/measured/moe_h200_2026-11-30.csv, report-accuracy's
// grouped-GEMM table): with uniformly routed splits, torch._grouped_mm at
// 128-512 tokens per expert ran 20-25% slower than with the same tokens split
// evenly.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "model/moe_routing.hpp"
#include "model/operators.hpp"
#include "perf/cost_setup.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace {

// E[ceil(X / t) | X >= 1] for X ~ Binomial(n, p), summed over the exact pmf.
double exact_row_tiles(int64_t n, double p, int t) {
  std::vector<double> pmf(static_cast<size_t>(n) + 1);
  // log-space pmf: lgamma is fine here (a test, not the engine's arithmetic).
  for (int64_t x = 0; x <= n; ++x)
    pmf[static_cast<size_t>(x)] = std::exp(std::lgamma(n + 1.0) - std::lgamma(x + 1.0) - std::lgamma(n - x + 1.0) +
                                           x * std::log(p) + (n - x) * std::log1p(-p));
  double tiles = 0, hit = 0;
  for (int64_t x = 1; x <= n; ++x) {
    tiles += pmf[static_cast<size_t>(x)] * std::ceil(static_cast<double>(x) / t);
    hit += pmf[static_cast<size_t>(x)];
  }
  return tiles / hit;
}

Operator grouped(int experts, int64_t tokens_per_expert, bool routed) {
  MoeLoad load;
  load.experts_hit = experts;
  load.assignments = static_cast<double>(experts) * static_cast<double>(tokens_per_expert);
  load.tokens_per_expert = static_cast<double>(tokens_per_expert);
  if (routed) load = expected_moe_load(experts, 1, experts * tokens_per_expert, MoeRouting{});
  Operator op = make_gemm_operator("moe_expert_up_proj", 1, static_cast<int64_t>(std::ceil(load.tokens_per_expert)),
                                   4096, 7168, 2, 2, Dtype::BF16);
  make_grouped_expert_gemm(op, load.experts_hit, load.assignments, 2, 2, false, load.routed_tokens, load.expert_p);
  return op;
}

}  // namespace

TEST_CASE("expected row tiles per hit expert match the exact binomial sum") {
  // Means from 0.5 to 1,024 rows, tiles of 16 to 256 rows, 8 to 256 experts.
  for (int experts : {8, 32, 256})
    for (double mean : {0.5, 4.0, 30.0, 64.0, 100.0, 128.0, 300.0, 1024.0})
      for (int t : {16, 64, 128, 256}) {
        const auto n = static_cast<int64_t>(mean * experts);
        if (n < 1) continue;
        const double p = 1.0 / experts;
        const double got = expected_row_tiles_per_hit_expert(n, p, t);
        const double want = exact_row_tiles(n, p, t);
        CAPTURE(experts);
        CAPTURE(mean);
        CAPTURE(t);
        // The normal approximation's error, in tiles, on the tail terms.
        CHECK(got == doctest::Approx(want).epsilon(0.02));
        CHECK(got >= 1.0);
      }
}

TEST_CASE("expected row tiles: limits and order") {
  // Every expert gets every token: no draw, the count padded once.
  CHECK(expected_row_tiles_per_hit_expert(300, 1.0, 128) == 3.0);
  // Larger tiles never need more of them.
  for (int64_t n : {64, 4096, 65536}) {
    double last = 1e300;
    for (int t : {16, 32, 64, 128, 256}) {
      const double tiles = expected_row_tiles_per_hit_expert(n, 1.0 / 32, t);
      CHECK(tiles <= last);
      last = tiles;
    }
  }
  // A mean far below a tile: almost every hit expert runs one tile.
  CHECK(expected_row_tiles_per_hit_expert(32 * 4, 1.0 / 32, 128) == doctest::Approx(1.0).epsilon(1e-9));
  // Nothing routed: no tiles.
  CHECK(expected_row_tiles_per_hit_expert(0, 0.1, 64) == 0.0);
}

TEST_CASE("a routed grouped GEMM pays for each expert's draw where the mean sits on a tile edge") {
  const GpuSpec h200 = read_gpu(json("h200"), "/gpu");
  std::string provenance;
  const auto model = make_kernel_cost_model("target-measured", h200, &provenance);
  CostContext ctx;
  ctx.gpu = &h200;
  // At 128 and 256 rows per expert, about half the experts draw past the
  // mean's last tile edge: more row tiles than the even split, so slower.
  for (int64_t mean : {128, 256}) {
    const double even = model->cost(grouped(32, mean, false), ctx).time_s;
    const double routed = model->cost(grouped(32, mean, true), ctx).time_s;
    CAPTURE(mean);
    CHECK(routed > even * 1.05);
  }
  // At 4 rows per expert the GEMM streams its weights: the draw changes
  // nothing but the few experts it leaves idle.
  const double even = model->cost(grouped(32, 4, false), ctx).time_s;
  const double routed = model->cost(grouped(32, 4, true), ctx).time_s;
  CHECK(routed == doctest::Approx(even).epsilon(0.03));
}

TEST_CASE("the step builder's grouped expert GEMMs carry the routing draw") {
  const ModelArch m = read_model(json("deepseek-v3"), "/model");
  BatchShape b;
  b.seqs.assign(256, SeqChunk{1, 512});
  const StepOperators step = build_forward_step(m, Precision{}, ParallelLayout{}, b, StepOptions{});
  int grouped_ops = 0;
  for (const Operator& op : step.ops)
    if (op.role == OpRole::ExpertGemm) {
      ++grouped_ops;
      CHECK(op.group_row_trials == 256);
      CHECK(op.group_row_p == doctest::Approx(8.0 / 256));
    }
  CHECK(grouped_ops >= 2);
}
