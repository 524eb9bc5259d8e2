#pragma once
// The 80% interval a kind of run earns from its own end-to-end error on the
// development rows (sightline report-e2e), and how often such an interval,
// set without a row, covers that row (leave-one-out). This describes the
// engine's error; nothing in it moves a prediction (jobs/kind_error_band.hpp
// widens the runs' intervals with it, never their central values).
#include <vector>

namespace sightline::jobs {

// The signed error a bound of log(1 + error) stands for: exp(log) - 1.
double signed_error_of_log(double log_one_plus_error);
// The same in percent: 100 x (exp(log) - 1).
double signed_error_pct_of_log(double log_one_plus_error);

// A band of signed error that a new row of the kind should fall inside with
// probability `level`, set from n rows by order statistics (split conformal):
// the j-th lowest and j-th highest log(1 + error), j = floor((n + 1)(1 - level) / 2).
// For exchangeable rows a new one falls inside with probability
// (n + 1 - 2j) / (n + 1) >= level: this is the finite-sample correction an
// interpolated percentile lacks (the n-row 10th percentile sits inside the
// lowest gap, so on 22 rows it covers about 73%, not 80%). Where j < 1
// (n <= 8 at 80%) no order statistic reaches the level: the band is the rows'
// extremes and `reaches_level` is false.
struct OrderStatisticBand {
  int rows = 0;
  int order = 0;                     // j (1-based) on each side
  double log_low = 0, log_high = 0;  // of 1 + error
  bool reaches_level = false;
  double expected_coverage = 0;      // (n + 1 - 2j) / (n + 1)
};

// `logs`: log(1 + error) of the rows, sorted ascending; `level` in (0, 1).
OrderStatisticBand order_statistic_band(const std::vector<double>& sorted_logs, double level);

struct ErrorInterval {
  int rows = 0;
  // The band of signed error (optimism: the predicted speed over the measured
  // one, less 1) that holds the middle `level` of the rows' errors: a new
  // prediction's true speed lies between predicted / (1 + high) and
  // predicted / (1 + low). Interpolated percentiles of log(1 + error).
  double low = 0, high = 0;
  // Leave-one-out: each row judged by the band of the other rows (at least 2
  // of them); `covered` of `judged` rows fall inside theirs.
  int judged = 0, covered = 0;
  double coverage() const { return judged > 0 ? static_cast<double>(covered) / judged : 0.0; }
  // The same rows' order-statistic band (the one the runs' intervals use),
  // and its leave-one-out coverage on the same judged rows.
  OrderStatisticBand finite_sample;
  int finite_sample_covered = 0;
};

// `errors`: the rows' signed errors (each > -1); `level` in (0, 1), e.g. 0.8.
ErrorInterval error_interval(const std::vector<double>& errors, double level);

}  // namespace sightline::jobs
