#pragma once
// Summaries for the simulator's metrics: exact percentiles of per-request
// values, a log-bucketed histogram for per-token gaps, and a time series that
// downsamples itself online to a bounded number of points.
#include <cstdint>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "serve/event_queue.hpp"

namespace sightline::serve {

// Linear interpolation between closest ranks (numpy's default); `sorted` ascending.
double percentile(const std::vector<double>& sorted, double p);

// {count, mean, stddev, min, p50, p90, p99, max} of a distribution. With no
// values (count 0) the statistics do not exist: to_json writes each as null
// and "reason" says why (a 0 would read as an infinitely fast run).
struct Summary {
  int64_t count = 0;
  double mean = 0, stddev = 0, min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  std::string reason;  // why there are no values
  bool empty() const { return count == 0; }
  json to_json() const;
};

// Sorts `values` ascending: the order std::sort gives by `<` (a value's
// place among equal ones aside, which only -0.0 beside +0.0 could show), by
// a bucket sort for large lists (a million requests' latencies: four such
// lists were 3% of a 100k run's CPU in std::sort).
void sort_values(std::vector<double>& values);

// The summary of `values` (sorted in place).
Summary summarize(std::vector<double>& values, const char* empty_reason = "no request completed");
Summary empty_summary(const char* reason);

// Non-negative int64 samples (nanoseconds) in buckets of < 0.8% relative width.
// Samples come in runs of equal values (a decode step's tokens share their
// gap): a run is counted into its bucket, the count and the extremes once,
// when a different value ends it, and its values are added to the sums one
// by one then, in the order they came: the same sums, bit for bit, as adding
// each sample as it comes (the per-token add was 8% of a large run's samples,
// a read-modify-write of one bucket and the sums per token).
class GapHistogram {
 public:
  void add(int64_t ns) {
    if (ns == run_value_ && run_length_ > 0) ++run_length_;
    else start_run(ns);
  }
  Summary summary_ms(const char* empty_reason = "no samples") const;  // in milliseconds
  int64_t count() const { return count_ + run_length_; }

 private:
  static constexpr int kSub = 128;
  static int bucket(int64_t v);
  static double bucket_mid(int b);
  void end_run();  // counts the run in progress
  // Ends the run in progress and starts one of `ns`; out of line, so that
  // add() stays small enough to inline where a token comes out.
  __attribute__((noinline)) void start_run(int64_t ns);
  std::vector<int64_t> counts_ = std::vector<int64_t>(64 * kSub, 0);
  int64_t count_ = 0;
  double sum_ = 0, sum_sq_ = 0;
  int64_t min_ = 0, max_ = 0;
  int64_t run_value_ = 0, run_length_ = 0;  // the run in progress, not yet counted
};

// Values in [0, 1] (per-step utilizations) in 1000 bins of width 0.001, so a
// run of millions of steps is summarized in fixed memory; percentiles are bin
// midpoints (within 0.0005), clamped to the exact min and max.
class FractionHistogram {
 public:
  void add(double v);
  Summary summary(const char* empty_reason = "no samples") const;
  int64_t count() const { return count_; }

 private:
  static constexpr int kBins = 1000;
  std::vector<int64_t> counts_ = std::vector<int64_t>(kBins, 0);
  int64_t count_ = 0;
  double sum_ = 0, sum_sq_ = 0, min_ = 0, max_ = 0;
};

struct SeriesSample {
  double running = 0, waiting = 0, batch_size = 0, tokens = 0, kv_blocks_used = 0, kv_utilization = 0;
  double mfu = 0, mbu = 0;  // the step's achieved compute and HBM-bandwidth utilization
};

class TimeSeries {
 public:
  explicit TimeSeries(int max_points = 500) : max_points_(max_points) {}
  void add(TimeNs t, const SeriesSample& s);
  json to_json() const;

 private:
  struct Bucket {
    int64_t n = 0;
    SeriesSample sum;
    double waiting_max = 0, kv_max = 0, kv_util_max = 0;
  };
  void merge_pairs();
  int max_points_;
  TimeNs width_ = 1000000;  // 1 ms, doubled as the run grows
  std::vector<Bucket> buckets_;
};

}  // namespace sightline::serve
