// sightline run: runs a scenario file or preset.
#include <iostream>

#include "core/json_text.hpp"
#include "api/api.hpp"
#include "api/budgeted_job.hpp"
#include "cli/cli_common.hpp"
#include "cli/flags.hpp"

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
  if (!calibration_file.empty()) {  // a cluster calibration from `sightline fit`, put into the cost model
    std::string cal_text;
    if (!read_file(calibration_file, cal_text)) {
      std::cerr << "error [io_error] at '': cannot read " << calibration_file << "\n";
      return 1;
    }
    json cal = json::parse(cal_text, nullptr, false), doc = json::parse(text, nullptr, false);
    if (cal.is_discarded()) {
      std::cerr << "error [parse_error] at '': " << calibration_file << ": not valid JSON\n";
      return 1;
    }
    if (doc.is_object()) {  // an invalid scenario is reported by the run itself
      if (!doc.contains("cost_model") || !doc["cost_model"].is_object()) doc["cost_model"] = json::object();
      doc["cost_model"]["calibration"] = cal;
      text = safe_dump(doc);
    }
  }
  if (full_intervals) {  // the reference interval: full runs at both cost bounds (cost_model.intervals "full")
    json doc = json::parse(text, nullptr, false);
    if (doc.is_object()) {  // an invalid scenario is reported by the run itself
      if (!doc.contains("cost_model") || !doc["cost_model"].is_object()) doc["cost_model"] = json::object();
      doc["cost_model"]["intervals"] = "full";
      text = safe_dump(doc);
    }
  }
  const std::string raw = sightline::api::run_scenario_with_budget(
      text, central_only, max_work_units > 0 ? max_work_units : RunLimits::kDefaultMaxWorkUnits, RunLimits::kNativeCeiling);
  json envelope = json::parse(raw);
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
    print_result_table(r);
  }
  return 0;
}

}  // namespace sightline::cli
