// sightline sweep: expands a base scenario over axes of values (a grid, or
// axes zipped together) into JSON Lines, one scenario per line, for `batch`.
#include <fstream>
#include <iostream>
#include <sstream>

#include "api/api.hpp"
#include "core/json_text.hpp"
#include "cli/cli_common.hpp"
#include "cli/command_budget.hpp"
#include "cli/flags.hpp"

namespace sightline::cli {

namespace {

// Lines one sweep writes at most (each a whole scenario, ~2 KB): a grid past
// this is refused before the first line.
constexpr uint64_t kMaxSweepPoints = 10000000;
// A work unit per 25 bytes of the lines a sweep writes: the default budget
// (8e7) writes at most 2 GB. Far cheaper than a unit of simulation: 20,000
// points of I2.1 (20.8 MB) took 0.20 s of CPU (2026-11-28).
constexpr double kSweepBytesPerUnit = 25;

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
    return parse_json_text(text);
  } catch (const SightlineError&) {
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

// Sets `value` at `pointer`, creating missing object keys. Unlike json_pointer
// assignment, an array index may be at most the array's size (the size, or
// "-", appends): a huge index would otherwise resize the array to it.
bool set_at_pointer(json& doc, const std::string& pointer, const json& value, std::string& problem) {
  json::json_pointer parsed;
  try {
    parsed = json::json_pointer(pointer);
  } catch (const json::exception& e) {
    problem = e.what();
    return false;
  }
  json* node = &doc;
  std::vector<std::string> tokens;
  for (json::json_pointer p = parsed; !p.empty(); p.pop_back()) tokens.insert(tokens.begin(), p.back());
  for (const std::string& t : tokens) {
    if (node->is_null()) *node = json::object();
    if (node->is_object()) {
      node = &(*node)[t];
    } else if (node->is_array()) {
      int64_t i = -1;
      if (t == "-") i = static_cast<int64_t>(node->size());
      else if (!Flags::parse_integer(t, i) || (t.size() > 1 && t[0] == '0')) i = -1;
      if (i < 0 || i > static_cast<int64_t>(node->size())) {
        problem = "'" + t + "' is not an index of an array of " + std::to_string(node->size()) + " (0 to its size)";
        return false;
      }
      if (i == static_cast<int64_t>(node->size())) node->push_back(nullptr);
      node = &(*node)[static_cast<size_t>(i)];
    } else {
      problem = "'" + t + "' goes inside a " + std::string(node->type_name()) + ", which has no members";
      return false;
    }
  }
  *node = value;
  return true;
}

std::string value_label(const json& v) { return v.is_string() ? v.get<std::string>() : safe_dump(v); }

}  // namespace

int cmd_sweep(const Args& args) {
  std::string base, out;
  std::vector<Axis> axes;
  bool zip = false;
  std::vector<std::string> sets, bases;
  std::string problem;
  Flags flags("sweep");
  CommandBudget budget("sweep");
  budget.flag(flags).texts("--set", &sets).boolean("--zip", &zip).text("--out", &out).positional(&bases, 1);
  if (!flags.parse(args, problem)) return usage_error(problem);
  for (const std::string& spec : sets) {
    Axis a;
    if (!parse_axis(spec, a, problem)) return usage_error(problem);
    axes.push_back(std::move(a));
  }
  if (!bases.empty()) base = bases[0];
  if (base.empty()) return usage_error("sweep needs a BASE scenario (a file, '-', or a scenario preset id)");
  if (axes.empty()) return usage_error("sweep needs at least one --set PATH=v1,v2,...");

  // BASE: a file when one exists at that path, otherwise a scenario preset id.
  std::string text;
  if (!read_file(base, text)) {
    const json p = read_engine_envelope(api::get_preset("scenarios", base));
    if (!p["ok"].get<bool>()) {
      std::cerr << "error [io_error] at '': " << base << " is neither a readable file nor a scenario preset\n";
      return 1;
    }
    text = safe_dump(p["result"]);
  }
  json scenario;
  try {
    scenario = parse_json_document(text, base);
  } catch (const SightlineError& e) {
    return report_error(e);
  }
  if (!scenario.is_object()) {
    std::cerr << "error [type] at '': the base scenario must be a JSON object\n";
    return 1;
  }
  const std::string base_id = scenario.value("id", std::string("sweep"));

  // The number of points, refused past kMaxSweepPoints before any is written
  // (a product of axis sizes that would overflow is refused the same way).
  uint64_t count = 1;
  if (zip) {
    count = axes.front().values.size();
    for (const Axis& a : axes)
      if (a.values.size() != count) return usage_error("--zip needs every --set to have the same number of values");
  } else {
    for (const Axis& a : axes) {
      if (count > kMaxSweepPoints / a.values.size() + 1) {
        count = kMaxSweepPoints + 1;
        break;
      }
      count *= a.values.size();
    }
  }
  if (count > kMaxSweepPoints)
    return usage_error("sweep: the grid has more than " + std::to_string(kMaxSweepPoints) +
                       " points; split it (several sweeps, or --zip)");
  // Every pointer must be settable in the base scenario before any line is written.
  json first = scenario;
  for (const Axis& a : axes) {
    if (!set_at_pointer(first, a.pointer, a.values.front(), problem)) {
      std::cerr << "error [invalid_value] at '" << a.pointer << "': cannot set it in the base scenario: " << problem << "\n";
      return 1;
    }
  }
  // The sweep's work: its points times the bytes of a line (the first point's).
  try {
    const double line_bytes = static_cast<double>(safe_dump(first).size());
    budget.add(static_cast<double>(count) * line_bytes / kSweepBytesPerUnit,
               std::to_string(count) + " points of about " + std::to_string(static_cast<int64_t>(line_bytes)) +
                   " bytes each, from " + base);
  } catch (const SightlineError& e) {
    return report_error(e);
  }

  // Points are written as they are made: memory does not grow with the grid.
  std::ofstream file;
  std::ostream* const output = open_output_stream(out, file);
  if (!output) return 1;
  std::ostream& os = *output;
  std::vector<size_t> index(axes.size(), 0);
  for (uint64_t k = 0; k < count; ++k) {
    // Grid order: the last --set varies fastest.
    if (!zip) {
      uint64_t rest = k;
      for (size_t a = axes.size(); a-- > 0;) {
        index[a] = static_cast<size_t>(rest % axes[a].values.size());
        rest /= axes[a].values.size();
      }
    } else {
      for (size_t& i : index) i = static_cast<size_t>(k);
    }
    json s = scenario;
    std::string id = base_id;
    for (size_t a = 0; a < axes.size(); ++a) {
      const json& v = axes[a].values[index[a]];
      if (!set_at_pointer(s, axes[a].pointer, v, problem)) {
        std::cerr << "error [invalid_value] at '" << axes[a].pointer << "': cannot set it in the base scenario: " << problem
                  << "\n";
        return 1;
      }
      id += (a == 0 ? " " : ",") + axes[a].name + "=" + value_label(v);
    }
    s["id"] = id;
    os << safe_dump(s) << "\n";
    if (!os) break;
  }
  os.flush();
  if (!os) {
    std::cerr << "error [io_error] at '': writing the sweep failed\n";
    return 1;
  }
  return 0;
}

}  // namespace sightline::cli
