// read_bench_file: recognizes a benchmark file by its structure, hands it to
// its tool's reader (bench_import_serving / _tools / _mlperf) and checks the
// meaning of every quantity read before anything is fitted to it.
#include "fit/bench_import.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "fit/bench_import_fields.hpp"
#include "fit/bench_import_keys.hpp"
#include "fit/bench_import_readers.hpp"
#include "core/error.hpp"

namespace sightline::fit {

using bench::refuse;

namespace {

// The JSON text of one document or line, every rejection re-located into the
// user's file: its name, the pointer (prefixed by `where` for a JSON line) and
// the line of the file.
json parse_in_file(const std::string& text, const std::string& file, const std::string& where, int file_line) {
  try {
    return parse_json_text(text);
  } catch (const SightlineError& e) {
    fail(e.code().c_str(), where + e.path(),
         file + (file_line > 0 ? ":" + std::to_string(file_line) : std::string()) + ": " + e.what());
  }
}

// The non-blank lines of `text` with their line numbers (from 1).
std::vector<std::pair<int, std::string>> content_lines(const std::string& text) {
  std::vector<std::pair<int, std::string>> out;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") != std::string::npos) out.emplace_back(n, line);
  }
  return out;
}

// JSON lines (SGLang --output-file, vLLM --append-result): two or more
// non-blank lines, each an object on its own.
bool is_json_lines(const std::vector<std::pair<int, std::string>>& lines) {
  if (lines.size() < 2) return false;
  for (const auto& [n, l] : lines)
    if (l[l.find_first_not_of(" \t\r")] != '{') return false;
  return true;
}

// An MLPerf LoadGen summary opens with a banner: a rule of '=', the title, a rule.
bool is_mlperf_summary(const std::vector<std::pair<int, std::string>>& lines) {
  auto rule = [](const std::string& l) {
    const std::string t = l.substr(0, l.find_last_not_of(" \t\r") + 1);
    return t.size() >= 8 && t.find_first_not_of('=') == std::string::npos;
  };
  return lines.size() >= 3 && rule(lines[0].second) && lines[1].second.find("MLPerf Results Summary") == 0 &&
         rule(lines[2].second);
}

// Which tool wrote one result object, from the keys only it writes.
std::string object_format(const json& j) {
  if (!j.is_object()) return "";
  if (j.contains("benchmarks")) return "guidellm";
  if (j.contains("input_config")) {
    const json& ic = j["input_config"];
    const bool aiperf = j.contains("aiperf_version") ||
                        (ic.is_object() && (ic.contains("phases") || ic.contains("loadgen")));
    return aiperf ? "aiperf" : "genai-perf";
  }
  const bool vllm = j.contains("model_id") || j.contains("tokenizer_id") || j.contains("mean_e2el_ms") ||
                    j.contains("burstiness") || j.contains("num_prompts");
  const bool sglang = j.contains("mean_e2e_latency_ms") || j.contains("total_output_tokens_retokenized") ||
                      j.contains("median_e2e_latency_ms");
  if (vllm && sglang) return "ambiguous";
  return vllm ? "vllm" : sglang ? "sglang" : "";
}

const char* kRecognized =
    "vLLM bench serve JSON (one object, --append-result JSON lines, bench sweep summary), SGLang bench_serving "
    "JSONL, GuideLLM report JSON, genai-perf / AIPerf profile export JSON, MLPerf LoadGen mlperf_log_summary.txt";

// The format of one document, checked against a forced one. A forced format
// that the structure contradicts is refused; one the structure does not name
// is read by that tool's reader, which refuses what is missing.
std::string settle_format(const std::string& found, const std::string& forced, const std::string& file,
                          const std::string& where) {
  if (found == "ambiguous")
    refuse(error_code::kInvalidValue, file, where,
           "the object has keys only vLLM writes and keys only SGLang writes: cannot tell which tool wrote it");
  const bool same_family = (found == "genai-perf" || found == "aiperf") && (forced == "genai-perf" || forced == "aiperf");
  if (!forced.empty() && !found.empty() && found != forced && !same_family)
    refuse(error_code::kInvalidValue, file, where,
           "--bench-format " + forced + " was given, but the file has the structure of a " + found + " result");
  if (!forced.empty()) return same_family ? found : forced;
  if (found.empty()) refuse(error_code::kInvalidValue, file, where, std::string("not a recognized benchmark result (") + kRecognized + ")");
  return found;
}

std::vector<BenchRun> read_object(const json& j, const std::string& file, const std::string& where,
                                  const std::string& forced) {
  const std::string format = settle_format(object_format(j), forced, file, where);
  if (format == "guidellm" || format == "genai-perf" || format == "aiperf" || format == "mlperf") {
    if (!where.empty() || !j.is_object())
      refuse(error_code::kInvalidValue, file, where, "a " + format + " result is one JSON object per file");
  }
  if (!j.is_object()) refuse(error_code::kType, file, where, "expected an object, got " + json_type_name(j));
  std::vector<BenchRun> runs;
  if (format == "vllm") runs = {bench::read_vllm_object(j, file, where)};
  else if (format == "sglang") runs = {bench::read_sglang_object(j, file, where)};
  else if (format == "guidellm") runs = bench::read_guidellm_report(j, file);
  else if (format == "genai-perf" || format == "aiperf") runs = {bench::read_profile_export(j, file, format)};
  else refuse(error_code::kInvalidValue, file, where, "--bench-format " + format + " is not a JSON format");
  // Every key of the object is read, on the format's list of keys that do not
  // change the figures, or refused here (fit/bench_import_keys.hpp).
  bench::refuse_unread_keys(j, where, runs, format, file);
  return runs;
}

std::vector<BenchRun> read_runs(const std::string& name, const std::string& text, const std::string& forced) {
  const auto lines = content_lines(text);
  if (lines.empty()) refuse(error_code::kParse, name, "", "the file is empty");
  const char first = lines[0].second[lines[0].second.find_first_not_of(" \t\r")];
  if (first != '{' && first != '[') {
    if (!is_mlperf_summary(lines))
      refuse(error_code::kInvalidValue, name, "",
             std::string("not JSON and not an MLPerf LoadGen summary (no '=====' / 'MLPerf Results Summary' banner); "
                         "recognized: ") + kRecognized);
    settle_format("mlperf", forced, name, "");
    return {bench::read_mlperf_summary(text, name)};
  }
  if (forced == "mlperf") refuse(error_code::kInvalidValue, name, "", "--bench-format mlperf was given, but the file is JSON");
  std::vector<BenchRun> runs;
  if (first == '{' && is_json_lines(lines)) {
    try {
      parse_json_text(text);  // one object pretty-printed over lines that all start with '{' is still one document
    } catch (const SightlineError&) {
      for (size_t i = 0; i < lines.size(); ++i) {
        const std::string where = pointer_append("", i);
        const json j = parse_in_file(lines[i].second, name, where, lines[i].first);
        for (BenchRun& r : read_object(j, name, where, forced)) runs.push_back(std::move(r));
      }
      return runs;
    }
  }
  const json doc = parse_in_file(text, name, "", 0);
  if (doc.is_array()) {
    // vllm bench sweep's summary.json: the runs as an array.
    if (doc.empty()) refuse(error_code::kInvalidValue, name, "", "an empty array: no run to read");
    for (size_t i = 0; i < doc.size(); ++i)
      for (BenchRun& r : read_object(doc[i], name, pointer_append("", i), forced)) runs.push_back(std::move(r));
    return runs;
  }
  return read_object(doc, name, "", forced);
}

}  // namespace

