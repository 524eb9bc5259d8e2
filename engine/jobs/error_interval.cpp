#include "jobs/error_interval.hpp"

#include <algorithm>
#include <cmath>

#include "core/det_math.hpp"
#include "serve/stats.hpp"

namespace sightline::jobs {

namespace {

// The band holding the middle `level` of `logs` (sorted ascending), as logs.
void log_band(const std::vector<double>& logs, double level, double& lo, double& hi) {
  const double tail_pct = 50.0 * (1.0 - level);
  lo = serve::percentile(logs, tail_pct);
  hi = serve::percentile(logs, 100.0 - tail_pct);
}

}  // namespace

double signed_error_of_log(double log_one_plus_error) { return det_exp(log_one_plus_error) - 1.0; }
double signed_error_pct_of_log(double log_one_plus_error) { return 100.0 * signed_error_of_log(log_one_plus_error); }

OrderStatisticBand order_statistic_band(const std::vector<double>& sorted_logs, double level) {
  OrderStatisticBand b;
  const int n = static_cast<int>(sorted_logs.size());
  b.rows = n;
  if (n == 0) return b;
  // (n + 1)(1 - level) / 2 is often a whole number in exact arithmetic (n = 9
  // at 80%: 1) that the doubles put just below it: the small nudge keeps it whole.
  const int j = static_cast<int>(std::floor(static_cast<double>(n + 1) * (1.0 - level) / 2.0 + 1e-9));
  b.reaches_level = j >= 1;
  b.order = std::min(std::max(j, 1), (n + 1) / 2);
  b.log_low = sorted_logs[static_cast<size_t>(b.order - 1)];
  b.log_high = sorted_logs[static_cast<size_t>(n - b.order)];
  b.expected_coverage = static_cast<double>(n + 1 - 2 * b.order) / static_cast<double>(n + 1);
  return b;
}

ErrorInterval error_interval(const std::vector<double>& errors, double level) {
  ErrorInterval out;
  out.rows = static_cast<int>(errors.size());
  // log(1 + e): a row twice as fast and one half as fast weigh alike.
  std::vector<double> logs;
  logs.reserve(errors.size());
  for (double e : errors) logs.push_back(det_log(1.0 + e));
  std::vector<double> sorted = logs;
  std::sort(sorted.begin(), sorted.end());
  double lo = 0, hi = 0;
  if (!sorted.empty()) log_band(sorted, level, lo, hi);
  out.low = signed_error_of_log(lo);
  out.high = signed_error_of_log(hi);
  out.finite_sample = order_statistic_band(sorted, level);
  if (logs.size() < 3) return out;  // leave-one-out needs two others
  std::vector<double> others;
  for (size_t i = 0; i < logs.size(); ++i) {
    others.clear();
    for (size_t j = 0; j < logs.size(); ++j)
      if (j != i) others.push_back(logs[j]);
    std::sort(others.begin(), others.end());
    log_band(others, level, lo, hi);
    ++out.judged;
    if (logs[i] >= lo && logs[i] <= hi) ++out.covered;
    const OrderStatisticBand b = order_statistic_band(others, level);
    if (logs[i] >= b.log_low && logs[i] <= b.log_high) ++out.finite_sample_covered;
  }
  return out;
}

}  // namespace sightline::jobs
