// The 80% intervals report-e2e sets per kind of run from the kind's own
// end-to-end errors, and their leave-one-out coverage (issue 38, point 7).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "api/error_interval.hpp"

using sightline::api::error_interval;
using sightline::api::ErrorInterval;

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
