#include "search/pareto.hpp"

#include <algorithm>
#include <cmath>

namespace sightline::search {

std::vector<size_t> pareto_front(const std::vector<ParetoPoint>& points) {
  // Sorted by x, then y, then position, a point is unbeaten exactly when its
  // y is below every y before it (an earlier point with y no greater is no
  // worse on both, and better on one or an earlier exact tie). O(n log n):
  // a training search ranks thousands of configurations.
  std::vector<size_t> order, on_front;
  for (size_t i = 0; i < points.size(); ++i) {
    // A NaN figure compares false both ways: such a point beats none and none beats it.
    if (std::isnan(points[i].x) || std::isnan(points[i].y)) on_front.push_back(i);
    else order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (points[a].x != points[b].x) return points[a].x < points[b].x;
    if (points[a].y != points[b].y) return points[a].y < points[b].y;
    return a < b;
  });
  double least_y = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const double y = points[order[k]].y;
    if (k == 0 || y < least_y) {
      on_front.push_back(order[k]);
      least_y = y;
    }
  }
  std::sort(on_front.begin(), on_front.end());
  std::vector<size_t> ids;
  for (size_t i : on_front) ids.push_back(points[i].id);
  return ids;
}

}  // namespace sightline::search