const BenchFigure* BenchRun::figure(const std::string& metric) const {
  for (const BenchFigure& f : measured)
    if (f.metric == metric) return &f;
  return nullptr;
}

const std::vector<std::string>& bench_formats() {
  static const std::vector<std::string> f = {"vllm", "sglang", "guidellm", "genai-perf", "aiperf", "mlperf"};
  return f;
}

json BenchRun::to_json() const {
  json load_j = {{"kind", load}, {"source", load_source}};
  if (load == "rate") {
    load_j["rate_qps"] = rate_qps;
    load_j["arrival"] = arrival;
    if (arrival == "gamma") load_j["cv"] = arrival_cv;
  }
  if (concurrency > 0) load_j["concurrency"] = concurrency;
  if (max_concurrency > 0) load_j["max_concurrency"] = max_concurrency;
  json m = json::object();
  for (const BenchFigure& f : measured) {
    m[f.metric] = {{"value", f.value}, {"source", f.source}};
    if (f.rel_se > 0) m[f.metric]["relative_standard_error"] = f.rel_se;
  }
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json j = {{"format", format},
            {"file", file},
            {"where", where},
            {"model", model},
            {"load", load_j},
            {"requests", {{"completed", requests}, {"source", requests_source}}},
            {"lengths",
             {{"prompt_tokens_mean", opt(prompt_tokens_mean)},
              {"prompt_source", prompt_source},
              {"output_tokens_mean", opt(output_tokens_mean)},
              {"output_source", output_source}}},
            {"measured", m},
            {"fields_used", used},
            {"asks", asks},
            {"notes", notes}};
  auto range = [](const std::optional<LengthRange>& g) {
    return g ? json{{"dist", "uniform"}, {"min", g->min}, {"max", g->max}, {"source", g->source}} : json(nullptr);
  };
  if (prompt_range || output_range) {
    j["lengths"]["prompt_tokens_dist"] = range(prompt_range);
    j["lengths"]["output_tokens_dist"] = range(output_range);
  }
  if (!replay_model.empty()) j["replay_model"] = replay_model;
  if (stop_s > 0)
    j["requests"]["stopped"] = {{"after_s", stop_s}, {"sent", sent}, {"in_flight", cut}, {"source", stop_source}};
  if (server_max_num_seqs > 0) j["server"] = {{"max_num_seqs", server_max_num_seqs}};
  if (!servers.empty()) {
    json list = json::array();
    auto dtype = [](const std::optional<Dtype>& d) { return d ? json(dtype_name(*d)) : json(nullptr); };
    for (const BenchServer& v : servers)
      list.push_back({{"at", v.at}, {"role", v.role}, {"tp", v.tp}, {"pp", v.pp}, {"dp", v.dp}, {"ep", v.ep},
                      {"dp_attention", v.dp_attention}, {"weights", dtype(v.weights)}, {"kv_cache", dtype(v.kv_cache)}});
    j["server"]["deployment"] = list;
  }
  if (!server_settings.empty()) {
    json list = json::array();
    for (const BenchSetting& b : server_settings)
      list.push_back({{"scenario", "/serving/" + b.section + "/" + b.key}, {"value", b.value}, {"source", b.from}});
    j["server"]["replayed"] = list;
  }
  return j;
}

std::vector<BenchRun> read_bench_file(const std::string& name, const std::string& text, const std::string& format) {
  if (!format.empty() && std::find(bench_formats().begin(), bench_formats().end(), format) == bench_formats().end())
    fail(error_code::kInvalidValue, "", "unknown benchmark format '" + printable(format, 30) + "'");
  if (text.size() > kMaxBenchFileBytes)
    refuse(error_code::kLimitExceeded, name, "",
           "the file is " + std::to_string(text.size() >> 20) + " MiB; benchmark files are read up to " +
               std::to_string(kMaxBenchFileBytes >> 20) + " MiB");
  std::vector<BenchRun> runs = read_runs(name, text, format);
  for (BenchRun& r : runs) bench::check_bench_meaning(r);
  return runs;
}

}  // namespace sightline::fit
