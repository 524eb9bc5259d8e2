#pragma once
// The 80% interval a kind of run earns from its own end-to-end error on the
// development rows (sightline report-e2e), and how often such an interval,
// set without a row, covers that row (leave-one-out). This describes the
// engine's error; nothing in it moves a prediction.
#include <vector>

namespace sightline::api {

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
};

// `errors`: the rows' signed errors (each > -1); `level` in (0, 1), e.g. 0.8.
ErrorInterval error_interval(const std::vector<double>& errors, double level);

}  // namespace sightline::api
