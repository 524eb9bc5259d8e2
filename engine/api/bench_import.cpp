#include "api/bench_import.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "core/error.hpp"

namespace sightline::api {

namespace {

// Errors name the file in the message; the path locates the value inside it.
[[noreturn]] void bench_fail(const char* code, const std::string& file, const std::string& path, const std::string& msg) {
  fail(code, path, file + ": " + msg);
}

// A non-negative number at `key` of `obj` (or nullopt when absent and not required).
std::optional<double> bench_number(const json& obj, const std::string& key, const std::string& file,
                                   const std::string& path, bool required) {
  const std::string p = pointer_append(path, key);
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) bench_fail(error_code::kMissingKey, file, p, "missing '" + key + "' (the file looks partial)");
    return std::nullopt;
  }
  if (!it->is_number())
    bench_fail(error_code::kType, file, p, "'" + key + "' must be a number, got " + json_type_name(*it));
  const double v = it->get<double>();
  if (!(v >= 0) || v > 1e15) bench_fail(error_code::kRange, file, p, "'" + key + "' must be a finite number ≥ 0");
  return v;
}

double need(const json& obj, const std::string& key, const std::string& file, const std::string& path) {
  return *bench_number(obj, key, file, path, true);
}
double opt(const json& obj, const std::string& key, const std::string& file, const std::string& path) {
  return bench_number(obj, key, file, path, false).value_or(0);
}

// Python's json writes an infinite request rate as `Infinity`, which is not
// JSON; benchmark_serving writes the string "inf". Both mean "all at once".
std::string replace_infinity(const std::string& text) {
  std::string out;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      out += c;
    } else if (c == '"') {
      in_string = true;
      out += c;
    } else if (text.compare(i, 8, "Infinity") == 0) {
      out += "\"inf\"";
      i += 7;
    } else {
      out += c;
    }
  }
  return out;
}

json parse_json(const std::string& text, const std::string& file, const std::string& path) {
  json j = json::parse(replace_infinity(text), nullptr, false);
  if (j.is_discarded()) bench_fail(error_code::kParse, file, path, "not valid JSON");
  return j;
}

// A request rate: a number, or "inf"/null for "no rate limit" (returned as 0).
double read_rate(const json& obj, const std::string& key, const std::string& file, const std::string& path) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return 0;
  if (it->is_string() && (*it == "inf" || *it == "Infinity")) return 0;
  return opt(obj, key, file, path);
}

void require_json_object(const json& j, const std::string& file, const std::string& path) {
  if (!j.is_object()) bench_fail(error_code::kType, file, path, "expected an object, got " + json_type_name(j));
}

void check_measured(const BenchRun& r, const std::string& path) {
  if (r.requests <= 0)
    bench_fail(error_code::kInvalidValue, r.file, path, "the run completed no request: nothing to compare with");
  if (r.ttft_mean_ms <= 0 || r.tpot_mean_ms <= 0)
    bench_fail(error_code::kInvalidValue, r.file, path,
               "the run records no positive mean TTFT and TPOT (non-streaming runs cannot be fitted)");
}

// The summary keys vllm's benchmark_serving.py and SGLang's bench_serving
// both write (SGLang's script began as a copy of vllm's); only the end-to-end
// latency key differs.
BenchRun read_serving_summary(const json& j, const char* format, const char* e2e_key, const std::string& file,
                              const std::string& p) {
  BenchRun r;
  r.format = format;
  r.file = file;
  r.rate_qps = read_rate(j, "request_rate", file, p);
  r.concurrency = static_cast<int64_t>(opt(j, "max_concurrency", file, p));
  // vllm's --burstiness: gamma inter-arrival times of shape b (1: Poisson).
  const double burstiness = opt(j, "burstiness", file, p);
  if (burstiness > 0 && burstiness != 1) {
    r.arrival = "gamma";
    r.arrival_cv = 1 / std::sqrt(burstiness);
  }
  r.requests = static_cast<int64_t>(need(j, "completed", file, p));
  const double n = static_cast<double>(std::max<int64_t>(r.requests, 1));
  r.prompt_tokens_mean = need(j, "total_input_tokens", file, p) / n;
  r.output_tokens_mean = need(j, "total_output_tokens", file, p) / n;
  r.requests_per_s = need(j, "request_throughput", file, p);
  r.output_tokens_per_s = opt(j, "output_throughput", file, p);
  r.ttft_mean_ms = need(j, "mean_ttft_ms", file, p);
  r.tpot_mean_ms = need(j, "mean_tpot_ms", file, p);
  r.itl_mean_ms = opt(j, "mean_itl_ms", file, p);
  r.e2e_mean_ms = opt(j, e2e_key, file, p);
  return r;
}

