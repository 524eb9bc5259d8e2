#include <algorithm>
#include <atomic>
#include <exception>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/error_boundary.hpp"
#include "core/json_text.hpp"
#include "api/api.hpp"
#include "cli/cli_common.hpp"

namespace sightline::cli {

const char* const kUsage =
    "usage:\n"
    "  sightline run FILE|--preset ID [--format table|json|csv|envelope] [--central-only | --full-intervals] [--max-work-units N]\n"
    "                [--calibration CLUSTER.json]\n"
    "  sightline fit BENCH_FILE... --base SCENARIO.json [--out CLUSTER.json] [--id ID] [--format table|json]\n"
    "                [--bench-format vllm|sglang|guidellm|genai-perf|aiperf|mlperf] [--import-only] [--model-of BENCH_FILE=MODEL]...\n"
    "                [--prompt-tokens BENCH_FILE=N]... [--max-work-units N] [--holdout-every N]\n"
    "  sightline validate FILE\n"
    "  sightline inspect-model FILE [--json]   (FILE: a Hugging Face config.json or a model object)\n"
    "  sightline presets [models|gpus|interconnects|scenarios|calibrations|comm_calibrations|stacks] [--format json]\n"
    "  sightline ops --model ID --gpu ID --phase prefill|decode --tokens N [--batch B] [--kv-len L]\n"
    "                [--tp N] [--tier auto|target-measured|cross-generation|roofline] [--training] [--dtype D] [--weights D] [--format json|table]\n"
    "  sightline explain-step FILE|--preset ID --batch N [--kv-len L] [--prompt-tokens P] [--format table|json]\n"
    "                (one decode step of a serving scenario, by mechanism: kernels, CUDA-graph padding, expert imbalance,\n"
    "                all-to-all, host)\n"
    "  sightline explain-train-step FILE|--preset ID [--format table|json] [--max-work-units N]\n"
    "  sightline comm --collective NAME --gpus N [--nodes M] --interconnect ID [--intra-node ID | --gpu ID] --bytes N [--format json|table]\n"
    "  sightline calibrate --gpu ID [--vidur-dir DIR --vidur-gpu FOLDER] [--csv FILE]... [--fused-csv FILE]... [--base ID|nearest|none] [--compute-from ID] [--out FILE]\n"
    "                [--max-work-units N]\n"
    "  sightline calibrate-comm --interconnect ID [--vidur-dir DIR --vidur-system NAME] [--csv FILE]... [--shape-from FILE] [--out FILE] [--max-work-units N]\n"
    "  sightline calibrate-comm --csv FILE... --transfer-errors-out FILE [--max-work-units N]\n"
    "  sightline report-accuracy [--data DIR] [--measured DIR] [--format table|json] [--transfer-errors-out FILE] [--max-work-units N]\n"
    "  sightline report-training [--format table|json] [--max-work-units N]\n"
    "  sightline report-e2e [--format table|json] [--check all|metric|capacity] [--rows ID,...] [--by all|kind|vendor|stack|layout|none]\n"
    "                [--search-max-requests N] [--max-work-units N]\n"
    "  sightline sweep BASE --set PATH=v1,v2,... [--set ...] [--zip] [--out FILE] [--max-work-units N]\n"
    "  sightline batch IN.jsonl [--jobs N] [--shard i/N] [--out FILE] [--central-only] [--max-work-units N]\n"
    "  sightline merge SHARD.jsonl... [--out FILE]\n"
    "  sightline search FILE [--jobs N] [--format table|json] [--out FILE] [--top N] [--confirm REQUESTS] [--no-reuse] [--max-work-units N]\n"
    "  sightline check-capacity FILE|--preset ID|--all [--scale 20] [--hold-only] [--jobs N] [--format table|json|markdown]\n"
    "                [--max-work-units N]\n"
    "  sightline registries\n"
    "  sightline version\n"
    "FILE may be '-' for standard input. --max-work-units (1 to 10000000000) raises a run's work budget\n"
    "(default 40000000; a scenario's own limits.max_work_units may also go up to 10000000000 here), fit's\n"
    "(default 12000000 replay events) and every other command's (default 80000000, about 60 s of CPU; docs/cli.md).\n";

int usage_error(const std::string& message) {
  std::cerr << "sightline: " << message << "\n" << kUsage;
  return 2;
}

namespace {

// Reads `in` to its end, or fails past the cap (a stream has no size to ask).
void read_capped(std::istream& in, const std::string& name, std::string& out) {
  out.clear();
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    out.append(buffer, static_cast<size_t>(in.gcount()));
    if (out.size() > kMaxInputFileBytes) fail_input_file_too_big(name);
  }
}

}  // namespace

void fail_input_file_too_big(const std::string& name) {
  fail(error_code::kLimitExceeded, "",
       printable(name) + ": the file is over " + std::to_string(kMaxInputFileBytes >> 20) +
           " MiB, the most an input file may hold");
}

