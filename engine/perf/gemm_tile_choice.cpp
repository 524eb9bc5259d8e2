// The tile configuration a GEMM is priced with (calibrated_cost.hpp:
// best_gemm_tile, blend_times): the fastest of the calibration's tiles, each
// alone or split along K, by the very time the GEMM is priced at (for a
// grouped GEMM whose rows routing draws, the fastest at the mean, then
// priced with the draw).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/det_math.hpp"
#include "model/moe_routing.hpp"
#include "perf/calibrated_cost.hpp"

namespace sightline {

double blend_times(double compute_s, double memory_s, double blend_p) {
  return det_pow(det_pow(compute_s, blend_p) + det_pow(memory_s, blend_p), 1.0 / blend_p);
}

namespace {

constexpr int kSplitDepths = 5;  // split-K 1, 2, 4, 8, 16
static_assert((1 << (kSplitDepths - 1)) == kMaxSplitK, "one slot per split-K depth");

// The tile and split-K depth that last won for a GEMM shape, per thread: a
// calibration fit prices each measured shape thousands of times with slowly
// moving parameters, and the winner rarely changes. Direct-mapped; a slot
// holds the last shape hashed to it.
struct RememberedWinner {
  int64_t m = -1, n = 0, k = 0;
  double groups = 0;
  int tile = -1, depth = 0;
};
constexpr size_t kRememberedWinnerSlots = 8192;  // a power of two: a fit prices up to 1,500 shapes

RememberedWinner& remembered_winner_slot(const Operator& op) {
  thread_local RememberedWinner slots[kRememberedWinnerSlots];
  uint64_t h = static_cast<uint64_t>(op.m) * 0x9E3779B97F4A7C15ULL;
  h ^= static_cast<uint64_t>(op.n) + 0x7F4A7C159E3779B9ULL + (h << 6) + (h >> 2);
  h ^= static_cast<uint64_t>(op.k) + 0x94D049BB133111EBULL + (h << 6) + (h >> 2);
  return slots[h & (kRememberedWinnerSlots - 1)];
}

// What the blend needs of its exponent, kept for the last exponent seen: a
// fit prices thousands of GEMMs per exponent, and a run uses one.
struct BlendConstants {
  double p = 0;
  // Below this share of the memory time, compute^p is under half an ulp of
  // memory^p (2^-56 of it, with room for pow's rounding), so the sum is
  // memory^p exactly and the blend is the depth's memory-only value.
  double negligible_compute_share = 0;
  // The lower bound's chord slope 2^(1/p) - 1 and integer power q = ceil(p).
  double chord = 0;
  int whole_power = 1;
};

const BlendConstants& blend_constants(double blend_p) {
  thread_local BlendConstants c;
  if (c.p != blend_p) {
    c.negligible_compute_share = det_pow(2.0, -56.0 / blend_p);
    c.chord = det_pow(2.0, 1.0 / blend_p) - 1.0;
    c.whole_power = static_cast<int>(std::ceil(blend_p));
    c.p = blend_p;
  }
  return c;
}

// One candidate's times.
struct TileTimes {
  double compute_s = 0, compute_eff_s = 0, memory_s = 0;
};

// The arithmetic of one GEMM's candidates, the same wherever one is priced,
// with memory^p and the memory-only blend computed once per split depth.
class TileScan {
 public:
  // rows_at_mean: every group at m rows, whatever draw the operator carries.
  TileScan(const Operator& op, const GemmParams& p, double flops_per_s, double bytes_per_s, int sm_count,
           double compute_floor_s, bool rows_at_mean = false)
      : op_(op), p_(p), k_(blend_constants(p.blend_p)), rows_at_mean_(rows_at_mean), flops_per_s_(flops_per_s),
        bytes_per_s_(bytes_per_s),
        sms_(std::max(sm_count, 1)), floor_s_(compute_floor_s) {}

