#pragma once
// The one Pareto front of the searches (deployment and training): two
// figures, both lower-is-better (a search negates a higher-is-better one).
#include <cstddef>
#include <vector>

namespace sightline::search {

struct ParetoPoint {
  size_t id = 0;  // the caller's index (a plan candidate)
  double x = 0, y = 0;
};

// The ids of the points that no other point beats: b beats a when it is no
// worse on both figures and better on one; of two exact ties the one earlier
// in `points` stays. Returned in the order of `points`.
std::vector<size_t> pareto_front(const std::vector<ParetoPoint>& points);

}  // namespace sightline::search
