#include "api/error_interval.hpp"

#include <algorithm>

#include "core/det_math.hpp"
#include "serve/stats.hpp"

namespace sightline::api {

namespace {

// The band holding the middle `level` of `logs` (sorted ascending), as logs.
void log_band(const std::vector<double>& logs, double level, double& lo, double& hi) {
  const double tail_pct = 50.0 * (1.0 - level);
  lo = serve::percentile(logs, tail_pct);
  hi = serve::percentile(logs, 100.0 - tail_pct);
}

}  // namespace

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
  out.low = det_exp(lo) - 1.0;
  out.high = det_exp(hi) - 1.0;
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
  }
  return out;
}

}  // namespace sightline::api