  double output_tiles(const GemmTile& tile) const {
    // A grouped GEMM's problems pad to tiles separately and share the waves;
    // where routing draws each problem's rows, each draw pads on its own
    // (more tiles than the mean padded once, when the mean is near a tile).
    const double row_tiles = op_.group_row_trials > 0 && !rows_at_mean_
                                 ? expected_row_tiles_per_hit_expert(op_.group_row_trials, op_.group_row_p, tile.m)
                                 : std::ceil(static_cast<double>(op_.m) / tile.m);
    return op_.groups * row_tiles * std::ceil(static_cast<double>(op_.n) / tile.n);
  }
  // Eligibility only falls as the split grows.
  bool eligible(double tiles, int split) const {
    return split == 1 || (op_.k / split >= kMinSplitKDepth && tiles * split / 2 < sms_);
  }
  TileTimes times(const GemmTile& tile, double tiles, int split) const {
    TileTimes c;
    // Every wave runs one tile per SM: the padded tile's FLOPs at the tile's rate.
    const double waves = std::ceil(tiles * split / sms_);
    const double tile_flops = 2.0 * tile.m * tile.n * (static_cast<double>(op_.k) / split);
    c.compute_s = waves * tile_flops / (flops_per_s_ * tile.efficiency / sms_);
    c.compute_eff_s = std::max(c.compute_s, floor_s_);
    // Split-K writes fp32 partial tiles and reads them back to reduce.
    const double partial_bytes =
        split > 1 ? 2.0 * 4.0 * split * op_.groups * static_cast<double>(op_.m) * op_.n : 0.0;
    c.memory_s = (op_.bytes - op_.serial_bytes + partial_bytes) / bytes_per_s_;
    return c;
  }
  // The same arithmetic as blend_times(compute_eff_s, memory_s, p.blend_p).
  double blend(int depth, const TileTimes& c) {
    if (!memory_power_set_[depth]) {
      memory_power_[depth] = det_pow(c.memory_s, p_.blend_p);
      memory_power_set_[depth] = true;
    }
    if (c.compute_eff_s < c.memory_s * k_.negligible_compute_share) {
      if (!memory_only_set_[depth]) {
        memory_only_s_[depth] = det_pow(memory_power_[depth], 1.0 / p_.blend_p);
        memory_only_set_[depth] = true;
      }
      return memory_only_s_[depth];
    }
    return det_pow(det_pow(c.compute_eff_s, p_.blend_p) + memory_power_[depth], 1.0 / p_.blend_p);
  }
  // A lower bound on the blend without a pow call: with x = min/max of the
  // two times <= 1, blend = max * (1 + x^p)^(1/p), and (1 + y)^(1/p) is
  // concave in y, so it lies above its chord from y = 0 to 1: blend >= max *
  // (1 + x^p (2^(1/p) - 1)) >= max * (1 + x^q (2^(1/p) - 1)) for the integer
  // q = ceil(p) (x^q <= x^p).
  double blend_lower_bound(const TileTimes& c) const {
    const double hi = std::max(c.compute_eff_s, c.memory_s), lo = std::min(c.compute_eff_s, c.memory_s);
    if (!(hi > 0)) return hi;
    const double x = lo / hi;
    double xq = 1.0;
    for (int i = 0; i < k_.whole_power; ++i) xq *= x;
    return hi * (1.0 + xq * k_.chord);
  }

