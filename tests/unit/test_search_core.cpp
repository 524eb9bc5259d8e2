// The parts both searches share, written once: the Pareto front
// (search/pareto.hpp) and the interval rule (run/key_metric.hpp's
// interval_span, which runs' key metrics and the searches' both use).
// Property checks against the definition, on small random point sets.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "run/key_metric.hpp"
#include "search/pareto.hpp"

using namespace sightline;
using namespace sightline::search;

namespace {

// The definition, quadratic: b beats a when no worse on both and better on
// one, or an exact tie earlier in the list.
std::vector<size_t> front_by_definition(const std::vector<ParetoPoint>& p) {
  std::vector<size_t> out;
  for (size_t a = 0; a < p.size(); ++a) {
    bool beaten = false;
    for (size_t b = 0; b < p.size(); ++b) {
      if (b == a) continue;
      const bool no_worse = p[b].x <= p[a].x && p[b].y <= p[a].y;
      const bool better = p[b].x < p[a].x || p[b].y < p[a].y;
      if (no_worse && (better || b < a)) beaten = true;
    }
    if (!beaten) out.push_back(p[a].id);
  }
  return out;
}

// A small linear congruential generator: the figures take few values, so
// ties in one figure and exact ties in both are common.
struct Lcg {
  uint64_t s;
  int next(int n) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((s >> 33) % static_cast<uint64_t>(n));
  }
};

}  // namespace

TEST_CASE("search core: the Pareto front is the set no point beats, ties kept by the earlier point") {
  Lcg rng{12345};
  for (int trial = 0; trial < 400; ++trial) {
    const int n = rng.next(12);
    std::vector<ParetoPoint> pts;
    for (int i = 0; i < n; ++i) pts.push_back({static_cast<size_t>(100 + i), static_cast<double>(rng.next(5)), static_cast<double>(rng.next(5))});
    const std::vector<size_t> got = pareto_front(pts), want = front_by_definition(pts);
    CAPTURE(trial);
    CHECK(got == want);
  }
  // Exact ties: the first stays; a point better on one figure and equal on the other wins.
  CHECK(pareto_front({{7, 1, 1}, {8, 1, 1}}) == std::vector<size_t>{7});
  CHECK(pareto_front({{7, 2, 1}, {8, 1, 1}}) == std::vector<size_t>{8});
  CHECK(pareto_front({{7, 1, 3}, {8, 2, 2}, {9, 3, 1}, {10, 3, 3}}) == std::vector<size_t>{7, 8, 9});
}

TEST_CASE("search core: one interval rule spans the central value and both bounds, never zero width") {
  const IntervalSpan inside = interval_span(10, 8, 12);
  CHECK(inside.has_interval);
  CHECK(inside.low == 8);
  CHECK(inside.high == 12);
  // A bound run on the far side of the central value (sampling noise): the span holds all three.
  const IntervalSpan outside = interval_span(10, 11, 12);
  CHECK(outside.low == 10);
  CHECK(outside.high == 12);
  // Not moved by the bounds: no interval.
  CHECK_FALSE(interval_span(10, 10, 10).has_interval);
  // A bound run without the figure: only the present one counts.
  const double twelve = 12;
  const IntervalSpan one = interval_span(10, nullptr, &twelve);
  CHECK(one.has_interval);
  CHECK(one.low == 10);
  CHECK(one.high == 12);
  // Runs' key metrics use the same rule.
  KeyMetrics central = {KeyMetric::number("x", "x", "ms", 10)};
  attach_intervals(central, {KeyMetric::number("x", "x", "ms", 11)}, {KeyMetric::number("x", "x", "ms", 12)});
  CHECK(central[0].low == outside.low);
  CHECK(central[0].high == outside.high);
}
