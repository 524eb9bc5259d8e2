// MLPerf Inference LoadGen mlperf_log_summary.txt: "key : value" lines under
// a "MLPerf Results Summary" banner. LLM runs add first-token and
// time-per-output-token latencies. Server runs are Poisson arrivals at the
// scheduled rate for at least min_duration; Offline runs are one query of
// samples_per_query samples, all issued at t = 0.
#include <cmath>
#include <initializer_list>
#include <map>
#include <sstream>

#include "api/bench_import_fields.hpp"
#include "api/bench_import_readers.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"

namespace sightline::api::bench {

namespace {

struct SummaryValue {
  std::string text;
  int line = 0, column = 0;
};

// Every "key : value" line; a key written twice must say the same thing
// (LoadGen prints "Completed tokens per second" in two sections).
// Lines without a colon that change what the run means: LoadGen's count of
// errors ("1 ERROR encountered. See detailed log.") and its warning that the
// issued samples per query are not the setting printed above it.
struct SummaryNotices {
  int errors_line = 0;
  std::string errors_text;
  int concatenate_line = 0;
};

std::map<std::string, SummaryValue> summary_lines(const std::string& text, const std::string& file,
                                                  SummaryNotices* notices) {
  std::map<std::string, SummaryValue> kv;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const std::string t = csv_trim(line);
    if (t.find(" ERROR encountered") != std::string::npos || t.find(" ERRORS encountered") != std::string::npos) {
      notices->errors_line = n;
      notices->errors_text = t;
    }
    if (t.rfind("WARNING: sample_concatenate_permutation was set to true", 0) == 0) notices->concatenate_line = n;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = csv_trim(line.substr(0, colon));
    const std::string value = csv_trim(line.substr(colon + 1));
    if (key.empty() || value.empty()) continue;
    const size_t vpos = line.find_first_not_of(" \t", colon + 1);
    SummaryValue v{value, n, static_cast<int>(vpos == std::string::npos ? colon + 2 : vpos + 1)};
    auto [it, added] = kv.emplace(key, v);
    if (!added && it->second.text != value)
      refuse(error_code::kDuplicateKey, file, "/line/" + std::to_string(n),
             file + ":" + std::to_string(n) + ": '" + printable(key, 60) + "' is written again with another value ('" +
                 printable(value, 40) + "'; line " + std::to_string(it->second.line) + " says '" +
                 printable(it->second.text, 40) + "')");
  }
  return kv;
}

class LoadgenSummary {
 public:
  LoadgenSummary(const std::string& text, const std::string& file, BenchRun* run)
      : kv_(summary_lines(text, file, &notices_)), file_(file), run_(run) {}
  const SummaryNotices& notices() const { return notices_; }
  bool has(const std::string& key) const { return kv_.count(key) > 0; }
  // The first of the spellings LoadGen versions give one line (v6.0 prints
  // "Mean Time per Output Token (ns)" where v4.1 and v5.0 print "Time to").
  std::string spelled(std::initializer_list<const char*> keys) const {
    for (const char* k : keys)
      if (has(k)) return k;
    return *keys.begin();
  }
  std::string where(const std::string& key) const { return "/line/" + std::to_string(kv_.at(key).line); }
  const std::string& text(const std::string& key) const {
    auto it = kv_.find(key);
    if (it == kv_.end()) refuse(error_code::kMissingKey, file_, "", "missing line '" + key + " : ...'");
    run_->used.push_back(where(key) + " (" + key + ")");
    return it->second.text;
  }
  double number(const std::string& key, double min_value, double max_value) const {
    const std::string& t = text(key);
    const SummaryValue& v = kv_.at(key);
    return text_number(t, file_, key, v.line, v.column, min_value, max_value);
  }
  std::optional<double> maybe(const std::string& key, double min_value, double max_value) const {
    if (!has(key)) return std::nullopt;
    return number(key, min_value, max_value);
  }
  // A "Mean ..." figure must lie between the "Min ..." and "Max ..." lines of
  // the same quantity: LoadGen's mean of a long Offline run can overflow
  // (v5.0 AMD MI325X llama2-70b Offline: mean 5,559 s below its 15,442 s minimum).
  void figure(const std::string& metric, const std::string& key, double scale) const {
    const auto v = maybe(key, 0, 1e18);
    if (!v) return;
    if (key.rfind("Mean ", 0) == 0) {
      const std::string what = key.substr(5);
      const auto lo = maybe("Min " + what, 0, 1e18), hi = maybe("Max " + what, 0, 1e18);
      if ((lo && *v < *lo) || (hi && *v > *hi))
        refuse(error_code::kInvalidValue, file_, where(key),
               file_ + ":" + std::to_string(kv_.at(key).line) + ": '" + key + "' = " + kv_.at(key).text +
                   " lies outside its own Min/Max lines: not a mean of this run's samples (an overflowed sum?)");
    }
    run_->measured.push_back({metric, *v * scale, where(key)});
  }

