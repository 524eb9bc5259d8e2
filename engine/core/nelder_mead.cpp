#include "core/nelder_mead.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sightline {

MinimizeResult nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> start,
                           const std::vector<double>& step, int max_evaluations, double tolerance) {
  const size_t n = start.size();
  std::vector<std::vector<double>> simplex(n + 1, start);
  for (size_t i = 0; i < n; ++i) simplex[i + 1][i] += step[i];
  std::vector<double> values(n + 1);
  int evals = 0;
  auto eval = [&](const std::vector<double>& x) {
    ++evals;
    const double v = f(x);
    return std::isfinite(v) ? v : 1e300;
  };
  for (size_t i = 0; i <= n; ++i) values[i] = eval(simplex[i]);
  std::vector<size_t> order(n + 1);
  while (evals < max_evaluations) {
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
    const size_t best = order.front(), worst = order.back(), second = order[n - 1];
    if (std::fabs(values[worst] - values[best]) <= tolerance * (std::fabs(values[best]) + 1e-30)) break;
    std::vector<double> centroid(n, 0.0);
    for (size_t i = 0; i <= n; ++i)
      if (i != worst)
        for (size_t d = 0; d < n; ++d) centroid[d] += simplex[i][d] / static_cast<double>(n);
    auto along = [&](double t) {
      std::vector<double> x(n);
      for (size_t d = 0; d < n; ++d) x[d] = centroid[d] + t * (simplex[worst][d] - centroid[d]);
      return x;
    };
    std::vector<double> reflected = along(-1.0);
    const double fr = eval(reflected);
    if (fr < values[best]) {
      std::vector<double> expanded = along(-2.0);
      const double fe = eval(expanded);
      if (fe < fr) { simplex[worst] = expanded; values[worst] = fe; }
      else { simplex[worst] = reflected; values[worst] = fr; }
      continue;
    }
    if (fr < values[second]) {
      simplex[worst] = reflected;
      values[worst] = fr;
      continue;
    }
    const bool outside = fr < values[worst];
    std::vector<double> contracted = along(outside ? -0.5 : 0.5);
    const double fc = eval(contracted);
    if (fc < (outside ? fr : values[worst])) {
      simplex[worst] = contracted;
      values[worst] = fc;
      continue;
    }
    for (size_t i = 0; i <= n; ++i) {  // shrink towards the best vertex
      if (i == best) continue;
      for (size_t d = 0; d < n; ++d) simplex[i][d] = simplex[best][d] + 0.5 * (simplex[i][d] - simplex[best][d]);
      values[i] = eval(simplex[i]);
    }
  }
  const size_t best = static_cast<size_t>(std::min_element(values.begin(), values.end()) - values.begin());
  return {simplex[best], values[best], evals};
}

}  // namespace sightline
