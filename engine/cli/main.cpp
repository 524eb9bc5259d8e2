// sightline: the native command-line front end of the engine API.
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/api.hpp"

using json = nlohmann::json;

namespace {

const char* kUsage =
    "usage:\n"
    "  sightline run FILE|--preset ID [--format table|json|csv|envelope]\n"
    "  sightline validate FILE\n"
    "  sightline presets [models|gpus|interconnects|scenarios] [--format json]\n"
    "  sightline version\n"
    "FILE may be '-' for standard input.\n";

int usage_error(const std::string& message) {
  std::cerr << "sightline: " << message << "\n" << kUsage;
  return 2;
}

bool read_file(const std::string& path, std::string& out) {
  if (path == "-") {
    std::ostringstream s;
    s << std::cin.rdbuf();
    out = s.str();
    return true;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream s;
  s << f.rdbuf();
  out = s.str();
  return true;
}

// Prints an error envelope to stderr; returns the exit code for input errors.
int report_error(const json& envelope) {
  const json& e = envelope["error"];
  std::cerr << "error [" << e["code"].get<std::string>() << "] at '" << e["path"].get<std::string>()
            << "': " << e["message"].get<std::string>() << "\n";
  return 1;
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

void print_latency_table(const json& r) {
  const json& m = r["metrics"];
  const json& mem = r["memory_per_gpu"];
  std::cout << "scenario  " << r["scenario"]["id"].get<std::string>() << "  " << r["scenario"]["title"].get<std::string>()
            << "\n";
  std::cout << "model     " << r["model"]["name"].get<std::string>() << " (" << fixed(r["model"]["params_B"], 2)
            << " B params)\n";
  std::cout << "gpus      " << r["deployment"]["gpus"] << " x " << r["deployment"]["gpu"].get<std::string>()
            << "  tp=" << r["deployment"]["tp"] << " pp=" << r["deployment"]["pp"]
            << "  cost tier: " << r["cost_tier"].get<std::string>() << "\n\n";
  std::cout << "latency\n";
  std::cout << "  TTFT                 " << std::setw(12) << fixed(m["ttft_ms"], 3) << " ms\n";
  std::cout << "  TPOT                 " << std::setw(12) << fixed(m["tpot_ms"], 3) << " ms\n";
  std::cout << "  E2E                  " << std::setw(12) << fixed(m["e2e_ms"], 3) << " ms\n";
  std::cout << "  output tokens/s      " << std::setw(12) << fixed(m["output_tokens_per_s"], 1) << "\n";
  std::cout << "  prefill tokens/s     " << std::setw(12) << fixed(m["prefill_tokens_per_s"], 1) << "\n";
  std::cout << "  decode floor (weights/HBM BW) " << fixed(r["floors"]["decode_weight_read_ms"], 3) << " ms\n\n";
  std::cout << "memory per GPU (GiB)\n";
  for (const char* k : {"capacity_GiB", "weights_GiB", "kv_cache_GiB", "activations_GiB", "runtime_overhead_GiB",
                        "free_GiB"}) {
    std::string label = k;
    label = label.substr(0, label.size() - 4);
    std::cout << "  " << std::left << std::setw(20) << label << std::right << std::setw(12) << fixed(mem[k], 3)
              << "\n";
  }
  std::cout << "\ndecode step breakdown (per token)\n";
  for (const json& op : r["breakdown"]["decode_per_step"]) {
    std::cout << "  " << std::left << std::setw(22) << op["name"].get<std::string>() << std::right << std::setw(12)
              << fixed(op["time_us"], 2) << " us  " << op["bound"].get<std::string>() << "\n";
  }
}

// Flattens nested objects into dotted keys for CSV.
void flatten(const json& j, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) flatten(j[i], prefix + "." + std::to_string(i), out);
  } else {
    out.emplace_back(prefix, j.is_string() ? j.get<std::string>() : j.dump());
  }
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

int cmd_run(const std::vector<std::string>& args) {
  std::string file, preset, format = "table";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--preset" && i + 1 < args.size()) preset = args[++i];
    else if (args[i] == "--format" && i + 1 < args.size()) format = args[++i];
    else if (file.empty() && (args[i] == "-" || args[i].rfind("--", 0) != 0)) file = args[i];
    else return usage_error("unexpected argument '" + args[i] + "'");
  }
  if (format != "table" && format != "json" && format != "csv" && format != "envelope")
    return usage_error("unknown format '" + format + "'");
  if (file.empty() == preset.empty()) return usage_error("run takes exactly one of FILE or --preset ID");
  std::string text;
  if (!preset.empty()) {
    json p = json::parse(sightline::api::get_preset("scenarios", preset));
    if (!p["ok"].get<bool>()) return report_error(p);
    text = p["result"].dump();
  } else if (!read_file(file, text)) {
    std::cerr << "error [io_error] at '': cannot read " << file << "\n";
    return 1;
  }
  const std::string raw = sightline::api::run_scenario(text);
  json envelope = json::parse(raw);
  if (!envelope["ok"].get<bool>()) return report_error(envelope);
  if (format == "envelope") {  // the API's bytes, as the wasm module returns them
    std::cout << raw << "\n";
    return 0;
  }
  const json& r = envelope["result"];
  if (format == "json") {
    std::cout << envelope.dump(2) << "\n";
  } else if (format == "csv") {
    std::vector<std::pair<std::string, std::string>> rows;
    flatten(r, "", rows);
    std::cout << "key,value\n";
    for (const auto& [k, v] : rows) std::cout << csv_field(k) << "," << csv_field(v) << "\n";
  } else {
    print_latency_table(r);
  }
  return 0;
}

int cmd_validate(const std::vector<std::string>& args) {
  if (args.size() != 1) return usage_error("validate takes one FILE");
  std::string text;
  if (!read_file(args[0], text)) {
    std::cerr << "error [io_error] at '': cannot read " << args[0] << "\n";
    return 1;
  }
  json envelope = json::parse(sightline::api::validate_scenario(text));
  if (!envelope["ok"].get<bool>()) return report_error(envelope);
  std::cout << "ok\n";
  return 0;
}

int cmd_presets(const std::vector<std::string>& args) {
  std::string kind, format = "table";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--format" && i + 1 < args.size()) format = args[++i];
    else if (kind.empty()) kind = args[i];
    else return usage_error("unexpected argument '" + args[i] + "'");
  }
  if (format != "table" && format != "json") return usage_error("unknown format '" + format + "'");
  std::vector<std::string> kinds;
  if (kind.empty()) kinds = json::parse(sightline::api::list_presets(""))["result"].get<std::vector<std::string>>();
  else kinds.push_back(kind);
  json all = json::object();
  for (const auto& k : kinds) {
    json envelope = json::parse(sightline::api::list_presets(k));
    if (!envelope["ok"].get<bool>()) return report_error(envelope);
    all[k] = envelope["result"];
  }
  if (format == "json") {
    std::cout << (kind.empty() ? all : all[kind]).dump(2) << "\n";
    return 0;
  }
  for (const auto& k : kinds) {
    if (kind.empty()) std::cout << "# " << k << "\n";
    for (const json& p : all[k]) {
      std::string title = p.contains("title") ? p["title"].get<std::string>() : p.value("name", "");
      std::cout << p["id"].get<std::string>() << "\t" << title << "\n";
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  if (cmd == "run") return cmd_run(args);
  if (cmd == "validate") return cmd_validate(args);
  if (cmd == "presets") return cmd_presets(args);
  if (cmd == "version") {
    std::cout << json::parse(sightline::api::version())["result"].dump() << "\n";
    return 0;
  }
  return usage_error("unknown command '" + cmd + "'");
}