 private:
  const Operator& op_;
  const GemmParams& p_;
  const BlendConstants& k_;
  bool rows_at_mean_;
  double flops_per_s_, bytes_per_s_, sms_, floor_s_;
  double memory_power_[kSplitDepths] = {}, memory_only_s_[kSplitDepths] = {};
  bool memory_power_set_[kSplitDepths] = {}, memory_only_set_[kSplitDepths] = {};
};

// The scan's winner, with where it sits: its index in p.tiles (-1 when no
// tile) and its split-K depth.
struct ScanWinner {
  GemmChoice choice;
  int tile = -1, depth = 0;
};

ScanWinner scan_best_tile(const Operator& op, const GemmParams& p, double flops_per_s, double bytes_per_s,
                          int sm_count, double compute_floor_s, bool rows_at_mean) {
  // The choice minimizes the very time the GEMM is priced at. Choosing by
  // max(compute, memory) and pricing the blend made slower GPUs faster: at
  // batch 1 every tile ties on memory, the widest tile won the tie until its
  // padded compute passed the memory time, and its compute then left the blend
  // (decode TPOT 22.1 / 23.0 / 20.5 ms at 165 / 120 / 82.6 TFLOP/s). The
  // minimum over tiles of times that each grow as a peak falls grows too, so
  // the price is monotone in every peak.
  //
  // Every tile at one split-K depth moves the same bytes, and the blend never
  // falls as the compute time grows at a fixed memory time. So a tile whose
  // compute is no less than the best one's at its depth cannot beat it (at
  // most tie, and ties go to the earlier tile): its blend, three pow calls and
  // most of a calibration fit's time, is skipped. So is a tile whose lower
  // bound on the blend exceeds the best blend found. The choice is the one a
  // full scan makes (tests/unit/test_gemm_tile_choice.cpp checks it against one).
  struct DepthBest {
    bool set = false;
    double compute_eff_s = 0;  // max(compute, floor): what the blend sees
    GemmChoice choice;
    int order = 0;  // position in the tile-major scan: ties go to the earlier one
    int tile = 0;   // index in p.tiles
  };
  DepthBest depth_best[kSplitDepths];
  TileScan scan(op, p, flops_per_s, bytes_per_s, sm_count, compute_floor_s, rows_at_mean);

  double best_so_far_s = std::numeric_limits<double>::infinity();
  // The shape's last winner, priced first, bounds the scan from the start:
  // any candidate's blend is an upper bound on the minimum, so the tiles it
  // rules out could not have won or tied, whatever the parameters now are.
  RememberedWinner& remembered = remembered_winner_slot(op);
  int seed_tile = -1, seed_depth = -1;
  double seed_s = 0;
  if (remembered.m == op.m && remembered.n == op.n && remembered.k == op.k && remembered.groups == op.groups &&
      remembered.tile >= 0 && static_cast<size_t>(remembered.tile) < p.tiles.size()) {
    const GemmTile& tile = p.tiles[static_cast<size_t>(remembered.tile)];
    const double tiles = scan.output_tiles(tile);
    const int split = 1 << remembered.depth;
    if (scan.eligible(tiles, split)) {  // then the scan reaches it too
      seed_tile = remembered.tile;
      seed_depth = remembered.depth;
      seed_s = scan.blend(seed_depth, scan.times(tile, tiles, split));
      best_so_far_s = seed_s;
    }
  }

  int order = 0;
  for (size_t ti = 0; ti < p.tiles.size(); ++ti) {
    const GemmTile& tile = p.tiles[ti];
    const double tiles = scan.output_tiles(tile);
    int depth = 0;
    for (int split = 1; split <= kMaxSplitK; split *= 2, ++depth, ++order) {
      if (!scan.eligible(tiles, split)) break;
      const TileTimes c = scan.times(tile, tiles, split);
      DepthBest& d = depth_best[depth];
      if (d.set && !(c.compute_eff_s < d.compute_eff_s)) continue;
      // The blend is never below its bound (to within pow's rounding, hence
      // the margin): a tile whose bound exceeds the best blend cannot win.
      if (scan.blend_lower_bound(c) > best_so_far_s * (1.0 + 1e-12)) continue;
      const double t = static_cast<int>(ti) == seed_tile && depth == seed_depth ? seed_s : scan.blend(depth, c);
      if (!d.set || t < d.choice.time_s)
        d = {true, c.compute_eff_s, {tile.m, tile.n, split, c.compute_s, c.memory_s, t}, order, static_cast<int>(ti)};
      best_so_far_s = std::min(best_so_far_s, t);
    }
  }
  GemmChoice best;
  double best_time = std::numeric_limits<double>::infinity();
  int best_order = 0, best_tile = -1, best_depth = 0;
  for (int depth = 0; depth < kSplitDepths; ++depth) {
    const DepthBest& d = depth_best[depth];
    if (!d.set) continue;
    if (d.choice.time_s < best_time || (d.choice.time_s == best_time && d.order < best_order)) {
      best_time = d.choice.time_s;
      best_order = d.order;
      best = d.choice;
      best_tile = d.tile;
      best_depth = depth;
    }
  }
  remembered = {op.m, op.n, op.k, op.groups, best_tile, best_depth};
  return {best, best_tile, best_depth};
}

}  // namespace

GemmChoice best_gemm_tile(const Operator& op, const GemmParams& p, double flops_per_s, double bytes_per_s,
                          int sm_count, double compute_floor_s) {
  const bool drawn = op.group_row_trials > 0;
  const ScanWinner w = scan_best_tile(op, p, flops_per_s, bytes_per_s, sm_count, compute_floor_s, drawn);
  if (!drawn || w.tile < 0) return w.choice;
  // Rows drawn by routing: the kernel's tile and split are chosen for the
  // batch's size, every expert at the mean (the stacks pick a MoE kernel
  // config from the token count, before the draw is known), and that choice
  // then runs each expert's draw padded to its tiles.
  TileScan draw(op, p, flops_per_s, bytes_per_s, sm_count, compute_floor_s);
  const GemmTile& tile = p.tiles[static_cast<size_t>(w.tile)];
  const TileTimes c = draw.times(tile, draw.output_tiles(tile), w.choice.split_k);
  return {w.choice.tile_m, w.choice.tile_n, w.choice.split_k, c.compute_s, c.memory_s, draw.blend(w.depth, c)};
}

}  // namespace sightline