 private:
  SummaryNotices notices_;
  std::map<std::string, SummaryValue> kv_;
  std::string file_;
  BenchRun* run_;
};

void read_server(const LoadgenSummary& s, BenchRun& r) {
  const double completed_per_s = s.number("Completed samples per second", 1e-9, 1e9);
  if (s.number("samples_per_query", 1, 1e9) != 1)
    refuse(error_code::kInvalidValue, r.file, s.where("samples_per_query"), "a Server run issues one sample per query");
  // The rate LoadGen scheduled (its Poisson arrivals); target_qps when older summaries do not print it.
  const std::string rate_key = s.has("Scheduled samples per second") ? "Scheduled samples per second" : "target_qps";
  r.load = "rate";
  r.arrival = "poisson";
  r.rate_qps = s.number(rate_key, 1e-9, 1e9);
  r.load_source = s.where(rate_key);
  // LoadGen schedules rate × min_duration queries and runs them all: the
  // completed count is the completed rate over that duration.
  // A compliance run may set no duration and a fixed query count instead.
  const double min_duration_s = s.number("min_duration (ms)", 0, 1e12) * 1e-3;
  const double min_queries = s.maybe("min_query_count", 0, 1e12).value_or(0);
  r.requests = std::llround(std::max(min_queries, completed_per_s * min_duration_s));
  if (r.requests < 1)
    refuse(error_code::kInvalidValue, r.file, s.where("min_duration (ms)"),
           "neither min_duration nor min_query_count says how many queries LoadGen issued");
  r.requests_source = s.where("Completed samples per second");
  r.notes.push_back("completed requests = the larger of min_query_count and 'Completed samples per second' x min_duration (" +
                    std::to_string(min_duration_s) + " s), what LoadGen schedules");
  if (!s.has("Mean First Token latency (ns)"))
    refuse(error_code::kMissingKey, r.file, "",
           "no 'Mean First Token latency (ns)' line: not an LLM Server run with streamed tokens");
  s.figure("ttft_mean_ms", "Mean First Token latency (ns)", 1e-6);
  s.figure("ttft_median_ms", "50.00 percentile first token latency (ns)", 1e-6);
  s.figure("tpot_mean_ms", s.spelled({"Mean Time to Output Token (ns)", "Mean Time per Output Token (ns)"}), 1e-6);
  s.figure("e2e_mean_ms", "Mean latency (ns)", 1e-6);
  s.figure("requests_per_s", "Completed samples per second", 1);
  const double tokens_per_s = s.number("Completed tokens per second", 0, 1e12);
  r.output_tokens_mean = tokens_per_s / completed_per_s;
  r.output_source = s.where("Completed tokens per second");
  s.figure("output_tokens_per_s", "Completed tokens per second", 1);
}

void read_offline(const LoadgenSummary& s, BenchRun& r) {
  const double samples_per_s = s.number("Samples per second", 1e-9, 1e9);
  // One query of samples_per_query samples, all issued at once: a closed batch.
  r.load = "batch";
  r.requests = std::llround(s.number("samples_per_query", 1, 1e12));
  r.requests_source = s.where("samples_per_query");
  r.load_source = r.requests_source;
  s.figure("requests_per_s", "Samples per second", 1);
  s.figure("e2e_mean_ms", "Mean latency (ns)", 1e-6);
  if (!s.has("Tokens per second"))
    refuse(error_code::kMissingKey, r.file, "", "no 'Tokens per second' line: not an LLM Offline run");
  const double tokens_per_s = s.number("Tokens per second", 0, 1e12);
  r.output_tokens_mean = tokens_per_s / samples_per_s;
  r.output_source = s.where("Tokens per second");
  s.figure("output_tokens_per_s", "Tokens per second", 1);
  // With sample_concatenate_permutation LoadGen issues another count than the
  // samples_per_query setting it prints, and writes the count it issued only
  // to mlperf_log_detail.txt (generated_samples_per_query): the batch is not known.
  if (const int line = s.notices().concatenate_line)
    refuse(error_code::kInvalidValue, r.file, "/line/" + std::to_string(line),
           r.file + ":" + std::to_string(line) +
               ": sample_concatenate_permutation was set: samples_per_query (" + s.where("samples_per_query") +
               ") is the setting, not the count LoadGen issued (only mlperf_log_detail.txt records "
               "generated_samples_per_query)");
}

}  // namespace

BenchRun read_mlperf_summary(const std::string& text, const std::string& file) {
  BenchRun r = new_bench_run("mlperf", file, "");
  const LoadgenSummary s(text, file, &r);
  // LoadGen counts the errors of the run in the summary and details them only in the detailed log.
  if (const int line = s.notices().errors_line)
    refuse(error_code::kInvalidValue, file, "/line/" + std::to_string(line),
           file + ":" + std::to_string(line) + ": LoadGen reports '" + printable(s.notices().errors_text, 60) +
               "': the run is not a clean measurement");
  const std::string scenario = s.text("Scenario");
  if (scenario == "Server") read_server(s, r);
  else if (scenario == "Offline") read_offline(s, r);
  else
    refuse(error_code::kNotImplemented, file, s.where("Scenario"),
           "the " + printable(scenario, 30) + " scenario is not replayed (Server: Poisson arrivals; Offline: one batch)");
  if (s.has("Result is") && s.text("Result is") != "VALID")
    r.notes.push_back("LoadGen marked the run '" + printable(s.text("Result is"), 30) + "'");
  r.asks.push_back("prompt length (LoadGen does not record it): --prompt-tokens FILE=N");
  r.asks.push_back("model, GPU, parallelism and engine settings (the base scenario; SUT name: " +
                   printable(s.has("SUT name") ? s.text("SUT name") : std::string("none"), 60) + ")");
  return r;
}

}  // namespace sightline::api::bench