// vllm bench serve --save-result (benchmarks/benchmark_serving.py): one object.
BenchRun read_vllm(const json& j, const std::string& file) {
  const std::string p;
  BenchRun r = read_serving_summary(j, "vllm", "mean_e2el_ms", file, p);
  if (j.contains("model_id") && j["model_id"].is_string()) r.model = j["model_id"].get<std::string>();
  // Per-request arrays (written with --save-detailed): checked, so a truncated file is caught.
  for (const char* key : {"input_lens", "output_lens", "ttfts"}) {
    auto it = j.find(key);
    if (it == j.end()) continue;
    const std::string ap = pointer_append(p, key);
    if (!it->is_array()) bench_fail(error_code::kType, file, ap, std::string("'") + key + "' must be an array");
    for (size_t i = 0; i < it->size(); ++i)
      if (!(*it)[i].is_number()) bench_fail(error_code::kType, file, pointer_append(ap, i), "must be a number");
    if (j.contains("num_prompts") && j["num_prompts"].is_number_integer() &&
        static_cast<int64_t>(it->size()) != j["num_prompts"].get<int64_t>())
      bench_fail(error_code::kInvalidValue, file, ap,
                 std::string("'") + key + "' has " + std::to_string(it->size()) + " entries, but num_prompts is " +
                     std::to_string(j["num_prompts"].get<int64_t>()) + " (truncated file?)");
  }
  return r;
}

// sglang.bench_serving --output-file: JSONL, one object per run.
BenchRun read_sglang_line(const json& j, const std::string& file, const std::string& p) {
  require_json_object(j, file, p);
  BenchRun r = read_serving_summary(j, "sglang", "mean_e2e_latency_ms", file, p);
  r.where = p;
  return r;
}

// GuideLLM's StatusDistributionSummary: {"successful": {"mean": ...}, ...}.
double guidellm_mean(const json& metrics, const std::string& key, const std::string& file, const std::string& path,
                     bool required) {
  const std::string p = pointer_append(path, key);
  auto it = metrics.find(key);
  if (it == metrics.end()) {
    if (required) bench_fail(error_code::kMissingKey, file, p, "missing metric '" + key + "'");
    return 0;
  }
  require_json_object(*it, file, p);
  auto s = it->find("successful");
  if (s == it->end()) bench_fail(error_code::kMissingKey, file, pointer_append(p, "successful"), "missing 'successful'");
  require_json_object(*s, file, pointer_append(p, "successful"));
  return *bench_number(*s, "mean", file, pointer_append(p, "successful"), required);
}

