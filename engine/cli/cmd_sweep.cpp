// sightline sweep: expands a base scenario over axes of values (a grid, or
// axes zipped together) into JSON Lines, one scenario per line, for `batch`.
#include <iostream>
#include <sstream>

#include "api/api.hpp"
#include "core/json_text.hpp"
#include "cli/cli_common.hpp"

namespace sightline::cli {

namespace {

struct Axis {
  std::string pointer;  // JSON pointer into the scenario
  std::string name;     // its last key, for the generated ids
  std::vector<json> values;
};

// "serving.workload.arrival.rate_qps" or "/serving/workload/arrival/rate_qps".
std::string to_pointer(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  std::string p = "/";
  for (char c : path) p += c == '.' ? '/' : c;
  return p;
}

// A value is JSON when it parses as JSON (numbers, true, false, null, "quoted"), a string otherwise.
json parse_value(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return json(text);
  }
}

bool parse_axis(const std::string& spec, Axis& axis, std::string& problem) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) {
    problem = "--set takes PATH=v1,v2,... (got '" + spec + "')";
    return false;
  }
  axis.pointer = to_pointer(spec.substr(0, eq));
  axis.name = axis.pointer.substr(axis.pointer.find_last_of('/') + 1);
  std::stringstream values(spec.substr(eq + 1));
  std::string item;
  while (std::getline(values, item, ',')) axis.values.push_back(parse_value(item));
  if (axis.values.empty()) {
    problem = "--set " + spec.substr(0, eq) + " has no values";
    return false;
  }
  return true;
}

std::string value_label(const json& v) { return v.is_string() ? v.get<std::string>() : safe_dump(v); }

}  // namespace

int cmd_sweep(const Args& args) {
  std::string base, out;
  std::vector<Axis> axes;
  bool zip = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--set" && i + 1 < args.size()) {
      Axis a;
      std::string problem;
      if (!parse_axis(args[++i], a, problem)) return usage_error(problem);
      axes.push_back(std::move(a));
    } else if (args[i] == "--zip") {
      zip = true;
    } else if (args[i] == "--out" && i + 1 < args.size()) {
      out = args[++i];
    } else if (base.empty() && (args[i] == "-" || args[i].rfind("--", 0) != 0)) {
      base = args[i];
    } else {
      return usage_error("unexpected argument '" + args[i] + "'");
    }
  }
  if (base.empty()) return usage_error("sweep needs a BASE scenario (a file, '-', or a scenario preset id)");
  if (axes.empty()) return usage_error("sweep needs at least one --set PATH=v1,v2,...");

  // BASE: a file when one exists at that path, otherwise a scenario preset id.
  std::string text;
  if (!read_file(base, text)) {
    const json p = json::parse(api::get_preset("scenarios", base));
    if (!p["ok"].get<bool>()) {
      std::cerr << "error [io_error] at '': " << base << " is neither a readable file nor a scenario preset\n";
      return 1;
    }
    text = safe_dump(p["result"]);
  }
  json scenario;
  try {
    scenario = json::parse(text);
  } catch (const json::exception& e) {
    std::cerr << "error [parse_error] at '': " << base << ": " << e.what() << "\n";
    return 1;
  }
  if (!scenario.is_object()) {
    std::cerr << "error [type] at '': the base scenario must be a JSON object\n";
    return 1;
  }
  const std::string base_id = scenario.value("id", std::string("sweep"));

  size_t count = 1;
  if (zip) {
    count = axes.front().values.size();
    for (const Axis& a : axes)
      if (a.values.size() != count) return usage_error("--zip needs every --set to have the same number of values");
  } else {
    for (const Axis& a : axes) count *= a.values.size();
  }

  std::string lines;
  std::vector<size_t> index(axes.size(), 0);
  for (size_t k = 0; k < count; ++k) {
    // Grid order: the last --set varies fastest.
    if (!zip) {
      size_t rest = k;
      for (size_t a = axes.size(); a-- > 0;) {
        index[a] = rest % axes[a].values.size();
        rest /= axes[a].values.size();
      }
    } else {
      for (size_t& i : index) i = k;
    }
    json s = scenario;
    std::string id = base_id;
    for (size_t a = 0; a < axes.size(); ++a) {
      const json& v = axes[a].values[index[a]];
      try {
        s[json::json_pointer(axes[a].pointer)] = v;
      } catch (const json::exception& e) {
        std::cerr << "error [invalid_value] at '" << axes[a].pointer << "': cannot set it in the base scenario: " << e.what()
                  << "\n";
        return 1;
      }
      id += (a == 0 ? " " : ",") + axes[a].name + "=" + value_label(v);
    }
    s["id"] = id;
    lines += safe_dump(s) + "\n";
  }
  try {
    write_output(out, lines);
  } catch (const SightlineError& e) {
    return report_error(e);
  }
  return 0;
}

}  // namespace sightline::cli
