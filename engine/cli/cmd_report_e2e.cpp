// sightline report-e2e: the development end-to-end check. Every end-to-end
// inference and training measurement of ../shared/reference/measurements.md
// that the engine can express is a row preset under presets/validation/ (its
// `source` names the row and every assumption). Each row runs its scenario
// (or a scenario preset) through the engine and compares one metric with the
// published figure. These rows check the model; no constant is fitted to them.
//
// A row with "check": "capacity" (the MLPerf Inference Server rows) is checked
// another way: its scenario carries the published SLO (p99 TTFT and p99 TPOT)
// and a max_qps_search, and the search's answer, the highest Poisson rate the
// engine finds sustainable within those bounds, is compared with the rate the
// run completed. Such a search simulates about a million requests, so these rows
// can be selected (--check, --rows) and their runs capped (--search-max-requests).
//
// The metric rows are also summarised by kind (the result's kind), by the
// GPU's vendor, by stack (the row's `stack`, else the serving stack the
// scenario runs on) and by layout class (scenario/layout_class.hpp: dense,
// MoE, expert parallel, wide EP, disaggregated): `--by
// kind|vendor|stack|layout|all|none` picks the tables printed; the JSON
// summary always has all four, and by_mode_layout (kind x layout class) for
// the page's accuracy badge.
//
// Signed error is "optimism": predicted/measured − 1 for rates and ratios,
// measured/predicted − 1 for times, so a positive error always means the engine
// promises more speed than was measured, whatever the metric.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>

#include "cli/cli_common.hpp"
#include "cli/command_budget.hpp"
#include "cli/e2e_intervals.hpp"
#include "cli/flags.hpp"
#include "cli/validation_runs.hpp"
#include "api/api.hpp"
#include "jobs/budgeted_job.hpp"
#include "core/json_text.hpp"
#include "scenario/simulation_spec.hpp"

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

// What a row's run was, for the summaries by kind, vendor and stack.
struct RunInfo {
  std::string tier, kind, vendor, stack, layout;
  // The run's 80% interval of the row's metric, where it has one.
  RowInterval interval;
};

// The stack a row ran on: the row's own `stack` (training rows name their
// framework: the engine has no training stack preset), else the serving
// software stack the engine priced it with.
std::string row_stack(const json& row, const json& resolved) {
  if (row.contains("stack") && row["stack"].is_string()) return row["stack"].get<std::string>();
  const json& cm = resolved.contains("cost_model") ? resolved["cost_model"] : json();
  if (cm.is_object() && cm.contains("software_stack") && cm["software_stack"].contains("id"))
    return cm["software_stack"]["id"].get<std::string>();
  return "unknown";
}

bool run_side(const json& row, const std::string& key, double& value, RunInfo& info, json& error) {
  std::string text;
  json result, resolved;
  if (!scenario_of(row, key, text, error) || !run_scenario_text(text, result, resolved, error)) return false;
  info.tier = result.value("cost_tier", "");
  info.kind = result.value("kind", "");
  info.layout = result.value("layout_class", "");
  const json& gpu = resolved.contains("hardware") ? resolved["hardware"]["gpu"] : json();
  info.vendor = gpu.is_object() ? gpu.value("vendor", "unknown") : "unknown";
  info.stack = row_stack(row, resolved);
  std::string why;
  if (!extract(row["metric"].get<std::string>(), resolved, result, value, why)) {
    error = {{"code", "invalid_value"}, {"path", "/metric"}, {"message", why}};
    return false;
  }
  const std::string& metric = row["metric"].get_ref<const std::string&>();
  info.interval = run_interval(metric, value, lower_is_better(metric), result);
  return true;
}

// A capacity row: the max-QPS search of its scenario at the central cost (the
// check compares the engine's answer, not its interval), its runs capped at
// `cap` requests when cap > 0. Fills `row_out` with the answer and what bounds it.
// The scenario a capacity row runs: its search's runs capped at `cap` requests when cap > 0.
bool capacity_scenario(const json& row, int64_t cap, json& scenario, json& error) {
  std::string text;
  if (!scenario_of(row, "scenario", text, error)) return false;
  scenario = read_engine_envelope(text);  // the preset the row names, as the engine wrote it
  if (!scenario.contains("serving") || !scenario["serving"].contains("max_qps_search")) {
    error = {{"code", "invalid_value"},
             {"path", "/scenario/serving/max_qps_search"},
             {"message", "a capacity row needs a serving scenario with a max_qps_search and an slo"}};
    return false;
  }
  json& search = scenario["serving"]["max_qps_search"];
  const int64_t engine_default = serve::SearchSpec{}.max_requests_per_run;  // what the engine reads when the row sets none
  if (cap > 0 && search.value("max_requests_per_run", engine_default) > cap) search["max_requests_per_run"] = cap;
  return true;
}