BenchRun read_guidellm_benchmark(const json& b, const std::string& file, const std::string& p) {
  require_json_object(b, file, p);
  BenchRun r;
  r.format = "guidellm";
  r.file = file;
  r.where = p;
  const std::string ap = pointer_append(p, "args"), sp = pointer_append(ap, "strategy");
  if (!b.contains("args") || !b["args"].is_object() || !b["args"].contains("strategy"))
    bench_fail(error_code::kMissingKey, file, sp, "missing the benchmark's scheduling strategy");
  const json& st = b["args"]["strategy"];
  require_json_object(st, file, sp);
  const std::string type = st.contains("type_") && st["type_"].is_string() ? st["type_"].get<std::string>() : "";
  if (type == "constant" || type == "poisson") {
    r.rate_qps = need(st, "rate", file, sp);
    if (type == "constant") r.arrival = "fixed";
  } else if (type == "concurrent") {
    r.concurrency = static_cast<int64_t>(need(st, "streams", file, sp));
  } else if (type == "synchronous") {
    r.concurrency = 1;
    r.arrival = "fixed";  // one request after another: evenly spaced at the rate achieved
  } else if (type != "throughput") {
    bench_fail(error_code::kInvalidValue, file, pointer_append(sp, "type_"),
               "unknown strategy '" + type + "' (synchronous, concurrent, throughput, constant, poisson)");
  }
  const std::string mp = pointer_append(p, "metrics");
  if (!b.contains("metrics")) bench_fail(error_code::kMissingKey, file, mp, "missing 'metrics'");
  const json& m = b["metrics"];
  require_json_object(m, file, mp);
  r.requests_per_s = guidellm_mean(m, "requests_per_second", file, mp, true);
  r.prompt_tokens_mean = guidellm_mean(m, "prompt_token_count", file, mp, true);
  r.output_tokens_mean = guidellm_mean(m, "output_token_count", file, mp, true);
  r.ttft_mean_ms = guidellm_mean(m, "time_to_first_token_ms", file, mp, true);
  // GuideLLM's time_per_output_token_ms spreads the whole latency over every
  // token, first included; its inter_token_latency_ms excludes the first token,
  // which is TPOT as vLLM and this engine define it.
  r.tpot_mean_ms = guidellm_mean(m, "inter_token_latency_ms", file, mp, true);
  r.itl_mean_ms = r.tpot_mean_ms;
  r.e2e_mean_ms = guidellm_mean(m, "request_latency", file, mp, false) * 1e3;  // seconds in the report
  r.output_tokens_per_s = guidellm_mean(m, "output_tokens_per_second", file, mp, false);
  const std::string rp = pointer_append(pointer_append(p, "run_stats"), "requests_made");
  if (b.contains("run_stats") && b["run_stats"].is_object() && b["run_stats"].contains("requests_made")) {
    require_json_object(b["run_stats"]["requests_made"], file, rp);
    r.requests = static_cast<int64_t>(need(b["run_stats"]["requests_made"], "successful", file, rp));
  } else {
    bench_fail(error_code::kMissingKey, file, rp, "missing the count of successful requests");
  }
  return r;
}

// genai-perf / AIPerf profile export: metrics as {"unit": ..., "avg": ...}.
double genai_avg(const json& j, const std::string& key, const std::string& unit, const std::string& file, bool required) {
  const std::string p = pointer_append("", key);
  auto it = j.find(key);
  if (it == j.end()) {
    if (required) bench_fail(error_code::kMissingKey, file, p, "missing metric '" + key + "'");
    return 0;
  }
  require_json_object(*it, file, p);
  if (!unit.empty() && it->contains("unit") && (*it)["unit"].is_string() && (*it)["unit"] != unit)
    bench_fail(error_code::kInvalidValue, file, pointer_append(p, "unit"),
               "expected unit '" + unit + "', got '" + (*it)["unit"].get<std::string>() + "'");
  return *bench_number(*it, "avg", file, p, required);
}

