#pragma once
// Nonlinear least squares by Levenberg–Marquardt with a forward-difference
// Jacobian, for fits whose every evaluation is expensive (a simulation per
// residual). Where Nelder–Mead needs hundreds of evaluations for four
// parameters, Levenberg–Marquardt needs (n + 1) per iteration and converges in a
// handful of iterations on a smooth residual. Deterministic: same start, same
// residuals ⇒ same result on every platform.
#include <functional>
#include <vector>

namespace sightline {

struct LeastSquaresResult {
  std::vector<double> x;
  std::vector<double> residuals;              // the data residuals at x (priors not included)
  std::vector<std::vector<double>> jacobian;  // of the data residuals at the last linearization point
  std::vector<bool> seen;                     // false: the data residuals do not depend on this parameter
  double cost = 0;                            // ½ Σ r²
  int evaluations = 0;                        // calls of the residual function
  int iterations = 0;
  bool converged = false;                     // a step-size or cost tolerance was met
};

struct LeastSquaresOptions {
  std::vector<double> difference_step;  // forward-difference step per parameter (absolute)
  int max_evaluations = 200;
  double x_tolerance = 1e-6;            // stop when every |Δx_i| ≤ x_tolerance · difference_step_i
  double cost_tolerance = 1e-14;        // or when the cost is this small (an exact fit)
  // Optional Gaussian priors, appended as residuals (x_j − mean_j) / sigma_j
  // (sigma 0: none). A parameter whose data residuals do not move at the first
  // linearization is frozen there: no further evaluations are spent on it.
  std::vector<double> prior_mean, prior_sigma;
};

LeastSquaresResult levenberg_marquardt(const std::function<std::vector<double>(const std::vector<double>&)>& residuals,
                                       std::vector<double> start, const LeastSquaresOptions& options);

// (JᵀJ)⁻¹ of a Jacobian (rows = residuals): the parameters' covariance per unit
// residual variance. A singular JᵀJ (a parameter the residuals do not see)
// gives +inf on that parameter's diagonal.
std::vector<std::vector<double>> normal_inverse(const std::vector<std::vector<double>>& jacobian, size_t parameters);

}  // namespace sightline
