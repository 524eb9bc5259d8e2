// sightline report-e2e: the development end-to-end check. Every end-to-end
// inference and training measurement of ../shared/reference/measurements.md
// that the engine can express is a row preset under presets/validation/ (its
// `source` names the row and every assumption). Each row runs its scenario
// (or a scenario preset) through the engine and compares one metric with the
// published figure. These rows check the model; no constant is fitted to them.
//
// Signed error is "optimism": predicted/measured − 1 for rates and ratios,
// measured/predicted − 1 for times, so a positive error always means the engine
// promises more speed than was measured, whatever the metric.
#include <cmath>
#include <iomanip>
#include <iostream>

#include "api/api.hpp"
#include "core/json_text.hpp"
#include "cli/cli_common.hpp"
#include "cli/flags.hpp"
#include "cli/validation_runs.hpp"

namespace sightline::cli {

namespace {

constexpr double kGoalMedianAbsPct = 10.0;
constexpr double kGoalMedianSignedPct = 5.0;

// Times: a latency mode's own metrics, or a simulation's latency summaries
// ("e2e_s.mean": the group before the first dot names the quantity).
bool lower_is_better(const std::string& metric) {
  const std::string head = metric.substr(0, metric.find('.'));
  return head == "ttft_ms" || head == "tpot_ms" || head == "e2e_ms" || head == "step_time_ms" || head == "e2e_s";
}

// Metric of one run; false with `why` when the result has no such metric.
bool extract(const std::string& metric, const json& resolved, const json& result, double& value, std::string& why) {
  if (metric == "megatron_tflops_per_gpu") {
    if (result.value("kind", "") != "training") {
      why = "megatron_tflops_per_gpu needs a training result";
      return false;
    }
    value = megatron_tflops_per_gpu(resolved, result);
    return true;
  }
  // A dotted metric walks into a group (a simulation's "throughput.output_tokens_per_s").
  const json* m = &result["metrics"];
  size_t from = 0;
  while (true) {
    const size_t dot = metric.find('.', from);
    const std::string key = metric.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    if (!m->is_object() || !m->contains(key)) {
      m = nullptr;
      break;
    }
    m = &(*m)[key];
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  if (!m || !m->is_number()) {
    why = "the result has no metric '" + metric + "'";
    return false;
  }
  value = m->get<double>();
  return true;
}

// Scenario text of a row's run: inline (`key`) or a scenario preset (`key`_preset).
bool scenario_of(const json& row, const std::string& key, std::string& text, json& error) {
  if (row.contains(key)) {
    text = safe_dump(row[key]);
    return true;
  }
  return preset_text("scenarios", row[key + "_preset"].get<std::string>(), text, error);
}

bool run_side(const json& row, const std::string& key, double& value, std::string& tier, std::string& kind,
              json& error) {
  std::string text;
  json result, resolved;
  if (!scenario_of(row, key, text, error) || !run_scenario_text(text, result, resolved, error)) return false;
  tier = result.value("cost_tier", "");
  kind = result.value("kind", "");
  std::string why;
  if (!extract(row["metric"].get<std::string>(), resolved, result, value, why)) {
    error = {{"code", "invalid_value"}, {"path", "/metric"}, {"message", why}};
    return false;
  }
  return true;
}

struct Summary {
  std::vector<double> abs, signed_;
};

json summary_json(const Summary& s) {
  return {{"rows", s.abs.size()},
          {"median_abs_error_pct", 100.0 * median(s.abs)},
          {"median_signed_error_pct", 100.0 * median(s.signed_)}};
}

}  // namespace

int cmd_report_e2e(const Args& args) {
  std::string format = "table";
  std::string problem;
  Flags flags("report-e2e");
  flags.text("--format", &format, {"table", "json"});
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (format != "table" && format != "json") return usage_error("unknown format '" + format + "'");
  const json rows = json::parse(sightline::api::list_presets("validation"))["result"];
  json out = json::array(), failed = json::array();
  Summary all, inference, training;
  for (const json& row : rows) {
    const bool has_baseline = row.contains("baseline") || row.contains("baseline_preset");
    double a = 0, b = 1;
    std::string tier, tier_b, kind, kind_b;
    json error;
    if (!run_side(row, "scenario", a, tier, kind, error) ||
        (has_baseline && !run_side(row, "baseline", b, tier_b, kind_b, error))) {
      failed.push_back({{"id", row["id"]}, {"error", error}});
      continue;
    }
    const std::string metric = row["metric"].get<std::string>();
    const double predicted = has_baseline ? a / b : a;
    const double measured = row["measured"].get<double>();
    const double optimism = has_baseline || !lower_is_better(metric) ? predicted / measured - 1.0
                                                                     : measured / predicted - 1.0;
    const bool is_training = kind == "training";
    for (Summary* s : {&all, is_training ? &training : &inference}) {
      s->abs.push_back(std::fabs(optimism));
      s->signed_.push_back(optimism);
    }
    out.push_back({{"id", row["id"]},
                   {"row", row["row"]},
                   {"title", row["title"]},
                   {"kind", row["kind"]},
                   {"metric", metric},
                   {"ratio", has_baseline},
                   {"unit", row["unit"]},
                   {"measured", measured},
                   {"predicted", predicted},
                   {"signed_error_pct", 100.0 * optimism},
                   {"cost_tier", tier},
                   {"group", is_training ? "training" : "inference"}});
  }
  const json summary = {{"all", summary_json(all)},
                        {"inference", summary_json(inference)},
                        {"training", summary_json(training)},
                        {"goal_median_abs_error_pct", kGoalMedianAbsPct},
                        {"goal_abs_median_signed_error_pct", kGoalMedianSignedPct}};
  if (format == "json") {
    std::cout << json{{"rows", out},
                      {"failed", failed},
                      {"summary", summary},
                      {"signed_error_definition",
                       "predicted/measured - 1 for rates and ratios, measured/predicted - 1 for times: positive means "
                       "the engine promises more speed than was measured"}}
                     .dump(2, ' ', false, json::error_handler_t::replace)
              << "\n";
    return failed.empty() ? 0 : 1;
  }
  std::cout << "End-to-end check against ../shared/reference/measurements.md (presets/validation; nothing is fitted "
               "to these rows)\nsigned error: + means the engine is optimistic (faster than measured)\n\n";
  std::cout << std::left << std::setw(30) << "id" << std::setw(58) << "what" << std::right << std::setw(11)
            << "measured" << std::setw(11) << "predicted" << std::setw(9) << "error" << "  unit\n";
  for (const json& r : out) {
    const bool small = r["measured"].get<double>() < 10.0;
    std::cout << std::left << std::setw(30) << r["id"].get<std::string>() << std::setw(58)
              << r["title"].get<std::string>().substr(0, 57) << std::right << std::setw(11)
              << fixed(r["measured"].get<double>(), small ? 3 : 1) << std::setw(11)
              << fixed(r["predicted"].get<double>(), small ? 3 : 1) << std::setw(8)
              << fixed(r["signed_error_pct"].get<double>(), 1) << "%  " << r["unit"].get<std::string>() << "\n";
  }
  for (const json& f : failed)
    std::cout << "FAILED " << f["id"].get<std::string>() << ": [" << f["error"].value("code", "") << "] at '"
              << f["error"].value("path", "") << "': " << f["error"].value("message", "") << "\n";
  std::cout << "\n";
  for (const char* group : {"inference", "training", "all"}) {
    const json& s = summary[group];
    std::cout << std::left << std::setw(10) << group << " rows " << std::setw(4) << s["rows"].get<int>()
              << " median |error| " << std::right << std::setw(6) << fixed(s["median_abs_error_pct"].get<double>(), 1)
              << "%   median signed error " << std::setw(6)
              << fixed(s["median_signed_error_pct"].get<double>(), 1) << "%\n";
  }
  std::cout << "goals: median |error| <= " << fixed(kGoalMedianAbsPct, 0) << "%, |median signed error| <= "
            << fixed(kGoalMedianSignedPct, 0) << "%\n";
  return failed.empty() ? 0 : 1;
}

}  // namespace sightline::cli
