// best_gemm_tile prunes its scan (a tile that cannot beat the best found is
// not blended) and may start from a remembered winner: the choice must be the
// one a plain scan of every tile and split-K depth makes, bit for bit, since a
// calibration fit and every serving step price GEMMs through it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "model/operators.hpp"
#include "perf/calibrated_cost.hpp"
#include "perf/calibration.hpp"

using namespace sightline;

namespace gemm_tile_choice_test {

// Every (tile, split) the pruned scan may consider, blended with
// blend_times; the least time wins, ties going to the first in the scan.
GemmChoice plain_scan(const Operator& op, const GemmParams& p, double flops_per_s, double bytes_per_s, int sm_count,
                      double floor_s) {
  GemmChoice best;
  best.time_s = std::numeric_limits<double>::infinity();
  const double sms = std::max(sm_count, 1);
  for (const GemmTile& tile : p.tiles) {
    const double tiles = op.groups * std::ceil(static_cast<double>(op.m) / tile.m) *
                         std::ceil(static_cast<double>(op.n) / tile.n);
    for (int split = 1; split <= kMaxSplitK; split *= 2) {
      if (split > 1 && (op.k / split < kMinSplitKDepth || tiles * split / 2 >= sms)) break;
      const double waves = std::ceil(tiles * split / sms);
      const double tile_flops = 2.0 * tile.m * tile.n * (static_cast<double>(op.k) / split);
      const double compute_s = waves * tile_flops / (flops_per_s * tile.efficiency / sms);
      const double partial_bytes =
          split > 1 ? 2.0 * 4.0 * split * op.groups * static_cast<double>(op.m) * op.n : 0.0;
      const double memory_s = (op.bytes - op.serial_bytes + partial_bytes) / bytes_per_s;
      const double t = blend_times(std::max(compute_s, floor_s), memory_s, p.blend_p);
      if (t < best.time_s) best = {tile.m, tile.n, split, compute_s, memory_s, t};
    }
  }
  return best;
}

// A small deterministic generator (no dependence on the library's RNGs).
struct Draw {
  uint64_t s;
  double unit() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(s >> 11) * (1.0 / 9007199254740992.0);
  }
  double log_uniform(double lo, double hi) { return lo * std::pow(hi / lo, unit()); }
  int64_t size(double lo, double hi) { return static_cast<int64_t>(log_uniform(lo, hi)); }
};

}  // namespace gemm_tile_choice_test

TEST_CASE("tile choice: the pruned scan chooses what a plain scan of every tile and depth chooses") {
  using namespace gemm_tile_choice_test;
  Draw d{12345};
  const int sm_counts[] = {1, 46, 84, 108, 132, 148};
  int checked = 0, split_chosen = 0, floored = 0;
  for (int i = 0; i < 20000; ++i) {
    GemmParams p;
    p.blend_p = 1.05 + d.unit() * 6.0;
    double e = 1.0;
    for (size_t t = 1; t < p.tiles.size(); ++t) p.tiles[t].efficiency = e *= 0.6 + 0.4 * d.unit();
    const int64_t m = d.size(1, 70000), n = d.size(16, 60000), k = d.size(16, 60000);
    Operator op = make_gemm_operator("g", 1, m, n, k, 2, 2, Dtype::BF16);
    if (d.unit() < 0.2) op.groups = 1 + std::floor(d.unit() * 64);
    if (d.unit() < 0.2) op.serial_bytes = op.bytes * 0.3 * d.unit();
    const double flops_per_s = d.log_uniform(1e13, 5e15), bytes_per_s = d.log_uniform(2e11, 8e12);
    const int sms = sm_counts[i % 6];
    const double floor_s = d.unit() < 0.2 ? op.flops / d.log_uniform(1e12, 1e15) : 0.0;
    const GemmChoice want = plain_scan(op, p, flops_per_s, bytes_per_s, sms, floor_s);
    // Twice: the second call may start from the first one's winner.
    for (int again = 0; again < 2; ++again) {
      const GemmChoice got = best_gemm_tile(op, p, flops_per_s, bytes_per_s, sms, floor_s);
      CAPTURE(i);
      CAPTURE(again);
      REQUIRE(got.tile_m == want.tile_m);
      REQUIRE(got.tile_n == want.tile_n);
      REQUIRE(got.split_k == want.split_k);
      REQUIRE(got.compute_s == want.compute_s);
      REQUIRE(got.memory_s == want.memory_s);
      REQUIRE(got.time_s == want.time_s);
    }
    ++checked;
    split_chosen += want.split_k > 1;
    floored += floor_s > want.compute_s;
  }
  CHECK(checked == 20000);
  // The draws reach split-K and the dequantization floor, not only plain tiles.
  CHECK(split_chosen > 500);
  CHECK(floored > 100);
}