bool read_file(const std::string& path, std::string& out) {
  if (path == "-") {
    read_capped(std::cin, "standard input", out);
    return true;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  read_capped(f, path, out);
  return true;
}

void read_input_file(const std::string& path, std::string& out) {
  if (!read_file(path, out)) fail("io_error", "", "cannot read " + printable(path));
}

int read_scenario_text(const std::string& file, const std::string& preset, std::string& out) {
  if (!preset.empty()) {
    const json p = read_engine_envelope(sightline::api::get_preset("scenarios", preset));
    if (!p["ok"].get<bool>()) return report_error(p);
    out = safe_dump(p["result"]);
    return 0;
  }
  if (read_file(file, out)) return 0;
  std::cerr << "error [io_error] at '': cannot read " << file << "\n";
  return 1;
}

int report_error(const json& envelope) {
  const json& e = envelope["error"];
  std::cerr << "error [" << e["code"].get<std::string>() << "] at '" << e["path"].get<std::string>()
            << "': " << e["message"].get<std::string>() << "\n";
  return 1;
}

int report_error(const SightlineError& e) {
  std::cerr << "error [" << e.code() << "] at '" << e.path() << "': " << e.what() << "\n";
  return 1;
}

void write_output(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::cout << text;
    return;
  }
  std::ofstream f(path);
  if (!f) fail("io_error", "", "cannot write " + path);
  f << text;
}

std::ostream* open_output_stream(const std::string& path, std::ofstream& file) {
  if (path.empty()) return &std::cout;
  file.open(path, std::ios::binary);
  if (!file) {
    std::cerr << "error [io_error] at '': cannot write " << path << "\n";
    return nullptr;
  }
  return &file;
}

std::string file_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

const MetricInfo& catalogued(MetricKind kind, const std::string& id) {
  const MetricInfo* m = find_metric(kind, id);
  if (m == nullptr)
    throw std::logic_error(std::string("CLI table names metric '") + id + "' of kind " + metric_kind_name(kind) +
                           ", which the metric catalogue lacks");
  return *m;
}

const json& catalogued_value(const MetricInfo& m, const json& result) {
  static const json null_value;
  const json* v = metric_value(m, result);
  return v == nullptr ? null_value : *v;
}

const char* memory_label(MetricKind kind, const std::string& id) {
  const MemoryPartInfo* m = find_memory_part(kind, id);
  if (m == nullptr)
    throw std::logic_error(std::string("CLI table names memory part '") + id + "' of kind " + metric_kind_name(kind) +
                           ", which the catalogue lacks");
  return m->label;
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

std::string value_with_interval(const json& metric, int digits) {
  std::string s = fixed(metric["value"].get<double>(), digits);
  if (metric.contains("low"))
    s += " [" + fixed(metric["low"].get<double>(), digits) + ", " + fixed(metric["high"].get<double>(), digits) + "]";
  return s;
}

const json* find_key_metric(const json& key_metrics, const std::string& id) {
  if (!key_metrics.is_array()) return nullptr;
  for (const json& m : key_metrics)
    if (m["id"] == id) return &m;
  return nullptr;
}

// What the importer understood of a pasted config.json, above the table where it
// is read, not only in the JSON (issue 35): a wrong reading must be visible.
void print_model_import(const json& result, const json& understood) {
  if (!result.contains("model") || !result["model"].contains("import")) return;
  const json& m = result["model"];
  const json& im = m["import"];
  auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  std::cout << "imported  config.json read as " << text(im.value("family", json(""))) << ": "
            << fixed(m.value("params_B", 0.0), 2) << " B total, " << fixed(m.value("active_params_B", 0.0), 2)
            << " B active; " << text(im.value("precision_applied", json(""))) << "\n";
  // Layers by kind, heads, experts, parameters, KV bytes per token and weights (issue 35: the whole
  // reading where people look, not only in inspect-model or the JSON).
  if (understood.is_object()) print_understood_model(understood, "  ", false);
  for (const json& x : im.value("ignored_parts", json::array())) std::cout << "  ignored " << text(x) << "\n";
  for (const json& x : im.value("ignored_why", json::array())) std::cout << "  ignored keys " << text(x) << "\n";
  for (const json& x : im.value("warnings", json::array())) std::cout << "warning: " << text(x) << "\n";
}

void print_result_table(const json& result, const json& understood) {
  const std::string kind = result.value("kind", "");
  if (kind == "serving_latency" || kind == "serving_simulation" || kind == "training") print_model_import(result, understood);
  if (kind == "serving_latency") print_latency_table(result);
  if (kind == "serving_simulation") print_serving_table(result);
  if (kind == "training") print_training_table(result);
  if (kind == "serving_latency" || kind == "serving_simulation" || kind == "training") return print_interval_section(result);
  std::cout << safe_dump(result, 2) << "\n";  // kinds without a table of their own
}

void parallel_for(size_t n, int64_t jobs, const std::function<void(size_t)>& task) {
  std::atomic<size_t> next{0};
  // An exception on a worker thread would end the process (std::terminate):
  // the first one is kept, the other workers stop taking tasks, and it is
  // rethrown here, on the command's thread, inside its error boundary.
  std::mutex failed_mutex;
  std::exception_ptr failed;
  auto worker = [&] {
    try {
      for (size_t k = next.fetch_add(1); k < n; k = next.fetch_add(1)) {
        test_throw_point("cli:parallel_for");
        task(k);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failed_mutex);
      if (!failed) failed = std::current_exception();
      next.store(n);
    }
  };
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < std::min<int64_t>(jobs, static_cast<int64_t>(n)); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (failed) std::rethrow_exception(failed);
}

}  // namespace sightline::cli
