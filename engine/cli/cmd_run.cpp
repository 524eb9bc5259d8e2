// sightline run: runs a scenario file or preset.
#include <iostream>

#include "cli/cli_common.hpp"
#include "cli/flags.hpp"
#include "core/error.hpp"
#include "core/json_reader.hpp"
#include "core/json_text.hpp"
#include "api/api.hpp"
#include "jobs/budgeted_job.hpp"
#include "fit/calibration_apply.hpp"

namespace sightline::cli {

namespace {

// Flattens nested objects into dotted keys for CSV.
void flatten(const json& j, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) flatten(j[i], prefix + "." + std::to_string(i), out);
  } else {
    out.emplace_back(prefix, j.is_string() ? j.get<std::string>() : safe_dump(j));
  }
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// An error the engine found inside the calibration that `--calibration FILE`
// put at /cost_model/calibration is the file's: its path becomes the pointer
// inside FILE, and the message names FILE.
void relocate_in_calibration_file(json& envelope, const std::string& calibration_file) {
  static const std::string kPrefix = "/cost_model/calibration";
  if (envelope.value("ok", true) || !envelope["error"].is_object()) return;
  json& e = envelope["error"];
  const std::string path = e.value("path", std::string());
  if (path.compare(0, kPrefix.size(), kPrefix) != 0 || (path.size() > kPrefix.size() && path[kPrefix.size()] != '/'))
    return;
  e["path"] = path.substr(kPrefix.size());
  e["message"] = calibration_file + ": " + e.value("message", std::string());
}

// For a model imported from a config.json (the result says so): what the
// engine understood of it, to print with the table; null otherwise.
json understood_import(const json& result, const std::string& text, const std::string& scenario_name) {
  if (!result.contains("model") || !result["model"].contains("import")) return json();
  const json doc = parse_json_document(text, scenario_name);
  if (!doc.is_object() || !doc.contains("model")) return json();
  const json e = read_engine_envelope(sightline::api::inspect_model(safe_dump(doc["model"])));
  return e.value("ok", false) ? e["result"] : json();
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  std::string file, preset, format = "table", calibration_file;
  bool central_only = false, full_intervals = false;
  std::vector<std::string> files;
  std::string problem;
  Flags flags("run");
  int64_t max_work_units = 0;  // 0: the default budget; the scenario's own limit may go up to the native ceiling
  flags.integer("--max-work-units", &max_work_units, 1, RunLimits::kNativeCeiling);
  flags.text("--calibration", &calibration_file);
  flags.boolean("--full-intervals", &full_intervals);
  flags.boolean("--central-only", &central_only).text("--preset", &preset)
      .text("--format", &format, {"table", "json", "csv", "envelope"}).positional(&files, 1);
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (!files.empty()) file = files[0];
  if (file.empty() == preset.empty()) return usage_error("run takes exactly one of FILE or --preset ID");
  std::string text;
  if (const int status = read_scenario_text(file, preset, text)) return status;
  const std::string scenario_name = preset.empty() ? file : "preset " + preset;
  if (!calibration_file.empty() || full_intervals) {
    // Both side paths edit the scenario, so it is read here, by the one reader
    // (duplicate keys, depth, UTF-8), and an error is located in the file.
    json doc = parse_json_document(text, scenario_name);
    fit::cost_model_section(doc, scenario_name);
    if (!calibration_file.empty()) {  // a cluster calibration from `sightline fit`, put into the cost model
      std::string cal_text;
      read_input_file(calibration_file, cal_text);
      doc = fit::with_calibration(std::move(doc), parse_json_document(cal_text, calibration_file), scenario_name);
    }
    // The reference interval: full runs at both cost bounds (cost_model.intervals "full").
    if (full_intervals) fit::cost_model_section(doc, scenario_name)["intervals"] = "full";
    text = safe_dump(doc);
  }
  const std::string raw = sightline::api::run_scenario_with_budget(
      text, central_only, max_work_units > 0 ? max_work_units : RunLimits::kDefaultMaxWorkUnits, RunLimits::kNativeCeiling);
  json envelope = read_engine_envelope(raw);
  if (!calibration_file.empty()) relocate_in_calibration_file(envelope, calibration_file);
  if (!envelope["ok"].get<bool>()) return report_error(envelope);
  if (format == "envelope") {  // the API's bytes, as the wasm module returns them
    std::cout << raw << "\n";
    return 0;
  }
  const json& r = envelope["result"];
  if (format == "json") {
    std::cout << safe_dump(envelope, 2) << "\n";
  } else if (format == "csv") {
    std::vector<std::pair<std::string, std::string>> rows;
    flatten(r, "", rows);
    std::cout << "key,value\n";
    for (const auto& [k, v] : rows) std::cout << csv_field(k) << "," << csv_field(v) << "\n";
  } else {
    print_result_table(r, understood_import(r, text, scenario_name));
  }
  return 0;
}

}  // namespace sightline::cli
