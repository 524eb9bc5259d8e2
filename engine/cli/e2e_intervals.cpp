#include "cli/e2e_intervals.hpp"

#include <algorithm>
#include <iomanip>
#include <iostream>

#include "cli/cli_common.hpp"
#include "jobs/error_interval.hpp"
#include "jobs/kind_error_band.hpp"
#include "core/det_math.hpp"

namespace sightline::cli {

namespace {

bool covers(double measured, double low, double high) { return measured >= low && measured <= high; }

json interval_line(double low, double high, double measured) {
  return {{"low", low}, {"high", high}, {"covers_measured", covers(measured, low, high)}};
}

// Leave-one-out: row `j`'s interval widened to the band of its kind's other rows.
void loo_interval(const KindIntervals& k, const KindIntervals::Judged& j, double& low, double& high) {
  std::vector<double> others;
  for (size_t i = 0; i < k.errors.size(); ++i)
    if (i != j.error_index) others.push_back(det_log(1.0 + k.errors[i]));
  std::sort(others.begin(), others.end());
  const jobs::OrderStatisticBand b = jobs::order_statistic_band(others, kIntervalLevel);
  const RowInterval& r = j.interval;
  const IntervalSpan s = jobs::combined_interval(r.central, r.kernel_low, r.kernel_high, b.log_low, b.log_high, r.time_like);
  low = s.low;
  high = s.high;
}

}  // namespace

RowInterval run_interval(const std::string& metric, double value, bool time_like, const json& result) {
  RowInterval out;
  const bool tflops = metric == "megatron_tflops_per_gpu";
  const std::string id = tflops ? "step_time_ms" : metric.substr(metric.rfind('.') + 1);
  if (!result.contains("key_metrics") || !result["key_metrics"].is_array()) return out;
  const json* kernels = nullptr;
  if (result.contains("interval_band") && result["interval_band"].contains("kernel_intervals") &&
      result["interval_band"]["kernel_intervals"].contains(id))
    kernels = &result["interval_band"]["kernel_intervals"][id];
  for (const json& k : result["key_metrics"]) {
    if (k.value("id", "") != id || !k.contains("low") || !k["low"].is_number() || !k["high"].is_number()) continue;
    const double v = k["value"].get<double>(), lo = k["low"].get<double>(), hi = k["high"].get<double>();
    const double klo = kernels ? (*kernels)[0].get<double>() : lo, khi = kernels ? (*kernels)[1].get<double>() : hi;
    if (v <= 0 || lo <= 0 || klo <= 0) return out;
    // TFLOP/s = FLOPs / step time: the bounds swap and scale.
    out.low = tflops ? value * v / hi : lo;
    out.high = tflops ? value * v / lo : hi;
    out.kernel_low = tflops ? value * v / khi : klo;
    out.kernel_high = tflops ? value * v / klo : khi;
    out.central = value;
    out.time_like = time_like;
    out.has = true;
    return out;
  }
  return out;
}

void add_interval_row(KindIntervals& k, double optimism, double measured, const RowInterval& interval, json& line) {
  k.errors.push_back(optimism);
  if (!interval.has) return;
  k.with_interval.push_back({k.errors.size() - 1, measured, interval});
  line["interval"] = interval_line(interval.low, interval.high, measured);
  line["kernel_interval"] = interval_line(interval.kernel_low, interval.kernel_high, measured);
}

json intervals_json(const std::map<std::string, KindIntervals>& by_kind) {
  json o = json::object();
  for (const auto& [kind, k] : by_kind) {
    const jobs::ErrorInterval e = jobs::error_interval(k.errors, kIntervalLevel);
    const jobs::OrderStatisticBand& f = e.finite_sample;
    int shown = 0, kernels = 0, loo = 0;
    for (const KindIntervals::Judged& j : k.with_interval) {
      shown += covers(j.measured, j.interval.low, j.interval.high) ? 1 : 0;
      kernels += covers(j.measured, j.interval.kernel_low, j.interval.kernel_high) ? 1 : 0;
      double lo = 0, hi = 0;
      if (k.errors.size() >= 3) loo_interval(k, j, lo, hi);
      loo += k.errors.size() >= 3 && covers(j.measured, lo, hi) ? 1 : 0;
    }
    const json judged = k.errors.size() >= 3 ? json(k.with_interval.size()) : json(0);
    o[kind] = {{"rows", e.rows},
               {"level", kIntervalLevel},
               {"band_signed_error_pct", {100.0 * e.low, 100.0 * e.high}},
               {"loo_judged", e.judged},
               {"loo_covered", e.covered},
               {"loo_coverage", e.judged > 0 ? json(e.coverage()) : json()},
               // The band the runs use (presets/transfer_errors/end_to_end.json
               // is this, written by node web/measured-errors.mjs).
               {"finite_sample",
                {{"order", f.order},
                 {"log_low", f.log_low},
                 {"log_high", f.log_high},
                 {"low_signed_error_pct", jobs::signed_error_pct_of_log(f.log_low)},
                 {"high_signed_error_pct", jobs::signed_error_pct_of_log(f.log_high)},
                 {"reaches_level", f.reaches_level},
                 {"expected_coverage", f.expected_coverage},
                 {"loo_covered", e.finite_sample_covered}}},
               {"engine_interval_rows", k.with_interval.size()},
               {"engine_interval_covered", shown},
               {"kernel_interval_covered", kernels},
               {"run_interval_loo_judged", judged},
               {"run_interval_loo_covered", loo}};
  }
  return o;
}

void print_interval_table(const json& by_kind) {
  if (by_kind.empty()) return;
  std::cout << "\n80% intervals by kind, set from the kind's own errors on these rows, and how often the runs' "
               "intervals cover the measured figure\n"
               "  band: interpolated 10th-90th percentile (leave-one-out covers); finite-sample band: order "
               "statistics, the one runs use (leave-one-out covers)\n"
               "  runs: the kernels' interval alone; the run's interval widened to the band of the kind's other "
               "rows (leave-one-out); widened to the shipped band (in sample)\n";
  for (const auto& [kind, i] : by_kind.items()) {
    const json& f = i["finite_sample"];
    std::cout << "  " << std::left << std::setw(20) << kind << std::right << " rows " << std::setw(3)
              << i["rows"].get<int>() << "  band [" << fixed(i["band_signed_error_pct"][0].get<double>(), 1) << "%, "
              << fixed(i["band_signed_error_pct"][1].get<double>(), 1) << "%] " << i["loo_covered"].get<int>() << "/"
              << i["loo_judged"].get<int>() << "  finite-sample [" << fixed(f["low_signed_error_pct"].get<double>(), 1)
              << "%, " << fixed(f["high_signed_error_pct"].get<double>(), 1) << "%] " << f["loo_covered"].get<int>()
              << "/" << i["loo_judged"].get<int>() << (f["reaches_level"].get<bool>() ? "" : " (too few rows: extremes)")
              << "\n  " << std::setw(20) << "" << "  runs: kernels " << i["kernel_interval_covered"].get<int>() << "/"
              << i["engine_interval_rows"].get<int>() << ", widened leave-one-out "
              << i["run_interval_loo_covered"].get<int>() << "/" << i["run_interval_loo_judged"].get<int>()
              << ", widened to the shipped band " << i["engine_interval_covered"].get<int>() << "/"
              << i["engine_interval_rows"].get<int>() << " (in sample)\n";
  }
}

}  // namespace sightline::cli
