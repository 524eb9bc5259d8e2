// sightline fit: imports benchmark result files and fits a cluster calibration.
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>

#include "cli/cli_common.hpp"
#include "cli/flags.hpp"
#include "fit/calibration_fit.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"

namespace sightline::cli {

namespace {

void print_fit_table(const json& cal) {
  const json& f = cal["factors"];
  const json& fit = cal["fit"];
  // Each factor with its standard error, or why the runs leave it at no correction.
  auto factor = [&](const char* label, const char* key) {
    std::cout << label;
    if (fit["standard_errors"][key].is_number())
      std::cout << f[key].get<double>() << "  (± " << fit["standard_errors"][key].get<double>() << ")";
    else
      std::cout << f[key].get<double>() << "  (held at no correction: " << fit["held_at_no_correction"][key].get<std::string>() << ")";
    std::cout << "\n";
  };
  std::cout << "calibration '" << cal["id"].get<std::string>() << "'\n";
  factor("  compute efficiency scale  ", "compute_efficiency_scale");
  factor("  memory efficiency scale   ", "memory_efficiency_scale");
  factor("  comm efficiency scale     ", "comm_efficiency_scale");
  factor("  host time per step (us)   ", "host_us_per_step");
  // The client-side constant: not a cost-model factor, reported beside them.
  std::cout << "  per-request latency (ms)  " << fit["request_latency_ms"].get<double>();
  if (fit["standard_errors"]["request_latency_ms"].is_number())
    std::cout << "  (± " << fit["standard_errors"]["request_latency_ms"].get<double>()
              << "; client, network and tokenizer time, added by run --calibration to every TTFT and E2E)\n";
  else
    std::cout << "  (held at 0: " << fit["held_at_no_correction"]["request_latency_ms"].get<std::string>() << ")\n";
  for (const json& w : fit["warnings"]) std::cout << "  warning: " << w.get<std::string>() << "\n";
  std::cout << "\n";
  std::cout << "run                                   metric          measured  uncalibrated  calibrated   err(uncal)  err(cal)\n";
  for (const json& r : fit["in_sample"]["runs"]) {
    for (const json& g : r["figures"]) {
      std::cout << std::left << std::setw(38) << (r["file"].get<std::string>() + r["where"].get<std::string>()).substr(0, 37)
                << std::setw(16) << g["metric"].get<std::string>() << std::right << std::fixed << std::setprecision(2)
                << std::setw(9) << g["measured"].get<double>() << std::setw(14) << g["uncalibrated"].get<double>()
                << std::setw(12) << g["calibrated"].get<double>() << std::setw(12) << std::setprecision(1)
                << 100 * g["error_uncalibrated"].get<double>() << "%" << std::setw(9)
                << 100 * g["error_calibrated"].get<double>() << "%\n";
    }
  }
  std::cout << std::setprecision(1) << "median |error|: uncalibrated "
            << 100 * fit["in_sample"]["median_abs_error_uncalibrated"].get<double>() << "%, calibrated "
            << 100 * fit["in_sample"]["median_abs_error_calibrated"].get<double>() << "%";
  const json& h = fit["held_out"];
  if (fit["held_out_skipped"].is_string())
    std::cout << ", no held-out runs (" << fit["held_out_skipped"].get<std::string>() << ")";
  else if (h.is_object())
    std::cout << ", held-out (factors fitted without them) " << 100 * h["median_abs_error"].get<double>()
              << "% (uncalibrated " << 100 * h["median_abs_error_uncalibrated"].get<double>() << "%)";
  std::cout << "\n";
  const json& loo = fit["leave_one_run_out"];
  if (loo.contains("skipped"))
    std::cout << "leave-one-run-out: not computed: " << loo["skipped"].get<std::string>() << "\n";
  else
    std::cout << "leave-one-run-out (each run predicted by the factors refitted without it): median |error| "
              << 100 * loo["median_abs_error"].get<double>() << "% (uncalibrated "
              << 100 * loo["median_abs_error_uncalibrated"].get<double>() << "%)\n";
  const json& on = fit["fitted_on"];
  std::cout << "fitted on: " << safe_dump(on) << "\n";
}

// FILE=VALUE flags (--model-of, --prompt-tokens): VALUE per benchmark file given.
std::map<std::string, std::string> per_file(const std::vector<std::string>& given, const char* flag,
                                            const std::vector<std::string>& files, std::string& problem) {
  std::map<std::string, std::string> out;
  for (const std::string& m : given) {
    const size_t eq = m.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == m.size()) {
      problem = std::string(flag) + " takes FILE=VALUE, got '" + m + "'";
      return out;
    }
    const std::string file = m.substr(0, eq);
    if (std::find(files.begin(), files.end(), file) == files.end()) {
      problem = std::string(flag) + " names '" + file + "', which is not one of the BENCH_FILEs";
      return out;
    }
    out[file] = m.substr(eq + 1);
  }
  return out;
}

// A benchmark or base file, refused past the size cap before it is read.
std::string read_input(const std::string& f) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(f, ec);
  if (!ec && size > fit::kMaxBenchFileBytes)
    fail(error_code::kLimitExceeded, "",
         f + ": the file is " + std::to_string(size >> 20) + " MiB; fit reads files up to " +
             std::to_string(fit::kMaxBenchFileBytes >> 20) + " MiB");
  std::string text;
  if (!read_file(f, text)) fail("io_error", "", "cannot read " + f);
  return text;
}

}  // namespace

