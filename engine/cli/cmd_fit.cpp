// sightline fit: imports benchmark result files and fits a cluster calibration.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>

#include "api/calibration_fit.hpp"
#include "cli/cli_common.hpp"
#include "cli/flags.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"

namespace sightline::cli {

namespace {

void print_fit_table(const json& cal) {
  const json& f = cal["factors"];
  const json& se = cal["fit"]["standard_errors"];
  // Each factor with its standard error, or why the runs leave it alone.
  auto factor = [&](const char* label, const char* key) {
    std::cout << label << f[key].get<double>();
    if (se[key].is_number()) std::cout << "  (± " << se[key].get<double>() << ")";
    else std::cout << "  (not determined by these runs: no correction)";
    std::cout << "\n";
  };
  std::cout << "calibration '" << cal["id"].get<std::string>() << "'\n";
  factor("  compute efficiency scale  ", "compute_efficiency_scale");
  factor("  memory efficiency scale   ", "memory_efficiency_scale");
  factor("  comm efficiency scale     ", "comm_efficiency_scale");
  factor("  host time per step (us)   ", "host_us_per_step");
  std::cout << "\n";
  std::cout << "run                                   metric  measured  uncalibrated  calibrated   err(uncal)  err(cal)\n";
  for (const json& r : cal["fit"]["in_sample"]["runs"]) {
    for (const std::string m : {"ttft", "tpot"}) {
      const std::string key = m + "_mean_ms";
      std::cout << std::left << std::setw(38) << (r["file"].get<std::string>() + r["where"].get<std::string>()).substr(0, 37)
                << std::setw(8) << m << std::right << std::fixed << std::setprecision(2) << std::setw(9)
                << r["measured"][key].get<double>() << std::setw(14) << r["uncalibrated"][key].get<double>()
                << std::setw(12) << r["calibrated"][key].get<double>() << std::setw(12) << std::setprecision(1)
                << 100 * r["error_uncalibrated"][m].get<double>() << "%" << std::setw(9)
                << 100 * r["error_calibrated"][m].get<double>() << "%\n";
    }
  }
  std::cout << std::setprecision(1) << "median |error|: uncalibrated "
            << 100 * cal["fit"]["in_sample"]["median_abs_error_uncalibrated"].get<double>() << "%, calibrated "
            << 100 * cal["fit"]["in_sample"]["median_abs_error_calibrated"].get<double>() << "%";
  const json& h = cal["fit"]["held_out"];
  if (h.is_object()) std::cout << ", held-out (factors fitted without them) " << 100 * h["median_abs_error"].get<double>() << "%";
  std::cout << "\n";
}

}  // namespace

int cmd_fit(const Args& args) {
  std::vector<std::string> files, model_of;
  std::string base_file, out, id = "my-cluster", format_in, output = "table", problem;
  bool import_only = false;
  Flags flags("fit");
  flags.text("--base", &base_file).text("--out", &out).text("--id", &id)
      .text("--bench-format", &format_in, {"vllm", "sglang", "guidellm", "genai-perf", "mlperf"})
      .text("--format", &output, {"table", "json"}).boolean("--import-only", &import_only)
      .texts("--model-of", &model_of).positional(&files, 1000);
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (files.empty()) return usage_error("fit takes at least one BENCH_FILE");
  if (!import_only && base_file.empty()) return usage_error("fit needs --base SCENARIO.json (the deployment the runs were measured on)");
  // --model-of FILE=MODEL: FILE's runs were measured with another model preset
  // on the same cluster and stack (e.g. a small model, whose steps are mostly
  // host time); they are replayed on the base scenario with that model.
  std::map<std::string, std::string> replay_model;
  for (const std::string& m : model_of) {
    const size_t eq = m.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == m.size())
      return usage_error("--model-of takes FILE=MODEL (a model preset), got '" + m + "'");
    const std::string file = m.substr(0, eq);
    if (std::find(files.begin(), files.end(), file) == files.end())
      return usage_error("--model-of names '" + file + "', which is not one of the BENCH_FILEs");
    replay_model[file] = m.substr(eq + 1);
  }
  try {
    std::vector<api::BenchRun> runs;
    std::string source;
    for (const std::string& f : files) {
      std::string text;
      if (!read_file(f, text)) fail("io_error", "", "cannot read " + f);
      for (api::BenchRun& r : api::read_bench_file(f, text, format_in)) {
        if (replay_model.count(f)) r.replay_model = replay_model[f];
        runs.push_back(std::move(r));
      }
      source += (source.empty() ? "" : ", ") + f;
    }
    if (import_only) {
      json a = json::array();
      for (const api::BenchRun& r : runs) a.push_back(r.to_json());
      std::cout << safe_dump(a, 2) << "\n";
      return 0;
    }
    std::string base_text;
    if (!read_file(base_file, base_text)) fail("io_error", "", "cannot read " + base_file);
    const json base = json::parse(base_text, nullptr, false);
    if (base.is_discarded()) fail(error_code::kParse, "", base_file + ": not valid JSON");
    const json cal = api::fit_cluster_calibration(base, runs, id, "sightline fit of " + source + " on " + base_file);
    if (!out.empty()) write_output(out, safe_dump(cal, 2) + "\n");
    if (output == "json") std::cout << safe_dump(cal, 2) << "\n";
    else print_fit_table(cal);
    if (!out.empty() && output == "table") std::cout << "wrote " << out << "\n";
    return 0;
  } catch (const SightlineError& e) {
    return report_error(e);
  }
}

}  // namespace sightline::cli
