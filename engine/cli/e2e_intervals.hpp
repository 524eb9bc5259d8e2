#pragma once
// report-e2e's intervals by kind (issue 38, point 7): per kind of run, the 80%
// band its development rows' errors give (jobs/error_interval.hpp), how often
// such a band set without a row covers that row (leave-one-out), and how
// often the runs' own intervals cover the measured figures: the kernels'
// interval alone, the interval the run shows (widened to the shipped band,
// jobs/kind_error_band.hpp: in sample, the row is one of the band's rows), and
// the same widened to the band of the kind's other rows (leave-one-out: the
// honest figure).
#include <map>
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline::cli {

constexpr double kIntervalLevel = 0.8;

// A row's run interval of its metric.
struct RowInterval {
  bool has = false;
  bool time_like = false;
  double central = 0;
  double kernel_low = 0, kernel_high = 0;  // from the kernels' residuals alone
  double low = 0, high = 0;                // as the run shows it
};

// The run's interval of `metric` (the key metric of the same id, the group's
// last name for a dotted metric; Megatron TFLOP/s from the step time's), its
// value `value`; `has` false where the run has none.
RowInterval run_interval(const std::string& metric, double value, bool time_like, const json& result);

struct KindIntervals {
  std::vector<double> errors;  // every row's signed error
  struct Judged {
    size_t error_index;
    double measured;
    RowInterval interval;
  };
  std::vector<Judged> with_interval;  // the rows whose run has an interval
};

// A metric row into its kind's tallies; where it has an interval, its line
// gets "interval" (as shown) and "kernel_interval".
void add_interval_row(KindIntervals& k, double optimism, double measured, const RowInterval& interval, json& line);

// summary.intervals_by_kind.
json intervals_json(const std::map<std::string, KindIntervals>& by_kind);
// Its text table.
void print_interval_table(const json& by_kind);

}  // namespace sightline::cli