// A row's work as `run` estimates it: a metric row's run and baseline (with
// intervals, as run_scenario_text runs them), a capacity row's search (central
// only). A row whose scenario cannot be had counts nothing: it fails on its own.
double row_work_units(const json& row, int64_t cap) {
  json error;
  if (row.value("check", "metric") == "capacity") {
    json scenario;
    return capacity_scenario(row, cap, scenario, error) ? run_work_units(scenario, true) : 0.0;
  }
  double units = 0;
  for (const char* side : {"scenario", "baseline"}) {
    if (!row.contains(side) && !row.contains(std::string(side) + "_preset")) continue;
    std::string text;
    if (scenario_of(row, side, text, error)) units += run_work_units(read_engine_envelope(text), false);
  }
  return units;
}

bool run_capacity(const json& row, int64_t cap, double& value, json& row_out, json& error) {
  json scenario;
  if (!capacity_scenario(row, cap, scenario, error)) return false;
  // A native check: the search runs to its end (the page's work budget guards
  // a browser tab, and is no part of the answer).
  const json e = read_engine_envelope(
      sightline::api::run_scenario_with_budget(safe_dump(scenario), true, RunLimits::kNativeCeiling, RunLimits::kNativeCeiling));
  if (!e["ok"].get<bool>()) {
    error = e["error"];
    return false;
  }
  const json& result = e["result"];
  const json& m = result.contains("max_qps") ? result["max_qps"] : json();
  if (!m.is_object() || !m["qps"].is_number() || m["qps"].get<double>() <= 0.0) {
    const std::string note = m.is_object() && m["note"].is_string() ? m["note"].get<std::string>() : "";
    error = {{"code", "no_answer"},
             {"path", "/scenario/serving/max_qps_search"},
             {"message", "the max-QPS search found no rate within the SLO" + (note.empty() ? "" : ": " + note)}};
    return false;
  }
  value = m["qps"].get<double>();
  row_out["upper_qps"] = m["upper_qps"];
  row_out["service_rate_qps"] = m["service_rate_qps"];
  row_out["requests_simulated"] = m["requests_simulated"];
  row_out["max_requests_per_run"] = m["max_requests_per_run"];
  row_out["slo"] = m["slo"];
  row_out["cost_tier"] = result.value("cost_tier", "");
  // The engine's own verdict at the rate the scenario runs (the published one).
  if (result.contains("headline") && result["headline"].contains("line")) row_out["at_published_rate"] = result["headline"]["line"];
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

// The axes the metric rows are summarised by (summary.by_<axis>).
constexpr const char* kGroupAxes[] = {"kind", "vendor", "stack", "layout"};

// One axis's summary: rows, median |error| and median signed error per group.
void print_group_table(const std::string& axis, const json& groups) {
  if (groups.empty()) return;
  std::cout << "\nby " << axis << "\n";
  for (const auto& [name, s] : groups.items())
    std::cout << "  " << std::left << std::setw(28) << name << std::right << " rows " << std::setw(4)
              << s["rows"].get<int>() << "  median |error| " << std::setw(6)
              << fixed(s["median_abs_error_pct"].get<double>(), 1) << "%  median signed " << std::setw(6)
              << fixed(s["median_signed_error_pct"].get<double>(), 1) << "%\n";
}

// The metric rows' table: measured, predicted and signed error per row.
void print_metric_table(const json& out) {
  // The id column fits the longest id, with a space after it.
  size_t id_w = 30;
  for (const json& r : out) id_w = std::max(id_w, r["id"].get<std::string>().size() + 2);
  const int id_width = static_cast<int>(id_w);
  std::cout << std::left << std::setw(id_width) << "id" << std::setw(58) << "what" << std::right << std::setw(11)
            << "measured" << std::setw(11) << "predicted" << std::setw(9) << "error" << "  unit\n";
  for (const json& r : out) {
    const bool small = r["measured"].get<double>() < 10.0;
    std::cout << std::left << std::setw(id_width) << r["id"].get<std::string>() << std::setw(58)
              << r["title"].get<std::string>().substr(0, 57) << std::right << std::setw(11)
              << fixed(r["measured"].get<double>(), small ? 3 : 1) << std::setw(11)
              << fixed(r["predicted"].get<double>(), small ? 3 : 1) << std::setw(8)
              << fixed(r["signed_error_pct"].get<double>(), 1) << "%  " << r["unit"].get<std::string>() << "\n";
  }
  std::cout << "\n";
}

// The capacity rows' table (MLPerf Inference Server rows).
void print_capacity_table(const json& capacity_out, int64_t search_cap) {
  std::cout << "Capacity (MLPerf Inference Server): the max-QPS search's sustainable rate under the published p99 "
               "bounds, central cost, against the completed rate"
            << (search_cap > 0 ? " (search runs capped at " + std::to_string(search_cap) + " requests: errs low)" : "")
            << "\n";
  std::cout << std::left << std::setw(32) << "id" << std::right << std::setw(10) << "measured" << std::setw(11)
            << "predicted" << std::setw(9) << "error" << std::setw(10) << "upper" << std::setw(14) << "service rate"
            << "  unit\n";
  for (const json& r : capacity_out) {
    std::cout << std::left << std::setw(32) << r["id"].get<std::string>() << std::right << std::setw(10)
              << fixed(r["measured"].get<double>(), 2) << std::setw(11) << fixed(r["predicted"].get<double>(), 2)
              << std::setw(8) << fixed(r["signed_error_pct"].get<double>(), 1) << "%" << std::setw(10)
              << (r["upper_qps"].is_number() ? fixed(r["upper_qps"].get<double>(), 2) : std::string("-"))
              << std::setw(14)
              << (r["service_rate_qps"].is_number() ? fixed(r["service_rate_qps"].get<double>(), 2) : std::string("-"))
              << "  " << r["unit"].get<std::string>() << "\n";
    std::cout << "  " << r["title"].get<std::string>() << "; "
              << r["requests_simulated"].get<int64_t>() << " requests simulated, runs up to "
              << r["max_requests_per_run"].get<int64_t>() << "\n";
    if (r.contains("at_published_rate"))
      std::cout << "  the engine at the published rate: " << r["at_published_rate"].get<std::string>() << "\n";
  }
  std::cout << "\n";
}

// The rows --check and --rows select (--rows ID,ID: only those rows); false
// with `problem` when an id is not a row.
bool select_rows(const json& rows, const std::string& check, const std::string& rows_flag, std::vector<json>& selected,
                 std::string& problem) {
  std::vector<std::string> wanted;
  for (size_t from = 0; !rows_flag.empty() && from <= rows_flag.size();) {
    const size_t comma = rows_flag.find(',', from);
    const std::string id = rows_flag.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    bool known = false;
    for (const json& row : rows) known = known || row["id"] == id;
    if (!known) {
      problem = "--rows: '" + id + "' is not a row of presets/validation (sightline presets validation)";
      return false;
    }
    wanted.push_back(id);
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  for (const json& row : rows) {
    const bool is_capacity = row.value("check", "metric") == "capacity";
    if ((check == "metric" && is_capacity) || (check == "capacity" && !is_capacity)) continue;
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), row["id"].get<std::string>()) == wanted.end()) continue;
    selected.push_back(row);
  }
  return true;
}

