#include "core/least_squares.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sightline {

namespace {

using Matrix = std::vector<std::vector<double>>;

double half_sum_squares(const std::vector<double>& r) {
  double s = 0;
  for (double v : r) s += v * v;
  return std::isfinite(s) ? 0.5 * s : std::numeric_limits<double>::infinity();
}

// Solves a·x = b for a small dense system (Gaussian elimination, partial pivoting).
// False when a is singular to working precision.
bool solve(Matrix a, std::vector<double> b, std::vector<double>* x) {
  const size_t n = b.size();
  for (size_t c = 0; c < n; ++c) {
    size_t p = c;
    for (size_t i = c + 1; i < n; ++i)
      if (std::fabs(a[i][c]) > std::fabs(a[p][c])) p = i;
    if (!(std::fabs(a[p][c]) > 0)) return false;
    std::swap(a[p], a[c]);
    std::swap(b[p], b[c]);
    for (size_t i = c + 1; i < n; ++i) {
      const double f = a[i][c] / a[c][c];
      for (size_t j = c; j < n; ++j) a[i][j] -= f * a[c][j];
      b[i] -= f * b[c];
    }
  }
  x->assign(n, 0.0);
  for (size_t c = n; c-- > 0;) {
    double s = b[c];
    for (size_t j = c + 1; j < n; ++j) s -= a[c][j] * (*x)[j];
    (*x)[c] = s / a[c][c];
  }
  return true;
}

Matrix normal_matrix(const Matrix& jacobian, size_t n) {
  Matrix a(n, std::vector<double>(n, 0.0));
  for (const auto& row : jacobian)
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j) a[i][j] += row[i] * row[j];
  return a;
}

}  // namespace

LeastSquaresResult levenberg_marquardt(const std::function<std::vector<double>(const std::vector<double>&)>& f,
                                       std::vector<double> x, const LeastSquaresOptions& options) {
  const size_t n = x.size();
  LeastSquaresResult out;
  auto eval = [&](const std::vector<double>& p) {
    ++out.evaluations;
    return f(p);
  };
  auto sigma = [&](size_t j) { return j < options.prior_sigma.size() ? options.prior_sigma[j] : 0.0; };
  auto prior_residual = [&](const std::vector<double>& p, size_t j) {
    return (p[j] - (j < options.prior_mean.size() ? options.prior_mean[j] : 0.0)) / sigma(j);
  };
  // Total cost: data plus priors.
  auto total_cost = [&](const std::vector<double>& p, const std::vector<double>& data) {
    double c = half_sum_squares(data);
    for (size_t j = 0; j < n; ++j)
      if (sigma(j) > 0) c += 0.5 * prior_residual(p, j) * prior_residual(p, j);
    return c;
  };
  std::vector<double> r = eval(x);
  double cost = total_cost(x, r);
  double lambda = 1e-3;
  Matrix jac;
  out.seen.assign(n, true);
  while (out.evaluations < options.max_evaluations && cost > options.cost_tolerance) {
    // Forward differences: one evaluation per parameter still seen.
    jac.assign(r.size(), std::vector<double>(n, 0.0));
    for (size_t j = 0; j < n; ++j) {
      if (!out.seen[j]) continue;
      std::vector<double> xj = x;
      const double h = options.difference_step[j];
      xj[j] += h;
      const std::vector<double> rj = eval(xj);
      bool moved = false;
      for (size_t i = 0; i < r.size(); ++i) {
        jac[i][j] = std::isfinite(rj[i]) ? (rj[i] - r[i]) / h : 0.0;
        moved = moved || jac[i][j] != 0;
      }
      if (!moved && out.iterations == 0) out.seen[j] = false;
    }
    ++out.iterations;
    Matrix a = normal_matrix(jac, n);
    std::vector<double> g(n, 0.0);
    for (size_t i = 0; i < r.size(); ++i)
      for (size_t j = 0; j < n; ++j) g[j] -= jac[i][j] * r[i];
    for (size_t j = 0; j < n; ++j) {
      if (!(sigma(j) > 0) || !out.seen[j]) continue;
      a[j][j] += 1 / (sigma(j) * sigma(j));
      g[j] -= prior_residual(x, j) / sigma(j);
    }
    double max_diag = 0;
    for (size_t j = 0; j < n; ++j) max_diag = std::max(max_diag, a[j][j]);
    const double floor = 1e-12 * std::max(1.0, max_diag);
    bool accepted = false, small_step = false;
    while (out.evaluations < options.max_evaluations) {
      Matrix m = a;
      // Marquardt's scaling: damp each parameter by its own curvature, so a
      // parameter the residuals barely see moves no further than its data allow.
      for (size_t j = 0; j < n; ++j) m[j][j] += lambda * std::max(a[j][j], floor);
      std::vector<double> step;
      if (!solve(m, g, &step)) {
        lambda *= 10;
        if (lambda > 1e12) break;
        continue;
      }
      std::vector<double> xn = x;
      small_step = true;
      for (size_t j = 0; j < n; ++j) {
        if (!out.seen[j]) continue;  // frozen where the data put it: at the start
        xn[j] += step[j];
        if (std::fabs(step[j]) > options.x_tolerance * options.difference_step[j]) small_step = false;
      }
      const std::vector<double> rn = eval(xn);
      const double cn = total_cost(xn, rn);
      if (cn < cost) {
        x = xn;
        r = rn;
        cost = cn;
        lambda = std::max(lambda / 10, 1e-12);
        accepted = true;
        break;
      }
      if (small_step) break;  // no decrease even for a negligible step: at the minimum
      lambda *= 10;
      if (lambda > 1e12) break;
    }
    if (small_step || !accepted) {
      out.converged = small_step || lambda > 1e12;
      break;
    }
  }
  if (cost <= options.cost_tolerance) out.converged = true;
  out.x = x;
  out.residuals = r;
  out.jacobian = jac;
  out.cost = cost;
  return out;
}

std::vector<std::vector<double>> normal_inverse(const std::vector<std::vector<double>>& jacobian, size_t n) {
  const Matrix a = normal_matrix(jacobian, n);
  double max_diag = 0;
  for (size_t j = 0; j < n; ++j) max_diag = std::max(max_diag, a[j][j]);
  // Parameters the residuals do not see are left out of the inversion.
  std::vector<size_t> seen;
  for (size_t j = 0; j < n; ++j)
    if (a[j][j] > 1e-12 * max_diag) seen.push_back(j);
  const double inf = std::numeric_limits<double>::infinity();
  Matrix out(n, std::vector<double>(n, 0.0));
  for (size_t j = 0; j < n; ++j) out[j][j] = inf;
  const size_t k = seen.size();
  Matrix sub(k, std::vector<double>(k));
  for (size_t i = 0; i < k; ++i)
    for (size_t j = 0; j < k; ++j) sub[i][j] = a[seen[i]][seen[j]];
  for (size_t c = 0; c < k; ++c) {
    std::vector<double> e(k, 0.0), col;
    e[c] = 1;
    if (!solve(sub, e, &col)) return out;  // singular: every parameter unidentified
    for (size_t i = 0; i < k; ++i) out[seen[i]][seen[c]] = col[i];
  }
  return out;
}

}  // namespace sightline
