// MLPerf Inference LoadGen mlperf_log_summary.txt: "key : value" lines under
// a "MLPerf Results Summary" banner. LLM runs add first-token and
// time-per-output-token latencies. Server runs are Poisson arrivals at the
// scheduled rate for at least min_duration; Offline runs are one query of
// samples_per_query samples, all issued at t = 0.
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>

#include "fit/bench_import_fields.hpp"
#include "fit/bench_import_keys.hpp"
#include "fit/bench_import_readers.hpp"
#include "core/csv.hpp"
#include "core/det_math.hpp"
#include "core/error.hpp"

namespace sightline::fit::bench {

namespace {

struct SummaryValue {
  std::string text;
  int line = 0, column = 0;
  std::vector<int> lines;  // every line that writes the key (the first is `line`)
};

// Every "key : value" line; a key written twice must say the same thing
// (LoadGen prints "Completed tokens per second" in two sections).
// Lines without a colon that change what the run means: LoadGen's count of
// errors ("1 ERROR encountered. See detailed log.") and its warning that the
// issued samples per query are not the setting printed above it.
struct SummaryNotices {
  int errors_line = 0;
  std::string errors_text;
  int warnings_line = 0;
  std::string warnings_text;
  int concatenate_line = 0;
};

std::map<std::string, SummaryValue> summary_lines(const std::string& text, const std::string& file,
                                                  SummaryNotices* notices, std::vector<SummaryLine>* all) {
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
    // "1 warning encountered. See detailed log." (not "No warnings encountered during test.").
    const bool counted = !t.empty() && std::isdigit(static_cast<unsigned char>(t[0]));
    if (counted && (t.find(" warning encountered") != std::string::npos || t.find(" warnings encountered") != std::string::npos)) {
      notices->warnings_line = n;
      notices->warnings_text = t;
    }
    if (t.rfind("WARNING: sample_concatenate_permutation was set to true", 0) == 0) notices->concatenate_line = n;
    const size_t colon = line.find(':');
    const std::string key = colon == std::string::npos ? "" : csv_trim(line.substr(0, colon));
    const std::string value = colon == std::string::npos ? "" : csv_trim(line.substr(colon + 1));
    all->push_back({n, key.empty() ? t : key});
    if (key.empty() || value.empty()) continue;
    const size_t vpos = line.find_first_not_of(" \t", colon + 1);
    SummaryValue v{value, n, static_cast<int>(vpos == std::string::npos ? colon + 2 : vpos + 1), {}};
    auto [it, added] = kv.emplace(key, v);
    it->second.lines.push_back(n);
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
      : kv_(summary_lines(text, file, &notices_, &lines_)), file_(file), run_(run) {}
  const SummaryNotices& notices() const { return notices_; }
  // Every line, and the ones the reader took (for the shared rule, fit/bench_import_keys.hpp).
  const std::vector<SummaryLine>& lines() const { return lines_; }
  const std::set<int>& used_lines() const { return used_lines_; }
  void use_line(int line) const {
    if (line > 0) used_lines_.insert(line);
  }
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
    used_lines_.insert(it->second.lines.begin(), it->second.lines.end());
    return it->second.text;
  }
  double number(const std::string& key, double min_value, double max_value) const {
    const std::string& t = text(key);
    const SummaryValue& v = kv_.at(key);
    return text_number(t, file_, key, v.line, v.column, min_value, max_value);
  }
  // Half a unit in the last digit the summary prints the value with (LoadGen
  // writes doubles with 6 significant digits: "101.456", "1.0399e+06").
  double half_ulp(const std::string& key) const {
    const std::string& t = kv_.at(key).text;
    const size_t e = t.find_first_of("eE");
    const std::string mantissa = t.substr(0, e);
    const size_t dot = mantissa.find('.');
    const int64_t decimals = dot == std::string::npos ? 0 : static_cast<int64_t>(mantissa.size() - dot - 1);
    int64_t exponent = 0;
    if (e != std::string::npos) {
      std::string digits = t.substr(e + 1);
      if (!digits.empty() && digits[0] == '+') digits.erase(0, 1);
      if (!parse_integer_token(digits, exponent)) exponent = 0;  // number() read the whole token already
    }
    return 0.5 * det_pow(10.0, static_cast<double>(exponent - decimals));
  }
  int line(const std::string& key) const { return kv_.at(key).line; }
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
  std::vector<SummaryLine> lines_;
  mutable std::set<int> used_lines_;
  std::map<std::string, SummaryValue> kv_;
  std::string file_;
  BenchRun* run_;
};

// How many queries a Server run issued (LoadGen loadgen.cc GenerateQueries:
// it schedules Poisson arrivals at target_qps until the schedule reaches
// min_duration and min_query_count is met, and issues them all; results.cc
// prints "Scheduled samples per second" = (count - 1) / the last query's
// scheduled time, so count = Scheduled x min_duration to a query or two). With
// sample_concatenate_permutation ("equal issue", which v5.0+ summaries
// announce) the count is padded to the first whole multiple of the loaded
// sample set (performance_sample_count) whose schedule reaches min_duration:
// v5.1 GB200 llama2-70b-99 Server, Scheduled 182.04/s over 600 s = 109,224
// -> 5 x 24,576 = 122,880, what its mlperf_log_detail.txt records as
// generated_query_count and result_query_count.
void server_query_count(const LoadgenSummary& s, const std::string& rate_key, BenchRun& r) {
  const double scheduled_per_s = s.number(rate_key, 1e-9, 1e9);
  const double min_duration_s = s.number("min_duration (ms)", 0, 1e12) * 1e-3;
  const double min_queries = s.maybe("min_query_count", 0, 1e12).value_or(0);
  const double scheduled = scheduled_per_s * min_duration_s;
  double count = std::max(min_queries, scheduled);
  if (count < 1)
    refuse(error_code::kInvalidValue, r.file, s.where("min_duration (ms)"),
           "neither min_duration nor min_query_count says how many queries LoadGen issued");
  r.requests_source = s.where(rate_key);
  std::string how = "the larger of min_query_count and '" + rate_key + "' x min_duration (" +
                    std::to_string(min_duration_s) + " s)";
  if (const int line = s.notices().concatenate_line) {
    const double set = s.number("performance_sample_count", 1, 1e12);
    const double padded = std::ceil(count / set) * set;
    // The schedule of the last multiple below must not have reached min_duration:
    // refused when the count lies within the Poisson spread of a multiple.
    if (count > min_queries && padded - scheduled < 3 * std::sqrt(padded) + s.half_ulp(rate_key) * min_duration_s)
      refuse(error_code::kInvalidValue, r.file, s.where(rate_key),
             r.file + ":" + std::to_string(line) + ": sample_concatenate_permutation pads the queries to a multiple of " +
                 "performance_sample_count, and " + rate_key + " x min_duration (" + std::to_string(std::llround(scheduled)) +
                 ") lies too near " + std::to_string(std::llround(padded)) +
                 " to tell which multiple LoadGen issued (mlperf_log_detail.txt: generated_query_count)");
    count = padded;
    how += ", padded to a multiple of performance_sample_count (sample_concatenate_permutation, line " +
           std::to_string(line) + "; assuming LoadGen loaded that many samples)";
  } else {
    r.notes.push_back("LoadGen up to v4.1 may pad the queries to a multiple of performance_sample_count without "
                      "saying so in the summary; mlperf_log_detail.txt (result_query_count) has the count issued");
  }
  r.requests = std::llround(count);
  r.notes.push_back("completed requests = " + how + ", what LoadGen schedules");
}

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
  server_query_count(s, rate_key, r);
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

// How many samples an Offline run issued: LoadGen's "Samples per second" is
// sample_count / max latency (results.cc), so the count is Samples per second
// x Max latency, to the precision printed (~1e-5). It must be the
// samples_per_query setting or, where LoadGen padded the query to a whole
// multiple of performance_sample_count (sample_concatenate_permutation: v5.0+
// print a warning, v4.1 pads without one), that padding: v6.0 ASUS
// llama2-70b-99, 101.456/s x 4,117.95 s = 417,791, i.e. 17 x 24,576 = 417,792
// (setting 396,000); v4.1 NVIDIA 8xH200, 107.477/s x 2,743.95 s = 294,911, i.e.
// 12 x 24,576 = 294,912 (setting 274,560, no warning). Neither: refused.
void offline_sample_count(const LoadgenSummary& s, BenchRun& r) {
  const double setting = s.number("samples_per_query", 1, 1e12);
  const double issued = s.number("Samples per second", 1e-9, 1e9) * s.number("Max latency (ns)", 1, 1e18) * 1e-9;
  const double tolerance = 1 + 1e-4 * issued;
  const auto set = s.maybe("performance_sample_count", 1, 1e12);
  const double padded = set ? std::ceil(setting / *set) * *set : setting;
  r.load_source = s.where("samples_per_query");
  r.requests_source = s.where("Samples per second");
  const std::string derived = "'Samples per second' x 'Max latency (ns)' = " + std::to_string(std::llround(issued));
  if (std::abs(issued - setting) <= tolerance) {
    r.requests = std::llround(setting);
    r.notes.push_back("batch = samples_per_query (" + derived + ")");
  } else if (set && std::abs(issued - padded) <= tolerance) {
    r.requests = std::llround(padded);
    r.notes.push_back("batch = samples_per_query " + std::to_string(std::llround(setting)) +
                      " padded to a multiple of performance_sample_count: " + std::to_string(r.requests) + " (" + derived +
                      "; sample_concatenate_permutation)");
  } else {
    refuse(error_code::kInvalidValue, r.file, s.where("Samples per second"),
           r.file + ":" + std::to_string(s.line("Samples per second")) + ": " + derived +
               " samples issued is neither samples_per_query (" + std::to_string(std::llround(setting)) +
               ") nor its padding to performance_sample_count: the count LoadGen issued is not known "
               "(mlperf_log_detail.txt: generated_samples_per_query)");
  }
}

void read_offline(const LoadgenSummary& s, BenchRun& r) {
  const double samples_per_s = s.number("Samples per second", 1e-9, 1e9);
  // One query of samples, all issued at once: a closed batch.
  r.load = "batch";
  s.figure("requests_per_s", "Samples per second", 1);
  s.figure("e2e_mean_ms", "Mean latency (ns)", 1e-6);
  if (!s.has("Tokens per second"))
    refuse(error_code::kMissingKey, r.file, "", "no 'Tokens per second' line: not an LLM Offline run");
  const double tokens_per_s = s.number("Tokens per second", 0, 1e12);
  r.output_tokens_mean = tokens_per_s / samples_per_s;
  r.output_source = s.where("Tokens per second");
  s.figure("output_tokens_per_s", "Tokens per second", 1);
  offline_sample_count(s, r);
}

// LoadGen settings that change what was measured, read so that a run they
// changed is refused at its line, never read as a plain one: Mode (an
// accuracy run's timing is not a performance measurement), max_async_queries
// (a cap on queries in flight: not the Poisson load), max_duration and
// max_query_count (caps that may cut a Server count derived from min_duration),
// performance_issue_* (compliance runs that issue the same or only unique
// samples).
void read_run_settings(const LoadgenSummary& s, BenchRun& r) {
  if (s.has("Mode") && s.text("Mode") != "PerformanceOnly")
    refuse(error_code::kNotImplemented, r.file, s.where("Mode"),
           "Mode '" + printable(s.text("Mode"), 30) + "': only a PerformanceOnly run measures performance");
  for (const char* key : {"max_async_queries", "max_duration (ms)", "max_query_count", "performance_issue_unique",
                          "performance_issue_same", "performance_issue_same_index"}) {
    if (!s.has(key) || s.number(key, 0, 1e19) == 0) continue;
    // An Offline run's count is checked against 'Samples per second' x 'Max
    // latency' (offline_sample_count), whatever capped it.
    const bool cap = std::string(key).rfind("performance_issue", 0) != 0;
    if (cap && s.has("Scenario") && s.text("Scenario") == "Offline") continue;
    refuse(error_code::kNotImplemented, r.file, s.where(key),
           r.file + ":" + std::to_string(s.line(key)) + ": '" + key + "' = " + s.text(key) +
               " changes the queries LoadGen issued from what this reader derives (0: off); not replayed");
  }
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
  read_run_settings(s, r);
  const std::string scenario = s.text("Scenario");
  if (scenario == "Server") read_server(s, r);
  else if (scenario == "Offline") read_offline(s, r);
  else
    refuse(error_code::kNotImplemented, file, s.where("Scenario"),
           "the " + printable(scenario, 30) + " scenario is not replayed (Server: Poisson arrivals; Offline: one batch)");
  if (const int line = s.notices().warnings_line)
    r.notes.push_back("LoadGen reports '" + printable(s.notices().warnings_text, 60) + "' (line " + std::to_string(line) +
                      "): what it warned of is only in mlperf_log_detail.txt");
  if (s.has("Result is") && s.text("Result is") != "VALID")
    r.notes.push_back("LoadGen marked the run '" + printable(s.text("Result is"), 30) + "'");
  r.asks.push_back("prompt length (LoadGen does not record it): --prompt-tokens FILE=N");
  r.asks.push_back("model, GPU, parallelism and engine settings (the base scenario; SUT name: " +
                   printable(s.has("SUT name") ? s.text("SUT name") : std::string("none"), 60) + ")");
  // The lines LoadGen prints about what was read: its warning and notices.
  s.use_line(s.notices().warnings_line);
  s.use_line(s.notices().concatenate_line);
  refuse_unread_lines(s.lines(), s.used_lines(), "mlperf", file);
  return r;
}

}  // namespace sightline::fit::bench