// One capacity row (MLPerf Inference Server): the max-QPS search's rate
// against the measured one, into `capacity_out` and the capacity summary, or
// into `failed`.
void e2e_capacity_row(const json& row, int64_t search_cap, Summary& capacity, json& capacity_out, json& failed) {
  double predicted = 0;
  json r = {{"id", row["id"]},          {"row", row["row"]},   {"title", row["title"]},
            {"kind", row["kind"]},      {"check", "capacity"}, {"metric", row["metric"]},
            {"unit", row["unit"]},      {"measured", row["measured"]}};
  json error;
  if (!run_capacity(row, search_cap, predicted, r, error)) {
    failed.push_back({{"id", row["id"]}, {"error", error}});
    return;
  }
  const double optimism = predicted / row["measured"].get<double>() - 1.0;  // a rate: more is faster
  r["predicted"] = predicted;
  r["signed_error_pct"] = 100.0 * optimism;
  r["group"] = "capacity";
  capacity.abs.push_back(std::fabs(optimism));
  capacity.signed_.push_back(optimism);
  capacity_out.push_back(r);
}

// The metric rows' tallies: the summaries, and per kind the errors and run
// intervals of the intervals by kind (cli/e2e_intervals.hpp).
struct E2eTallies {
  Summary all, inference, training;
  // By the result's kind (serving_latency, serving_simulation, training) and
  // cost tier: what the page's accuracy badge shows for a result of that kind
  // and tier (web/src/client/measured-errors.json, written from this by web/measured-errors.mjs).
  std::map<std::string, std::map<std::string, Summary>> by_mode;
  // By kind and deployment class (scenario/layout_class.hpp), every tier: what the
  // badge shows for a run that is not a dense one.
  std::map<std::string, std::map<std::string, Summary>> by_mode_layout;
  // The metric rows by the run's kind (its result kind), the GPU's vendor, the stack and the layout class.
  std::map<std::string, std::map<std::string, Summary>> by_group;
  std::map<std::string, KindIntervals> intervals;  // by kind
};

