// The meaning checks every imported run passes before it is replayed or
// fitted (issue 34 point 4): a number that parses is not yet a measurement.
#include <cmath>
#include <sstream>

#include "fit/bench_import_fields.hpp"
#include "fit/bench_import_readers.hpp"
#include "core/error.hpp"

namespace sightline::fit::bench {

namespace {

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

bool is_latency(const std::string& metric) { return metric.size() > 3 && metric.compare(metric.size() - 3, 3, "_ms") == 0; }
bool is_per_token(const std::string& metric) { return metric.rfind("tpot", 0) == 0 || metric.rfind("itl", 0) == 0; }

// The shortest latency a served request can show: a first token or a whole
// request under a millisecond, a token under 50 µs, is no GPU's; such a
// figure under a '_ms' key is a value in seconds.
double floor_ms(const std::string& metric) { return is_per_token(metric) ? 0.05 : 1.0; }

constexpr double kMaxLatencyMs = 86'400'000;
// A billion requests or tokens a second is more than any cluster serves.
constexpr double kMaxPerSecond = 1e9;

// Zero latencies: vLLM writes TPOT 0 when no request had two output tokens
// (no TPOT exists: dropped); any other zero is not a measurement.
void check_latency_values(BenchRun& r) {
  const double out = r.output_tokens_mean.value_or(0);
  std::vector<BenchFigure> kept;
  for (const BenchFigure& f : r.measured) {
    if (!is_latency(f.metric)) {
      kept.push_back(f);
      continue;
    }
    if (is_per_token(f.metric) && f.value > 0 && r.output_tokens_mean && out < 2)
      refuse(error_code::kInvalidValue, r.file, f.source,
             "a time per output token needs at least 2 output tokens per request; this run's mean is " + fmt(out) +
                 " (" + r.output_source + ")");
    if (f.value == 0 && is_per_token(f.metric) && r.output_tokens_mean && out < 2) {
      r.notes.push_back(f.metric + " is 0 with under 2 output tokens per request: no such figure exists, left out");
      continue;
    }
    // A mean over a day is no served request's: a value in µs or ns under a '_ms' key.
    if (f.value > kMaxLatencyMs)
      refuse(error_code::kRange, r.file, f.source,
             f.metric + " = " + fmt(f.value) + " ms is longer than a day (" + fmt(kMaxLatencyMs) +
                 " ms): a value in microseconds or nanoseconds under a '_ms' key?");
    if (f.value < floor_ms(f.metric))
      refuse(error_code::kInvalidValue, r.file, f.source,
             f.metric + " = " + fmt(f.value) + " ms is shorter than any served request shows (" + fmt(floor_ms(f.metric)) +
                 " ms): " + (f.value == 0 ? "not a measurement" : "a value in seconds under a '_ms' key?"));
    kept.push_back(f);
  }
  r.measured = kept;
}

const BenchFigure* first_of(const BenchRun& r, std::initializer_list<const char*> metrics) {
  for (const char* m : metrics)
    if (const BenchFigure* f = r.figure(m)) return f;
  return nullptr;
}

// TTFT <= E2E, TPOT <= E2E, and E2E ≈ TTFT + (output − 1) × TPOT within a
// factor of 10 (means of mixed lengths and medians stray from the identity,
// never by the factor 1000 that a unit slip makes).
void check_consistency(const BenchRun& r) {
  const BenchFigure* e2e = r.figure("e2e_mean_ms");
  const BenchFigure* ttft_mean = r.figure("ttft_mean_ms");
  if (e2e && ttft_mean && ttft_mean->value > e2e->value * (1 + 1e-9))
    refuse(error_code::kInvalidValue, r.file, ttft_mean->source,
           "mean TTFT " + fmt(ttft_mean->value) + " ms exceeds the mean end-to-end latency " + fmt(e2e->value) + " ms (" +
               e2e->source + "): a first token cannot come after the last");
  const BenchFigure* ttft = first_of(r, {"ttft_mean_ms", "ttft_median_ms"});
  const BenchFigure* tpot = first_of(r, {"tpot_mean_ms", "itl_mean_ms", "itl_median_ms"});
  if (e2e && tpot && tpot->value > e2e->value * (1 + 1e-9))
    refuse(error_code::kInvalidValue, r.file, tpot->source,
           tpot->metric + " " + fmt(tpot->value) + " ms exceeds the mean end-to-end latency " + fmt(e2e->value) + " ms (" +
               e2e->source + ")");
  if (!e2e || !ttft || !tpot || !r.output_tokens_mean) return;
  const double expected = ttft->value + (*r.output_tokens_mean - 1) * tpot->value;
  const double ratio = e2e->value / expected;
  if (ratio < 0.1 || ratio > 10)
    refuse(error_code::kInvalidValue, r.file, e2e->source,
           "mean end-to-end latency " + fmt(e2e->value) + " ms disagrees with TTFT + (output tokens − 1) × TPOT = " +
               fmt(ttft->value) + " + " + fmt(*r.output_tokens_mean - 1) + " × " + fmt(tpot->value) + " = " +
               fmt(expected) + " ms (" + ttft->source + ", " + tpot->source + ") by a factor of " + fmt(ratio) +
               ": a value in seconds under a '_ms' key?");
}

}  // namespace

void check_bench_meaning(BenchRun& r) {
  if (r.requests <= 0)
    refuse(error_code::kInvalidValue, r.file, r.requests_source,
           "the run completed no request: there is nothing to compare with");
  if (r.prompt_tokens_mean && *r.prompt_tokens_mean < 1)
    refuse(error_code::kInvalidValue, r.file, r.prompt_source,
           "the mean prompt is " + fmt(*r.prompt_tokens_mean) + " tokens over " + std::to_string(r.requests) +
               " completed requests: a prompt has at least one token");
  if (r.output_tokens_mean && *r.output_tokens_mean < 1)
    refuse(error_code::kInvalidValue, r.file, r.output_source,
           "the mean output is " + fmt(*r.output_tokens_mean) + " tokens over " + std::to_string(r.requests) +
               " completed requests: a completed request has at least one output token");
  // No model reads a prompt or writes an output of ten million tokens: a mean
  // past it is a total under a mean's key, or a unit slip.
  constexpr double kMaxMeanTokens = 1e7;
  if (r.prompt_tokens_mean && *r.prompt_tokens_mean > kMaxMeanTokens)
    refuse(error_code::kRange, r.file, r.prompt_source,
           "the mean prompt is " + fmt(*r.prompt_tokens_mean) + " tokens per request, past any model's context (" +
               fmt(kMaxMeanTokens) + ")");
  if (r.output_tokens_mean && *r.output_tokens_mean > kMaxMeanTokens)
    refuse(error_code::kRange, r.file, r.output_source,
           "the mean output is " + fmt(*r.output_tokens_mean) + " tokens per request, past any model's context (" +
               fmt(kMaxMeanTokens) + ")");
  // A run that completed requests served tokens: a throughput of 0 is no measurement.
  for (const BenchFigure& f : r.measured)
    if (f.metric == "requests_per_s" || f.metric == "output_tokens_per_s") {
      if (!(f.value > 0))
        refuse(error_code::kInvalidValue, r.file, f.source,
               f.metric + " = " + fmt(f.value) + " in a run that completed " + std::to_string(r.requests) +
                   " requests: not a measurement");
      if (f.value > kMaxPerSecond)
        refuse(error_code::kRange, r.file, f.source,
               f.metric + " = " + fmt(f.value) + " is more than any cluster serves (" + fmt(kMaxPerSecond) + " per second)");
    }
  if (r.load == "rate" && !(r.rate_qps > 0))
    refuse(error_code::kInvalidValue, r.file, r.load_source, "the request rate must be > 0");
  if (r.load == "closed_loop" && r.concurrency < 1)
    refuse(error_code::kInvalidValue, r.file, r.load_source, "the concurrency must be >= 1");
  check_latency_values(r);
  check_consistency(r);
  const bool has_latency = first_of(r, {"ttft_mean_ms", "ttft_median_ms", "tpot_mean_ms", "itl_median_ms"});
  const bool has_throughput = r.load == "batch" && r.figure("output_tokens_per_s");
  if (!has_latency && !has_throughput)
    refuse(error_code::kMissingKey, r.file, r.where,
           "the run records no TTFT or TPOT (a non-streaming run?): nothing a fit could compare with");
}

}  // namespace sightline::fit::bench