BenchRun read_genai_perf(const json& j, const std::string& file) {
  BenchRun r;
  r.format = "genai-perf";
  r.file = file;
  r.ttft_mean_ms = genai_avg(j, "time_to_first_token", "ms", file, true);
  // genai-perf's inter-token latency is (request latency − TTFT) / (output tokens − 1) per request: TPOT.
  r.tpot_mean_ms = genai_avg(j, "inter_token_latency", "ms", file, true);
  r.itl_mean_ms = r.tpot_mean_ms;
  r.e2e_mean_ms = genai_avg(j, "request_latency", "ms", file, false);
  r.requests_per_s = genai_avg(j, "request_throughput", "requests/sec", file, true);
  r.output_tokens_per_s = genai_avg(j, "output_token_throughput", "tokens/sec", file, false);
  r.prompt_tokens_mean = genai_avg(j, "input_sequence_length", "tokens", file, true);
  r.output_tokens_mean = genai_avg(j, "output_sequence_length", "tokens", file, true);
  r.requests = static_cast<int64_t>(genai_avg(j, "request_count", "", file, false));
  if (!j.contains("input_config")) bench_fail(error_code::kMissingKey, file, "/input_config", "missing 'input_config'");
  const json& ic = j["input_config"];
  require_json_object(ic, file, "/input_config");
  // genai-perf writes the load flat; AIPerf nests it under "loadgen".
  const bool nested = ic.contains("loadgen") && ic["loadgen"].is_object();
  const json& load = nested ? ic["loadgen"] : ic;
  const std::string lp = nested ? "/input_config/loadgen" : "/input_config";
  r.rate_qps = read_rate(load, "request_rate", file, lp);
  r.concurrency = static_cast<int64_t>(opt(load, "concurrency", file, lp));
  if (ic.contains("model")) {
    const json& m = ic["model"];
    if (m.is_string()) r.model = m.get<std::string>();
    else if (m.is_array() && !m.empty() && m[0].is_string()) r.model = m[0].get<std::string>();
  }
  if (r.requests == 0 && r.requests_per_s > 0) {
    r.requests = 1;  // the count only gates "completed something"; genai-perf does not always write it
    r.notes.push_back("no request_count in the file: the request count is unknown");
  }
  return r;
}

// MLPerf LoadGen mlperf_log_summary.txt: "key : value" lines.
BenchRun read_mlperf(const std::string& text, const std::string& file) {
  BenchRun r;
  r.format = "mlperf";
  r.file = file;
  std::map<std::string, std::pair<std::string, int>> kv;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto trim = [](std::string s) {
      const size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
      return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
    };
    kv[trim(line.substr(0, colon))] = {trim(line.substr(colon + 1)), n};
  }
  auto num = [&](const std::string& key, bool required) -> double {
    auto it = kv.find(key);
    if (it == kv.end()) {
      if (required) bench_fail(error_code::kMissingKey, file, "/" + key, "missing line '" + key + " : ...'");
      return 0;
    }
    const std::string p = "/line/" + std::to_string(it->second.second);
    char* end = nullptr;
    const double v = std::strtod(it->second.first.c_str(), &end);
    if (end == it->second.first.c_str() || !(v >= 0))
      bench_fail(error_code::kInvalidValue, file, p, "'" + key + "' is not a number: '" + it->second.first + "'");
    return v;
  };
  auto sc = kv.find("Scenario");
  if (sc == kv.end()) bench_fail(error_code::kMissingKey, file, "/Scenario", "missing line 'Scenario : ...'");
  if (sc->second.first != "Server")
    bench_fail(error_code::kNotImplemented, file, "/line/" + std::to_string(sc->second.second),
               "only the Server scenario has an arrival rate to replay, got '" + sc->second.first + "'");
  r.rate_qps = num("target_qps", true);
  r.requests_per_s = num("Completed samples per second", true);
  r.output_tokens_per_s = num("Completed tokens per second", false);
  r.ttft_mean_ms = num("Mean First Token latency (ns)", true) * 1e-6;
  r.tpot_mean_ms = num("Mean Time to Output Token (ns)", true) * 1e-6;
  r.e2e_mean_ms = num("Mean latency (ns)", false) * 1e-6;
  r.requests = static_cast<int64_t>(num("min_query_count", false));
  if (r.requests == 0) r.requests = 1;
  r.notes.push_back("LoadGen records no prompt or output lengths: the base scenario's are used");
  return r;
}