// One metric row: its run (and baseline), its error into the tallies and its
// line into `out`, or into `failed`.
void e2e_metric_row(const json& row, E2eTallies& t, json& out, json& failed) {
  const bool has_baseline = row.contains("baseline") || row.contains("baseline_preset");
  double a = 0, b = 1;
  RunInfo info, info_b;
  json error;
  if (!run_side(row, "scenario", a, info, error) || (has_baseline && !run_side(row, "baseline", b, info_b, error))) {
    failed.push_back({{"id", row["id"]}, {"error", error}});
    return;
  }
  const std::string metric = row["metric"].get<std::string>();
  const double predicted = has_baseline ? a / b : a;
  const double measured = row["measured"].get<double>();
  const double optimism = has_baseline || !lower_is_better(metric) ? predicted / measured - 1.0
                                                                   : measured / predicted - 1.0;
  const std::string& kind = info.kind;
  const std::string& tier = info.tier;
  const bool is_training = kind == "training";
  for (Summary* s : {&t.all, is_training ? &t.training : &t.inference, &t.by_mode[kind][tier], &t.by_mode_layout[kind][info.layout],
                     &t.by_group["kind"][kind], &t.by_group["vendor"][info.vendor], &t.by_group["stack"][info.stack],
                     &t.by_group["layout"][info.layout]}) {
    s->abs.push_back(std::fabs(optimism));
    s->signed_.push_back(optimism);
  }
  json line = {{"id", row["id"]},       {"row", row["row"]},       {"title", row["title"]},
               {"kind", row["kind"]},   {"metric", metric},        {"ratio", has_baseline},
               {"unit", row["unit"]},   {"measured", measured},    {"predicted", predicted},
               {"signed_error_pct", 100.0 * optimism},            {"cost_tier", tier},
               {"group", is_training ? "training" : "inference"}, {"mode", kind},
               {"vendor", info.vendor}, {"stack", info.stack}, {"layout", info.layout}};
  // A ratio's interval is not the two runs' intervals.
  add_interval_row(t.intervals[kind], optimism, measured, has_baseline ? RowInterval{} : info.interval, line);
  out.push_back(line);
}

// The text report: the metric and capacity tables, the failures, the
// summaries and the grouped tables (`by`).
void print_e2e_report(const json& out, const json& capacity_out, const json& failed, const json& summary,
                      int64_t search_cap, const std::string& by) {
  std::cout << "End-to-end check against ../shared/reference/measurements.md and measurements-r3.md "
               "(presets/validation; nothing is fitted to these rows)\nsigned error: + means the engine is optimistic "
               "(faster than measured)\n\n";
  if (!out.empty()) print_metric_table(out);
  if (!capacity_out.empty()) print_capacity_table(capacity_out, search_cap);
  for (const json& f : failed)
    std::cout << "FAILED " << f["id"].get<std::string>() << ": [" << f["error"].value("code", "") << "] at '"
              << f["error"].value("path", "") << "': " << f["error"].value("message", "") << "\n";
  if (!failed.empty()) std::cout << "\n";
  for (const char* group : {"inference", "training", "all", "capacity"}) {
    const json& s = summary[group];
    if (s["rows"].get<int>() == 0) continue;
    std::cout << std::left << std::setw(10) << group << " rows " << std::setw(4) << s["rows"].get<int>()
              << " median |error| " << std::right << std::setw(6) << fixed(s["median_abs_error_pct"].get<double>(), 1)
              << "%   median signed error " << std::setw(6)
              << fixed(s["median_signed_error_pct"].get<double>(), 1) << "%\n";
  }
  for (const char* axis : kGroupAxes)
    if (by == "all" || by == axis) print_group_table(axis, summary["by_" + std::string(axis)]);
  if (by == "all" || by == "kind") print_interval_table(summary["intervals_by_kind"]);
  if (!out.empty() && by != "none") std::cout << "\n";
  if (!out.empty())
    std::cout << "goals (inference, training, all): median |error| <= " << fixed(kGoalMedianAbsPct, 0)
              << "%, |median signed error| <= " << fixed(kGoalMedianSignedPct, 0) << "%\n";
}

}  // namespace

