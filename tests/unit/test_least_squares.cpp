// Levenberg–Marquardt recovers known parameters of a nonlinear model, leaves a
// parameter the residuals do not see at its start (without spending
// evaluations on it after the first linearization), and its normal inverse
// reports such a parameter as undetermined (+inf).
#include <doctest/doctest.h>

#include <cmath>

#include "core/least_squares.hpp"

using namespace sightline;

namespace {

// y = a · exp(-b · t) + c, sampled without noise; the 4th parameter is unused.
std::vector<double> decay_residuals(const std::vector<double>& p) {
  std::vector<double> r;
  for (int i = 0; i < 12; ++i) {
    const double t = 0.25 * i;
    const double truth = 2.0 * std::exp(-0.7 * t) + 0.3;
    r.push_back(p[0] * std::exp(-p[1] * t) + p[2] - truth);
  }
  return r;
}

}  // namespace

TEST_CASE("least squares: recovers a decay's parameters and freezes an unseen one") {
  LeastSquaresOptions o;
  o.difference_step = {1e-6, 1e-6, 1e-6, 1e-6};
  o.x_tolerance = 1e-3;
  o.prior_mean = {0, 0, 0, 0};
  o.prior_sigma = {0, 0, 0, 10};
  const LeastSquaresResult r = levenberg_marquardt(decay_residuals, {1.0, 0.2, 0.0, 5.0}, o);
  CHECK(r.converged);
  CHECK(r.x[0] == doctest::Approx(2.0).epsilon(1e-6));
  CHECK(r.x[1] == doctest::Approx(0.7).epsilon(1e-6));
  CHECK(r.x[2] == doctest::Approx(0.3).epsilon(1e-6));
  CHECK(r.x[3] == 5.0);  // not seen: stays where it started, its prior does not pull a frozen parameter
  CHECK_FALSE(r.seen[3]);
  CHECK(r.seen[0]);
  CHECK(r.evaluations < 100);
  const auto cov = normal_inverse(r.jacobian, 4);
  CHECK(std::isinf(cov[3][3]));
  CHECK(std::isfinite(cov[0][0]));
  CHECK(cov[0][0] > 0);
}

TEST_CASE("least squares: a prior holds a parameter the data only see in a sum") {
  // Residual depends on p0 + p1 only; a prior on p1 (mean 0) resolves the split.
  auto f = [](const std::vector<double>& p) { return std::vector<double>{p[0] + p[1] - 3.0}; };
  LeastSquaresOptions o;
  o.difference_step = {1e-6, 1e-6};
  o.x_tolerance = 1e-4;
  o.prior_mean = {0, 0};
  o.prior_sigma = {0, 0.01};
  const LeastSquaresResult r = levenberg_marquardt(f, {0.0, 0.0}, o);
  CHECK(r.x[0] + r.x[1] == doctest::Approx(3.0).epsilon(1e-3));
  CHECK(std::fabs(r.x[1]) < 0.01);
}
