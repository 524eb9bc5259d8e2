#include "serve/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace sightline::serve {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double pos = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

json Summary::to_json() const {
  if (count == 0)
    return {{"count", 0},     {"mean", nullptr}, {"stddev", nullptr}, {"min", nullptr}, {"p50", nullptr},
            {"p90", nullptr}, {"p99", nullptr},  {"max", nullptr},    {"reason", reason}};
  return {{"count", count}, {"mean", mean}, {"stddev", stddev}, {"min", min},
          {"p50", p50},     {"p90", p90},   {"p99", p99},       {"max", max}};
}

Summary empty_summary(const char* reason) {
  Summary s;
  s.reason = reason;
  return s;
}

void sort_values(std::vector<double>& values) {
  constexpr size_t kBucketFrom = 4096;  // below, std::sort is as fast
  const size_t n = values.size();
  if (n < kBucketFrom || n > UINT32_MAX) return std::sort(values.begin(), values.end());  // counts are 32-bit
  // In place (a million requests' lists are summarized while their records
  // are held: memory is the run's peak): the values are spread over buckets
  // by a monotone map of their place between the least and the greatest,
  // moved into their buckets (American flag sort) and each bucket sorted.
  double lo = values[0], hi = values[0];
  for (double x : values) {
    if (!(x >= -std::numeric_limits<double>::max() && x <= std::numeric_limits<double>::max()))
      return std::sort(values.begin(), values.end());  // an infinity or a NaN: no map to buckets
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  constexpr size_t kBuckets = size_t{1} << 14;  // 128 KB of counts; about 60 values a bucket at 1M
  const double scale = static_cast<double>(kBuckets - 1) / (hi - lo);
  if (!(scale > 0 && scale <= std::numeric_limits<double>::max())) return std::sort(values.begin(), values.end());
  // Subtracting lo and multiplying by a positive scale never reverse two
  // values' order, nor does the floor: bucket(x) grows with x.
  auto bucket = [&](double x) { return std::min(kBuckets - 1, static_cast<size_t>((x - lo) * scale)); };
  std::vector<uint32_t> start(kBuckets + 1, 0), next(kBuckets);
  for (double x : values) ++start[bucket(x) + 1];
  for (size_t b = 0; b < kBuckets; ++b) start[b + 1] += start[b];
  std::copy(start.begin(), start.end() - 1, next.begin());
  for (size_t b = 0; b < kBuckets; ++b) {
    while (next[b] < start[b + 1]) {
      double x = values[next[b]];
      for (size_t d = bucket(x); d != b; d = bucket(x)) std::swap(x, values[next[d]++]);
      values[next[b]++] = x;
    }
  }
  for (size_t b = 0; b < kBuckets; ++b)
    if (start[b + 1] - start[b] > 1) std::sort(values.begin() + start[b], values.begin() + start[b + 1]);
}

Summary summarize(std::vector<double>& v, const char* empty_reason) {
  if (v.empty()) return empty_summary(empty_reason);
  sort_values(v);
  double sum = 0;
  for (double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return {static_cast<int64_t>(v.size()), mean, std::sqrt(ss / static_cast<double>(v.size())), v.front(),
          percentile(v, 50), percentile(v, 90), percentile(v, 99), v.back(), ""};
}

int GapHistogram::bucket(int64_t v) {
  if (v < kSub) return static_cast<int>(v);
  const int e = 63 - __builtin_clzll(static_cast<unsigned long long>(v));  // highest set bit, >= 7
  const int shift = e - 7;
  const int sub = static_cast<int>((static_cast<uint64_t>(v) >> shift) & (kSub - 1));
  return (e - 6) * kSub + sub;
}

double GapHistogram::bucket_mid(int b) {
  if (b < kSub) return static_cast<double>(b);
  const int e = b / kSub + 6;
  const int sub = b % kSub;
  const double lo = std::ldexp(static_cast<double>(kSub + sub), e - 7);
  const double width = std::ldexp(1.0, e - 7);
  return lo + 0.5 * (width - 1.0);
}

void GapHistogram::end_run() {
  if (run_length_ == 0) return;
  const int64_t ns = std::max<int64_t>(0, run_value_);
  counts_[static_cast<size_t>(bucket(ns))] += run_length_;
  if (count_ == 0 || ns < min_) min_ = ns;
  if (count_ == 0 || ns > max_) max_ = ns;
  count_ += run_length_;
  // One addition per sample, in order, as they came (a product by the run's
  // length would round differently); in registers, not through memory.
  const double d = static_cast<double>(ns), d_sq = d * d;
  double sum = sum_, sum_sq = sum_sq_;
  for (int64_t i = 0; i < run_length_; ++i) {
    sum += d;
    sum_sq += d_sq;
  }
  sum_ = sum;
  sum_sq_ = sum_sq;
  run_length_ = 0;
}

void GapHistogram::start_run(int64_t ns) {
  end_run();
  run_value_ = ns;
  run_length_ = 1;
}

Summary GapHistogram::summary_ms(const char* empty_reason) const {
  if (run_length_ > 0) {  // counted on a copy: once per run's metrics
    GapHistogram all = *this;
    all.end_run();
    return all.summary_ms(empty_reason);
  }
  if (count_ == 0) return empty_summary(empty_reason);
  auto at_rank = [&](double p) {
    const double rank = p / 100.0 * static_cast<double>(count_ - 1);
    int64_t seen = 0;
    for (size_t b = 0; b < counts_.size(); ++b) {
      seen += counts_[b];
      if (static_cast<double>(seen) > rank) {
        const double mid = bucket_mid(static_cast<int>(b));
        return std::min(std::max(mid, static_cast<double>(min_)), static_cast<double>(max_)) * 1e-6;
      }
    }
    return static_cast<double>(max_) * 1e-6;
  };
  const double n = static_cast<double>(count_);
  const double mean = sum_ / n;
  const double var = std::max(0.0, sum_sq_ / n - mean * mean);
  return {count_, mean * 1e-6, std::sqrt(var) * 1e-6, static_cast<double>(min_) * 1e-6, at_rank(50), at_rank(90),
          at_rank(99), static_cast<double>(max_) * 1e-6, ""};
}

void FractionHistogram::add(double v) {
  v = std::clamp(v, 0.0, 1.0);
  const int b = std::min(kBins - 1, static_cast<int>(v * kBins));
  ++counts_[static_cast<size_t>(b)];
  if (count_ == 0 || v < min_) min_ = v;
  if (count_ == 0 || v > max_) max_ = v;
  ++count_;
  sum_ += v;
  sum_sq_ += v * v;
}

Summary FractionHistogram::summary(const char* empty_reason) const {
  if (count_ == 0) return empty_summary(empty_reason);
  auto at_rank = [&](double p) {
    const double rank = p / 100.0 * static_cast<double>(count_ - 1);
    int64_t seen = 0;
    for (int b = 0; b < kBins; ++b) {
      seen += counts_[static_cast<size_t>(b)];
      if (static_cast<double>(seen) > rank) return std::clamp((b + 0.5) / kBins, min_, max_);
    }
    return max_;
  };
  const double n = static_cast<double>(count_);
  const double mean = sum_ / n;
  return {count_, mean, std::sqrt(std::max(0.0, sum_sq_ / n - mean * mean)), min_, at_rank(50), at_rank(90), at_rank(99),
          max_, ""};
}

void TimeSeries::add(TimeNs t, const SeriesSample& s) {
  if (t < 0) t = 0;
  size_t idx = static_cast<size_t>(t / width_);
  while (idx >= static_cast<size_t>(2 * max_points_)) {
    merge_pairs();
    idx = static_cast<size_t>(t / width_);
  }
  if (buckets_.size() <= idx) buckets_.resize(idx + 1);
  Bucket& b = buckets_[idx];
  ++b.n;
  b.sum.running += s.running;
  b.sum.waiting += s.waiting;
  b.sum.batch_size += s.batch_size;
  b.sum.tokens += s.tokens;
  b.sum.kv_blocks_used += s.kv_blocks_used;
  b.sum.kv_utilization += s.kv_utilization;
  b.sum.mfu += s.mfu;
  b.sum.mbu += s.mbu;
  b.waiting_max = std::max(b.waiting_max, s.waiting);
  b.kv_max = std::max(b.kv_max, s.kv_blocks_used);
  b.kv_util_max = std::max(b.kv_util_max, s.kv_utilization);
}

void TimeSeries::merge_pairs() {
  std::vector<Bucket> merged((buckets_.size() + 1) / 2);
  for (size_t i = 0; i < buckets_.size(); ++i) {
    Bucket& m = merged[i / 2];
    const Bucket& b = buckets_[i];
    m.n += b.n;
    m.sum.running += b.sum.running;
    m.sum.waiting += b.sum.waiting;
    m.sum.batch_size += b.sum.batch_size;
    m.sum.tokens += b.sum.tokens;
    m.sum.kv_blocks_used += b.sum.kv_blocks_used;
    m.sum.kv_utilization += b.sum.kv_utilization;
    m.sum.mfu += b.sum.mfu;
    m.sum.mbu += b.sum.mbu;
    m.waiting_max = std::max(m.waiting_max, b.waiting_max);
    m.kv_max = std::max(m.kv_max, b.kv_max);
    m.kv_util_max = std::max(m.kv_util_max, b.kv_util_max);
  }
  buckets_ = std::move(merged);
  width_ *= 2;
}

json TimeSeries::to_json() const {
  // At most 2 x max_points buckets are kept; merge once more on output when needed.
  TimeSeries copy = *this;
  while (copy.buckets_.size() > static_cast<size_t>(copy.max_points_)) copy.merge_pairs();
  json t = json::array(), running = json::array(), waiting = json::array(), waiting_max = json::array(),
       batch = json::array(), tokens = json::array(), kv = json::array(), kv_util = json::array(), mfu = json::array(),
       mbu = json::array();
  for (size_t i = 0; i < copy.buckets_.size(); ++i) {
    const Bucket& b = copy.buckets_[i];
    if (b.n == 0) continue;
    const double n = static_cast<double>(b.n);
    t.push_back(to_s(static_cast<TimeNs>(i) * copy.width_));
    running.push_back(b.sum.running / n);
    waiting.push_back(b.sum.waiting / n);
    waiting_max.push_back(b.waiting_max);
    batch.push_back(b.sum.batch_size / n);
    tokens.push_back(b.sum.tokens / n);
    kv.push_back(b.kv_max);
    kv_util.push_back(b.kv_util_max);
    mfu.push_back(b.sum.mfu / n);
    mbu.push_back(b.sum.mbu / n);
  }
  return {{"bucket_s", to_s(copy.width_)},
          {"t_s", t},
          {"running", running},
          {"waiting", waiting},
          {"waiting_max", waiting_max},
          {"batch_size", batch},
          {"tokens_per_step", tokens},
          {"kv_blocks_used", kv},
          {"kv_block_utilization", kv_util},
          {"mfu", mfu},
          {"mbu", mbu}};
}

}  // namespace sightline::serve
