// The 80% intervals report-e2e sets per kind of run from the kind's own
// end-to-end errors, and their leave-one-out coverage (issue 38, point 7).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "jobs/error_interval.hpp"

using sightline::jobs::error_interval;
using sightline::jobs::ErrorInterval;

TEST_CASE("error interval: the band holds the middle 80% of the rows' errors, in log speed") {
  // Errors whose log(1 + e) are 0, 0.01, ..., 0.10: the 10th and 90th
  // percentiles (interpolated) are 0.01 and 0.09.
  std::vector<double> errors;
  for (int i = 0; i <= 10; ++i) errors.push_back(std::expm1(0.01 * i));
  const ErrorInterval e = error_interval(errors, 0.8);
  CHECK(e.rows == 11);
  CHECK(std::log1p(e.low) == doctest::Approx(0.01));
  CHECK(std::log1p(e.high) == doctest::Approx(0.09));
  // Leave-one-out: without a row, the others' interpolated 10th percentile
  // sits 0.9 of the way from their lowest to their second, so the two rows
  // at each end fall outside their band: 7 of 11 covered. An empirical band
  // covers less than its level on few rows, and the report says how much.
  CHECK(e.judged == 11);
  CHECK(e.covered == 7);
  CHECK(e.coverage() == doctest::Approx(7.0 / 11.0));
}

TEST_CASE("error interval: an outlier is not covered by the others' band and widens theirs") {
  std::vector<double> errors = {0.02, 0.03, 0.01, 0.04, 0.02, 0.03, 0.80};
  const ErrorInterval with = error_interval(errors, 0.8);
  errors.pop_back();
  const ErrorInterval without = error_interval(errors, 0.8);
  CHECK(with.high > without.high);
  CHECK(with.covered < with.judged);
  // A row twice as fast as measured and one half as fast weigh alike.
  const ErrorInterval sym = error_interval({1.0, -0.5}, 0.8);
  CHECK(std::log1p(sym.low) == doctest::Approx(-std::log1p(sym.high)));
}

TEST_CASE("error interval: equal errors give a band of width zero that covers every row; too few rows judge none") {
  const ErrorInterval same = error_interval({0.1, 0.1, 0.1, 0.1}, 0.8);
  CHECK(same.low == doctest::Approx(0.1));
  CHECK(same.high == doctest::Approx(0.1));
  CHECK(same.covered == 4);
  const ErrorInterval two = error_interval({0.1, -0.1}, 0.8);
  CHECK(two.rows == 2);
  CHECK(two.judged == 0);
  CHECK(two.coverage() == 0.0);
  const ErrorInterval none = error_interval({}, 0.8);
  CHECK(none.rows == 0);
}

using sightline::jobs::order_statistic_band;
using sightline::jobs::OrderStatisticBand;

TEST_CASE("finite-sample band: order statistics reach the level on exchangeable rows, the interpolated band does not") {
  // 11 evenly spread rows: j = floor(12 x 0.1) = 1, the lowest and highest:
  // a new row falls inside with probability 10/12 (>= 80%).
  std::vector<double> logs;
  for (int i = 0; i <= 10; ++i) logs.push_back(0.01 * i);
  const OrderStatisticBand b = order_statistic_band(logs, 0.8);
  CHECK(b.order == 1);
  CHECK(b.log_low == doctest::Approx(0.0));
  CHECK(b.log_high == doctest::Approx(0.10));
  CHECK(b.reaches_level);
  CHECK(b.expected_coverage == doctest::Approx(10.0 / 12.0));
  // Leave-one-out on the same rows: 10 others give j = floor(1.1) = 1, their
  // extremes; only the two end rows fall outside: 9 of 11 (the interpolated band: 7).
  std::vector<double> errors;
  for (double l : logs) errors.push_back(std::expm1(l));
  const ErrorInterval e = error_interval(errors, 0.8);
  CHECK(e.finite_sample.order == 1);
  CHECK(e.finite_sample_covered == 9);
  CHECK(e.covered == 7);
}

TEST_CASE("finite-sample band: n = 9 at 80% is exactly j = 1; 23 rows j = 2; 41 rows j = 4; 6 rows fall short") {
  auto band_of = [](int n) {
    std::vector<double> logs;
    for (int i = 0; i < n; ++i) logs.push_back(0.01 * i);
    return order_statistic_band(logs, 0.8);
  };
  CHECK(band_of(9).order == 1);  // (9 + 1) x 0.1 is 1 exactly, not 0.999...
  CHECK(band_of(9).reaches_level);
  CHECK(band_of(23).order == 2);
  CHECK(band_of(23).log_low == doctest::Approx(0.01));
  CHECK(band_of(23).log_high == doctest::Approx(0.21));
  CHECK(band_of(23).expected_coverage == doctest::Approx(20.0 / 24.0));
  CHECK(band_of(41).order == 4);
  CHECK(band_of(41).expected_coverage == doctest::Approx(34.0 / 42.0));
  const OrderStatisticBand six = band_of(6);
  CHECK_FALSE(six.reaches_level);  // floor(0.7) = 0: no order statistic reaches 80%
  CHECK(six.order == 1);           // the extremes
  CHECK(six.log_high == doctest::Approx(0.05));
  CHECK(six.expected_coverage == doctest::Approx(5.0 / 7.0));
  CHECK(order_statistic_band({}, 0.8).rows == 0);
}

TEST_CASE("signed error of a log bound: exp(log) - 1, and 100 times that in percent") {
  CHECK(sightline::jobs::signed_error_of_log(0.0) == 0.0);
  CHECK(sightline::jobs::signed_error_of_log(std::log(1.25)) == doctest::Approx(0.25));
  CHECK(sightline::jobs::signed_error_pct_of_log(std::log(0.8)) == doctest::Approx(-20.0));
}