bool looks_like_jsonl(const std::string& text) {
  int objects = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t a = line.find_first_not_of(" \t\r");
    if (a == std::string::npos) continue;
    if (line[a] != '{') return false;
    ++objects;
  }
  return objects >= 1;
}

}  // namespace

const std::vector<std::string>& bench_formats() {
  static const std::vector<std::string> f = {"vllm", "sglang", "guidellm", "genai-perf", "mlperf"};
  return f;
}

json BenchRun::to_json() const {
  json j = {{"format", format},
          {"file", file},
          {"where", where},
          {"model", model},
          {"workload",
           {{"rate_qps", rate_qps},
            {"arrival", arrival},
            {"concurrency", concurrency},
            {"requests", requests},
            {"prompt_tokens_mean", prompt_tokens_mean},
            {"output_tokens_mean", output_tokens_mean}}},
          {"measured",
           {{"ttft_mean_ms", ttft_mean_ms},
            {"tpot_mean_ms", tpot_mean_ms},
            {"itl_mean_ms", itl_mean_ms},
            {"e2e_mean_ms", e2e_mean_ms},
            {"requests_per_s", requests_per_s},
            {"output_tokens_per_s", output_tokens_per_s}}},
          {"notes", notes}};
  if (!replay_model.empty()) j["replay_model"] = replay_model;
  return j;
}

std::vector<BenchRun> read_bench_file(const std::string& name, const std::string& text, const std::string& format_in) {
  std::string format = format_in;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) bench_fail(error_code::kParse, name, "", "the file is empty");
  if (format.empty()) {
    if (text.find("MLPerf Results Summary") != std::string::npos) {
      format = "mlperf";
    } else if (text[first] == '{') {
      json j = json::parse(replace_infinity(text), nullptr, false);
      if (j.is_discarded()) {
        // Several objects, one per line: SGLang's JSONL (a broken line is located below).
        if (looks_like_jsonl(text)) format = "sglang";
        else bench_fail(error_code::kParse, name, "", "not valid JSON");
      } else if (j.contains("benchmarks")) {
        format = "guidellm";
      } else if (j.contains("time_to_first_token") || j.contains("input_config")) {
        format = "genai-perf";
      } else if (j.contains("mean_e2e_latency_ms") || j.contains("total_output_tokens_retokenized")) {
        format = "sglang";
      } else if (j.contains("mean_ttft_ms")) {
        format = "vllm";
      }
    }
    if (format.empty())
      bench_fail(error_code::kInvalidValue, name, "",
                 "not a recognized benchmark result (vllm --save-result JSON, SGLang bench_serving JSONL, GuideLLM "
                 "report JSON, genai-perf/AIPerf profile export JSON, MLPerf LoadGen summary)");
  }
  std::vector<BenchRun> runs;
  if (format == "mlperf") {
    runs.push_back(read_mlperf(text, name));
  } else if (format == "sglang") {
    std::istringstream in(text);
    std::string line;
    size_t index = 0;
    while (std::getline(in, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string p = pointer_append("", index++);
      runs.push_back(read_sglang_line(parse_json(line, name, p), name, p));
    }
  } else {
    const json j = parse_json(text, name, "");
    require_json_object(j, name, "");
    if (format == "vllm") {
      runs.push_back(read_vllm(j, name));
    } else if (format == "genai-perf") {
      runs.push_back(read_genai_perf(j, name));
    } else if (format == "guidellm") {
      const json& b = j["benchmarks"];
      if (!b.is_array() || b.empty())
        bench_fail(error_code::kInvalidValue, name, "/benchmarks", "'benchmarks' must be a non-empty array");
      for (size_t i = 0; i < b.size(); ++i)
        runs.push_back(read_guidellm_benchmark(b[i], name, pointer_append("/benchmarks", i)));
    } else {
      bench_fail(error_code::kInvalidValue, "", "/format", "unknown benchmark format '" + format + "'");
    }
  }
  for (const BenchRun& r : runs) check_measured(r, r.where);
  return runs;
}

}  // namespace sightline::api