int cmd_report_e2e(const Args& args) {
  std::string format = "table", check = "all", rows_flag, by = "all";
  int64_t search_cap = 0;
  std::string problem;
  Flags flags("report-e2e");
  CommandBudget budget("report-e2e");
  budget.flag(flags).text("--format", &format, {"table", "json"});
  flags.text("--check", &check, {"all", "metric", "capacity"});
  flags.text("--rows", &rows_flag);
  flags.integer("--search-max-requests", &search_cap, 600, 200000);
  flags.text("--by", &by, {"all", "kind", "vendor", "stack", "layout", "none"});
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (format != "table" && format != "json") return usage_error("unknown format '" + format + "'");
  const json rows = read_engine_envelope(sightline::api::list_presets("validation"))["result"];
  std::vector<json> selected;
  if (!select_rows(rows, check, rows_flag, selected, problem)) return usage_error(problem);
  try {
    for (const json& row : selected) budget.add(row_work_units(row, search_cap), "row " + row["id"].get<std::string>());
  } catch (const SightlineError& e) {
    return report_error(e);
  }
  json out = json::array(), capacity_out = json::array(), failed = json::array();
  Summary capacity;
  E2eTallies t;
  for (const json& row : selected) {
    if (row.value("check", "metric") == "capacity") e2e_capacity_row(row, search_cap, capacity, capacity_out, failed);
    else e2e_metric_row(row, t, out, failed);
  }
  json modes = json::object();
  for (const auto& [mode, tiers] : t.by_mode)
    for (const auto& [tier_name, sm] : tiers) modes[mode][tier_name] = summary_json(sm);
  json mode_layouts = json::object();
  for (const auto& [mode, layouts] : t.by_mode_layout)
    for (const auto& [layout, sm] : layouts) mode_layouts[mode][layout] = summary_json(sm);
  json groups = json::object();
  for (const char* axis : kGroupAxes) {
    groups["by_" + std::string(axis)] = json::object();
    for (const auto& [name, sm] : t.by_group[axis]) groups["by_" + std::string(axis)][name] = summary_json(sm);
  }
  const json summary = {{"all", summary_json(t.all)},
                        {"by_mode", modes},
                        {"by_mode_layout", mode_layouts},
                        {"by_kind", groups["by_kind"]},
                        {"by_vendor", groups["by_vendor"]},
                        {"by_stack", groups["by_stack"]},
                        {"by_layout", groups["by_layout"]},
                        {"inference", summary_json(t.inference)},
                        {"training", summary_json(t.training)},
                        {"intervals_by_kind", intervals_json(t.intervals)},
                        {"capacity", summary_json(capacity)},
                        {"goal_median_abs_error_pct", kGoalMedianAbsPct},
                        {"goal_abs_median_signed_error_pct", kGoalMedianSignedPct}};
  if (format == "json") {
    std::cout << json{{"rows", out},
                      {"capacity_rows", capacity_out},
                      {"check", check},
                      {"search_max_requests", search_cap > 0 ? json(search_cap) : json()},
                      {"failed", failed},
                      {"summary", summary},
                      {"signed_error_definition",
                       "predicted/measured - 1 for rates and ratios, measured/predicted - 1 for times: positive means "
                       "the engine promises more speed than was measured"},
                      {"capacity_definition",
                       "capacity rows (MLPerf Inference Server): predicted = the max-QPS search's sustainable Poisson "
                       "rate under the published p99 TTFT and p99 TPOT bounds, at the central cost; measured = the "
                       "run's completed rate; not part of the inference/training/all medians"}}
                     .dump(2, ' ', false, json::error_handler_t::replace)
              << "\n";
    return failed.empty() ? 0 : 1;
  }
  print_e2e_report(out, capacity_out, failed, summary, search_cap, by);
  return failed.empty() ? 0 : 1;
}

}  // namespace sightline::cli