int cmd_fit(const Args& args) {
  std::vector<std::string> files, model_of, prompt_of;
  std::string base_file, out, id = "my-cluster", format_in, output = "table", problem;
  bool import_only = false;
  int64_t max_work_units = fit::FitOptions::kDefaultWorkUnits;
  int64_t holdout_every = fit::FitOptions{}.holdout_every;
  Flags flags("fit");
  flags.text("--base", &base_file).text("--out", &out).text("--id", &id)
      .text("--bench-format", &format_in, fit::bench_formats())
      .text("--format", &output, {"table", "json"}).boolean("--import-only", &import_only)
      .texts("--model-of", &model_of).texts("--prompt-tokens", &prompt_of)
      .integer("--max-work-units", &max_work_units, 1, fit::FitOptions::kMaxWorkUnits)
      .integer("--holdout-every", &holdout_every, 0, 1000).positional(&files, 1000);
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (files.empty()) return usage_error("fit takes at least one BENCH_FILE");
  if (!import_only && base_file.empty()) return usage_error("fit needs --base SCENARIO.json (the deployment the runs were measured on)");
  // --model-of FILE=MODEL: FILE's runs were measured with another model preset
  // on the same cluster and stack (e.g. a small model, whose steps are mostly
  // host time); they are replayed on the base scenario with that model.
  std::map<std::string, std::string> replay_model = per_file(model_of, "--model-of", files, problem);
  // --prompt-tokens FILE=N: the mean prompt of FILE's runs, for files that do
  // not record it (MLPerf LoadGen summaries).
  std::map<std::string, std::string> prompt = per_file(prompt_of, "--prompt-tokens", files, problem);
  if (!problem.empty()) return usage_error(problem);
  try {
    std::vector<fit::BenchRun> runs;
    std::string source;
    for (const std::string& f : files) {
      for (fit::BenchRun& r : fit::read_bench_file(f, read_input(f), format_in)) {
        if (replay_model.count(f)) r.replay_model = replay_model[f];
        if (prompt.count(f)) {
          double n = 0;
          if (!csv_parse_decimal(prompt[f], n) || n < 1 || n > 1e7)
            return usage_error("--prompt-tokens " + f + "=N takes a number of tokens in [1, 1e7], got '" + prompt[f] + "'");
          if (r.prompt_tokens_mean)
            return usage_error("--prompt-tokens names " + f + ", which records its prompt lengths (" + r.prompt_source + ")");
          r.prompt_tokens_mean = n;
          r.prompt_source = "--prompt-tokens";
          r.used.push_back("--prompt-tokens " + f + "=" + prompt[f]);
        }
        runs.push_back(std::move(r));
      }
      source += (source.empty() ? "" : ", ") + f;
    }
    if (import_only) {
      json a = json::array();
      for (const fit::BenchRun& r : runs) a.push_back(r.to_json());
      std::cout << safe_dump(a, 2) << "\n";
      return 0;
    }
    fit::FitBase base;
    base.name = base_file;
    try {
      base.doc = parse_json_text(read_input(base_file));
    } catch (const SightlineError& e) {
      fail(e.code().c_str(), e.path(), base_file + ": " + e.what());
    }
    fit::FitOptions options;
    options.max_work_units = max_work_units;
    if (holdout_every == 1) return usage_error("--holdout-every N takes 0 (hold none out) or N >= 2 (every N-th run)");
    options.holdout_every = static_cast<int>(holdout_every);
    const json cal = fit::fit_cluster_calibration(base, runs, id, "sightline fit of " + source + " on " + base_file, options);
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
