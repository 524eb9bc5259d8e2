#pragma once
// Derivative-free minimization (Nelder–Mead simplex) used by the calibrator.
// Deterministic: same start, same objective ⇒ same result on every platform.
#include <functional>
#include <vector>

namespace sightline {

struct MinimizeResult {
  std::vector<double> x;
  double value = 0;
  int evaluations = 0;
};

MinimizeResult nelder_mead(const std::function<double(const std::vector<double>&)>& objective,
                           std::vector<double> start, const std::vector<double>& initial_step,
                           int max_evaluations = 4000, double tolerance = 1e-10);

}  // namespace sightline
