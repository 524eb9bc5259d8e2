// sightline report-training: predicted vs measured training throughput for the
// published measurements in ../shared/reference/measurements.md section 4
// (Megatron-LM GPT-3 175B on 1,024 A100s; torchtitan Llama on 64 A100s;
// activation-checkpointing overheads). The configurations are scenario presets
// (presets/scenarios/V.*.json). These are checks, not fits: no constant of the
// engine is tuned to them.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>

#include "cli/cli_common.hpp"
#include "cli/command_budget.hpp"
#include "cli/flags.hpp"
#include "cli/validation_runs.hpp"

namespace sightline::cli {

namespace {

enum class Kind {
  MegatronTflopsFullRecompute,  // Megatron's TFLOP/s/GPU convention, full recomputation counted
  TokensPerGpu,
  TokensRatio,  // tokens/s of preset / preset_b
  MfuRatio,
};

struct Row {
  const char* id;
  const char* what;
  const char* preset;
  const char* preset_b;
  Kind kind;
  double measured;
  const char* unit;
  const char* source;
};

const std::vector<Row>& rows() {
  static const std::vector<Row> list = {
      {"M2", "GPT-3 175B, 1024 A100, TP8 PP16 DP8, GBS 1536", "V.M2", nullptr, Kind::MegatronTflopsFullRecompute,
       138.0, "TFLOP/s/GPU", "Megatron-LM README (measurements.md 4a M2)"},
      {"TT1", "Llama 3 8B, 64 A100 FSDP, bs1, selective layer AC", "V.TT1", nullptr, Kind::TokensPerGpu, 2904,
       "tokens/s/GPU", "torchtitan docs/performance.md (4d)"},
      {"TT2", "Llama 3 8B, 64 A100 FSDP, bs1, selective op AC", "V.TT2", nullptr, Kind::TokensPerGpu, 2973,
       "tokens/s/GPU", "torchtitan (4d)"},
      {"TT3", "Llama 3 70B, 64 A100 FSDP, bs1, full AC", "V.TT3", nullptr, Kind::TokensPerGpu, 331, "tokens/s/GPU",
       "torchtitan (4d)"},
      {"TT4", "Llama 2 13B, 64 A100 FSDP, bs2, no AC", "V.TT4", nullptr, Kind::TokensPerGpu, 2162, "tokens/s/GPU",
       "torchtitan (4d)"},
      {"TT5", "Llama 2 13B, 64 A100 FSDP, bs2, selective layer AC", "V.TT5", nullptr, Kind::TokensPerGpu, 1914,
       "tokens/s/GPU", "torchtitan (4d)"},
      {"TT6", "Llama 2 13B, 64 A100 FSDP, bs2, selective op AC", "V.TT6", nullptr, Kind::TokensPerGpu, 1904,
       "tokens/s/GPU", "torchtitan (4d)"},
      {"TT7", "Llama 2 70B, 64 A100 FSDP, bs1, selective op AC", "V.TT7", nullptr, Kind::TokensPerGpu, 355,
       "tokens/s/GPU", "torchtitan (4d)"},
      {"TT8", "Llama 2 70B, 64 A100 FSDP, bs2, full AC", "V.TT8", nullptr, Kind::TokensPerGpu, 353, "tokens/s/GPU",
       "torchtitan (4d)"},
      {"TR6", "AC overhead: Llama 2 13B selective layer / no AC", "V.TT5", "V.TT4", Kind::TokensRatio, 1914.0 / 2162.0,
       "ratio", "torchtitan (4e TR6)"},
      {"M4", "530B, 2240 A100: selective+SP / full recompute MFU", "V.M4a", "V.M4b", Kind::MfuRatio, 54.2 / 42.1,
       "ratio", "Korthikanti et al. 2022 (4a M4, 4e TR7)"},
  };
  return list;
}

bool run_preset(const std::string& id, json& result, json& scenario) {
  std::string text;
  json error;
  if (!preset_text("scenarios", id, text, error) || !run_scenario_text(text, result, scenario, error)) {
    report_error(json{{"ok", false}, {"error", error}});
    return false;
  }
  return true;
}

}  // namespace

int cmd_report_training(const Args& args) {
  std::string format = "table";
  std::string problem;
  Flags flags("report-training");
  CommandBudget budget("report-training");
  budget.flag(flags).text("--format", &format, {"table", "json"});
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (format != "table" && format != "json") return usage_error("unknown format '" + format + "'");
  // The rows' runs, estimated as `run` estimates them, before any runs.
  try {
    for (const Row& row : rows())
      for (const char* id : {row.preset, row.preset_b}) {
        std::string text;
        json error;
        if (id && preset_text("scenarios", id, text, error))
          budget.add(run_work_units(read_engine_envelope(text), false), std::string("row ") + row.id + ", preset " + id);
      }
  } catch (const SightlineError& e) {
    return report_error(e);
  }
  json out = json::array();
  std::vector<double> abs_errors, signed_errors;
  std::string tier;
  for (const Row& row : rows()) {
    json ra, sa, rb, sb;
    if (!run_preset(row.preset, ra, sa)) return 1;
    if (row.preset_b && !run_preset(row.preset_b, rb, sb)) return 1;
    tier = ra["cost_tier"].get<std::string>();
    double predicted = 0;
    switch (row.kind) {
      case Kind::MegatronTflopsFullRecompute:
        predicted = megatron_tflops_per_gpu(sa, ra);
        break;
      case Kind::TokensPerGpu: predicted = ra["metrics"]["tokens_per_s_per_gpu"].get<double>(); break;
      case Kind::TokensRatio:
        predicted = ra["metrics"]["tokens_per_s"].get<double>() / rb["metrics"]["tokens_per_s"].get<double>();
        break;
      case Kind::MfuRatio: predicted = ra["metrics"]["mfu_pct"].get<double>() / rb["metrics"]["mfu_pct"].get<double>(); break;
    }
    const double err = (predicted - row.measured) / row.measured;
    abs_errors.push_back(std::fabs(err));
    signed_errors.push_back(err);
    out.push_back({{"id", row.id},
                   {"what", row.what},
                   {"presets", row.preset_b ? json::array({row.preset, row.preset_b}) : json::array({row.preset})},
                   {"unit", row.unit},
                   {"measured", row.measured},
                   {"predicted", predicted},
                   {"error_pct", 100.0 * err},
                   {"mfu_pct", ra["metrics"]["mfu_pct"]},
                   {"memory_fits", ra["memory_per_gpu"]["fits"]},
                   {"source", row.source}});
  }
  const double median_abs = median(abs_errors);
  // Positive: predictions faster (more optimistic) than measured.
  const double median_signed = median(signed_errors);
  if (format == "json") {
    std::cout << json{{"rows", out}, {"median_abs_error_pct", 100.0 * median_abs},
                     {"median_signed_error_pct", 100.0 * median_signed}, {"target_pct", 10.0}, {"target_signed_pct", 5.0}, {"cost_tier", tier}}
                     .dump(2, ' ', false, json::error_handler_t::replace)
              << "\n";
    return 0;
  }
  std::cout << "Training: predicted vs measured (../shared/reference/measurements.md section 4; cost tier " << tier
            << ")\n\n";
  std::cout << std::left << std::setw(5) << "id" << std::setw(54) << "configuration" << std::right << std::setw(11)
            << "measured" << std::setw(11) << "predicted" << std::setw(9) << "error" << "  unit\n";
  for (const json& r : out) {
    std::cout << std::left << std::setw(5) << r["id"].get<std::string>() << std::setw(54) << r["what"].get<std::string>()
              << std::right << std::setw(11) << fixed(r["measured"].get<double>(), r["unit"] == "ratio" ? 3 : 1)
              << std::setw(11) << fixed(r["predicted"].get<double>(), r["unit"] == "ratio" ? 3 : 1) << std::setw(8)
              << fixed(r["error_pct"].get<double>(), 1) << "%  " << r["unit"].get<std::string>() << "\n";
  }
  std::cout << "\nmedian absolute error: " << fixed(100.0 * median_abs, 1) << "% (target <= 10%)\n";
  std::cout << "median signed error: " << fixed(100.0 * median_signed, 1)
            << "% (target within +-5%; positive = optimistic)\n";
  std::cout << "Presets V.* hold each configuration and its assumptions; nothing in the engine is fitted to these "
               "results.\n";
  return 0;
}

}  // namespace sightline::cli
