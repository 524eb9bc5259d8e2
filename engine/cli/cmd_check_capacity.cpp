// sightline check-capacity: checks a max-QPS answer against brute force, the
// way a user would check it by hand. The scenario's capacity search gives the
// answer; then plain runs of the same scenario, `--scale` times longer than
// the search's runs, at fixed rates:
//   - at the answer, the long run must meet the SLO;
//   - at 10% above it, the long run must miss it;
//   - the brute-force capacity (the highest rate whose long run meets the
//     SLO, found on a grid of rates around the answer and refined by
//     bisection on long runs) must lie within 5% of the answer.
// A long run "meets the SLO" when every request completes and every
// condition of the SLO, counted over all its requests, reaches its share: the
// joint share within every bound that names no percentile reaches
// slo.attainment, and each bound with a percentile holds for that share of
// requests (of gaps, for ITL) -- the run's own metrics.goodput.conditions,
// the same SLO object the search judges. No warm-up is skipped and no
// statistics are applied, so the check does not share the search's
// steady-state verdict. The long runs are long enough for the start-up and
// the drain to be a small share of them, and for an overload to show as
// queueing (a run that is `scale` times longer queues `scale` times more
// behind an overload).
// --all checks every shipped scenario preset whose serving section has an
// SLO, as shipped (the search's defaults added where it has none).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "cli/cli_common.hpp"
#include "cli/command_budget.hpp"
#include "cli/flags.hpp"
#include "api/api.hpp"
#include "jobs/budgeted_job.hpp"
#include "core/json_text.hpp"

namespace sightline::cli {

namespace {

constexpr double kAboveShare = 1.10;     // the rate that must fail: 10% above the answer
constexpr double kTolerance = 0.05;      // the answer within 5% of brute force
constexpr double kBisectPrecision = 0.01;  // brute force refined to 1%
const double kGrid[] = {0.8, 0.9, 1.0, 1.1, 1.2};
constexpr int kMaxGridExtensions = 6;    // widen the grid (x0.8 / x1.25) at most this many times
// The budget is every command's default (about 60 s of CPU). It is checked
// twice: before anything runs (check_work_units), and after the capacity
// searches, before any long run, on the long runs figured at the answers
// (long_runs_units). `--all` is over it (README, docs/capacity.md and
// tests/cli/capacity.test.mjs's regeneration command pass --max-work-units).

struct LongRun {
  double qps = 0;
  double attainment = 0;   // the joint goodput share (every bound)
  json conditions;         // metrics.goodput.conditions of the run
  json binding;            // the condition with the least margin over its share
  int64_t completed = 0;
  double goodput_qps = 0;
  double ttft_p99_ms = 0;
  bool meets = false;
  std::string error;
};

json run_json(const LongRun& r) {
  return {{"qps", r.qps},          {"slo_attainment", r.attainment}, {"completed", r.completed},
          {"goodput_qps", r.goodput_qps}, {"ttft_p99_ms", r.ttft_p99_ms}, {"binding", r.binding},
          {"conditions", r.conditions}, {"meets_slo", r.meets}};
}

// "0.9612 of 0.90 (TTFT+TPOT joint)": the binding condition, for tables.
std::string binding_text(const LongRun& r) {
  if (!r.binding.is_object()) return "n/a";
  std::string metrics;
  for (const auto& m : r.binding["metrics"]) metrics += (metrics.empty() ? "" : "+") + m.get<std::string>();
  return fixed(r.binding["share_within"].get<double>(), 4) + " of " + fixed(r.binding["required_share"].get<double>(), 2) + " (" +
         r.binding["statistic"].get<std::string>() + " " + metrics + ")";
}

// The scenario as a plain run of `requests` at `qps`: no search, no compare,
// no labels (so presets that differ only in their labels, rate and request
// count share their long runs under --all).
json long_scenario(json s, double qps, int64_t requests) {
  for (const char* k : {"id", "title", "source", "description"}) s.erase(k);
  json& sv = s["serving"];
  sv.erase("key_metrics");
  sv.erase("max_qps_search");
  sv.erase("compare");
  sv.erase("steady_state");
  sv.erase("outputs");
  sv["workload"]["arrival"]["rate_qps"] = qps;
  sv["workload"]["num_requests"] = requests;
  sv["workload"].erase("duration_s");
  sv["limits"] = {{"max_requests", requests}, {"max_events", 1000000000}, {"max_sim_time_s", 1e7}};
  s["limits"] = {{"max_work_units", RunLimits::kNativeCeiling}};
  return s;
}

// Long runs already simulated, by their exact scenario text: the same input
// gives the same result (determinism), so --all runs each one once.
using LongRunCache = std::map<std::string, std::string>;

LongRun long_run(const json& scenario, double qps, int64_t requests, LongRunCache& cache, std::mutex& cache_mutex) {
  LongRun r;
  r.qps = qps;
  const std::string text = safe_dump(long_scenario(scenario, qps, requests));
  std::string raw;
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    if (const auto it = cache.find(text); it != cache.end()) raw = it->second;
  }
  if (raw.empty()) {
    raw = sightline::api::run_scenario_with_budget(text, true, RunLimits::kNativeCeiling, RunLimits::kNativeCeiling);
    std::lock_guard<std::mutex> lock(cache_mutex);
    cache[text] = raw;
  }
  const json env = read_engine_envelope(raw);
  if (!env["ok"].get<bool>()) {
    r.error = env["error"].value("message", std::string("run failed"));
    return r;
  }
  const json& m = env["result"]["metrics"];
  r.attainment = m["goodput"].value("slo_attainment", 0.0);
  r.goodput_qps = m["goodput"].value("requests_per_s", 0.0);
  r.conditions = m["goodput"]["conditions"];
  double margin = 1e300;
  for (const json& c : r.conditions) {
    const double d = c["share_within"].get<double>() - c["required_share"].get<double>();
    if (d < margin) {
      margin = d;
      r.binding = c;
    }
  }
  r.completed = m["requests"].value("completed", int64_t{0});
  if (m.contains("ttft_ms") && m["ttft_ms"].is_object()) r.ttft_p99_ms = m["ttft_ms"].value("p99", 0.0);
  r.meets = r.completed == requests && m["goodput"].value("meets_slo", false);
  return r;
}

// A scenario's capacity search and what its long runs will be: the answer,
// and the long runs' length.
struct Searched {
  json scenario;
  bool added_search = false;
  json q;  // result.max_qps
  double answer = 0, service = 0;
  int64_t floor_requests = 600, n = 0;
};

// The scenario as the capacity search runs it: the search's defaults when it
// names none (the answer the page's capacity search gives for it), without its
// compare variant. The caller has checked that it has a serving object.
json as_searched(json scenario) {
  if (!scenario["serving"].contains("max_qps_search")) scenario["serving"]["max_qps_search"] = json::object();
  scenario["serving"].erase("compare");
  return scenario;
}

// The capacity search of one scenario (throws SightlineError).
Searched search_answer(json scenario, double scale) {
  Searched r;
  if (!scenario.is_object() || !scenario.contains("serving") || !scenario["serving"].is_object() ||
      !scenario["serving"].contains("slo"))
    throw SightlineError(error_code::kMissingKey, "/serving/slo", "check-capacity needs a serving scenario with an slo");
  // A scenario with an SLO but no search gets the search's defaults: the
  // answer the page's capacity search gives for it.
  if (!scenario["serving"].contains("max_qps_search")) {
    scenario["serving"]["max_qps_search"] = json::object();
    r.added_search = true;
  }
  const json searched = as_searched(scenario);
  // The search runs to its end: the page's work budget (1e7 units) guards a
  // browser tab against a run that will not finish, and is no part of the
  // answer (I5.1's search, with the defaults added, needs about 1.03e7).
  const json env = read_engine_envelope(
      sightline::api::run_scenario_with_budget(safe_dump(searched), true, RunLimits::kNativeCeiling, RunLimits::kNativeCeiling));
  if (!env["ok"].get<bool>()) {
    const json& e = env["error"];
    throw SightlineError(e.value("code", std::string(error_code::kInvalidValue)), e.value("path", std::string()),
                         e.value("message", std::string("the capacity search failed")));
  }
  r.q = env["result"]["max_qps"];
  r.answer = r.q.value("qps", 0.0);
  r.service = r.q.value("service_rate_qps", 0.0);
  if (!(r.answer > 0))
    throw SightlineError(error_code::kInvalidValue, "/serving/max_qps_search", "the capacity search found no rate that meets the SLO");
  // Long runs: `scale` x the search's shortest run, and at least twice the
  // longest run that decided the answer.
  int64_t deciding = 0;
  for (const json& run : r.q["runs"])
    if (run.value("qps", 0.0) == r.answer) deciding = std::max(deciding, run.value("requests", int64_t{0}));
  r.floor_requests = r.q.value("requests_per_run", int64_t{600});
  r.n = std::min<int64_t>(2000000, std::max<int64_t>(static_cast<int64_t>(std::llround(scale * static_cast<double>(r.floor_requests))), 2 * deciding));
  r.scenario = std::move(scenario);
  return r;
}

// The long runs a check makes at the least: the grid's five, and the
// bisection from the grid's 10% bracket to 1% (ceil(log2(10)) = 4 runs; every
// preset of tests/cli/capacity-brute-force.json made these 9, 2026-11-28).
// The grid's widening comes on top.
constexpr double kLongRunsAtLeast = 9;

// The long runs' work once the answer is known, before any of them runs: the
// figure `run` refuses on (jobs/run_estimate: a probe of the run's first
// requests at the answer's rate, about 0.1 s) times kLongRunsAtLeast.
double long_runs_units(const Searched& c, bool hold_only, double scale) {
  if (hold_only)  // two runs of scale x the floor (check_hold)
    return 2 * run_work_figure(long_scenario(c.scenario, c.answer * kAboveShare,
                                             std::max<int64_t>(1, std::llround(scale * static_cast<double>(c.floor_requests)))), true);
  return kLongRunsAtLeast * run_work_figure(long_scenario(c.scenario, c.answer, c.n), true);
}

// One scenario's long runs; `out` gets the report. Throws SightlineError.
// What every check's output starts with: the preset, the search's answer and
// what it cost, and the long runs' length.
json check_header(const Searched& c, int64_t long_run_requests) {
  return {{"id", c.scenario.value("id", std::string())},
          {"answer_qps", c.answer},
          {"answer_upper_qps", c.q["upper_qps"]},
          {"service_rate_qps", c.service},
          {"slo", c.q["slo"]},
          {"search_added_with_defaults", c.added_search},
          {"search_requests_simulated", c.q["requests_simulated"]},
          {"search_requests_floor", c.floor_requests},
          {"long_run_requests", long_run_requests}};
}

bool check_long_runs(const Searched& c, int64_t jobs, LongRunCache& cache, json& out, std::vector<LongRun>& done) {
  std::mutex cache_mutex;
  const json& scenario = c.scenario;
  const double answer = c.answer;
  const int64_t n = c.n;

  // The grid, run in parallel; widened while all of it meets or all fails.
  auto run_rates = [&](const std::vector<double>& rates) {
    std::vector<LongRun> got(rates.size());
    parallel_for(rates.size(), jobs, [&](size_t k) { got[k] = long_run(scenario, rates[k], n, cache, cache_mutex); });
    for (const auto& r : got) {
      if (!r.error.empty()) throw SightlineError(error_code::kInvalidValue, "", "long run at " + std::to_string(r.qps) + " req/s failed: " + r.error);
      done.push_back(r);
    }
  };
  auto bracket = [&](double& lo, double& hi) {
    // lo: the highest meeting rate below the lowest failing one; 0 / inf when absent.
    hi = 1e300;
    for (const auto& r : done)
      if (!r.meets) hi = std::min(hi, r.qps);
    lo = 0;
    for (const auto& r : done)
      if (r.meets && r.qps < hi) lo = std::max(lo, r.qps);
  };
  double lo = 0, hi = 0;
  std::vector<double> rates;
  for (double f : kGrid) rates.push_back(answer * f);
  run_rates(rates);
  for (int ext = 0; ext < kMaxGridExtensions; ++ext) {
    bracket(lo, hi);
    if (lo > 0 && hi < 1e300) break;
    double lowest = 1e300, highest = 0;
    for (const auto& r : done) {
      lowest = std::min(lowest, r.qps);
      highest = std::max(highest, r.qps);
    }
    run_rates({lo == 0 ? lowest * 0.8 : highest * 1.25});
  }
  bracket(lo, hi);
  while (lo > 0 && hi < 1e300 && hi > lo * (1 + kBisectPrecision)) {
    run_rates({0.5 * (lo + hi)});
    bracket(lo, hi);
  }
  std::sort(done.begin(), done.end(), [](const LongRun& a, const LongRun& b) { return a.qps < b.qps; });
  const LongRun* at = nullptr;
  const LongRun* above = nullptr;
  for (const auto& r : done) {
    if (r.qps == answer * kGrid[2]) at = &r;
    if (r.qps == answer * kAboveShare) above = &r;
  }
  const bool brute_ok = lo > 0 && hi < 1e300;
  const double error = brute_ok ? answer / lo - 1 : 0;
  const bool holds = at && at->meets, fails_above = above && !above->meets, within = brute_ok && std::fabs(error) <= kTolerance;
  json grid = json::array();
  for (const auto& r : done) grid.push_back(run_json(r));
  out = check_header(c, n);
  out.update(json{{"long_run_rule", "a plain run of long_run_requests at the rate meets the SLO when every request completes and "
                           "every condition of the SLO over all its requests reaches its share (metrics.goodput.conditions: "
                           "the joint share within the bounds that name no percentile reaches slo.attainment; each bound "
                           "with a percentile holds for that share of requests, of gaps for ITL)"},
         {"at_answer", at ? run_json(*at) : json(nullptr)},
         {"above_10pct", above ? run_json(*above) : json(nullptr)},
         {"brute_force_qps", brute_ok ? json(lo) : json(nullptr)},
         {"brute_force_upper_qps", brute_ok ? json(hi) : json(nullptr)},
         {"answer_error_vs_brute_force", brute_ok ? json(error) : json(nullptr)},
         {"runs", grid},
         {"checks", {{"holds_at_answer", holds}, {"fails_10pct_above", fails_above}, {"within_5pct_of_brute_force", within}}},
         {"passed", holds && fails_above && within}});
  return holds && fails_above && within;
}

// --hold-only: the answer's promise alone (docs/capacity.md, step 6). Two
// plain runs of exactly `scale` x the search's fewest requests per run (20 x:
// the horizon the search predicts the hold for), at the answer and 10% above
// it: the first must meet every SLO condition, the second miss. Cheaper than
// the brute force (no grid, no bisection, no doubling to the deciding run's
// length), so every shipped preset can be checked in a few minutes of CPU.
bool check_hold(const Searched& c, int64_t jobs, double scale, LongRunCache& cache, json& out, std::vector<LongRun>& done) {
  std::mutex cache_mutex;
  const int64_t n = std::max<int64_t>(1, std::llround(scale * static_cast<double>(c.floor_requests)));
  const std::vector<double> rates = {c.answer, c.answer * kAboveShare};
  std::vector<LongRun> got(rates.size());
  parallel_for(rates.size(), jobs, [&](size_t k) { got[k] = long_run(c.scenario, rates[k], n, cache, cache_mutex); });
  for (const auto& r : got) {
    if (!r.error.empty()) throw SightlineError(error_code::kInvalidValue, "", "long run at " + std::to_string(r.qps) + " req/s failed: " + r.error);
    done.push_back(r);
  }
  const bool holds = got[0].meets, fails_above = !got[1].meets;
  out = check_header(c, n);
  out.update(json{{"at_answer", run_json(got[0])},
                  {"above_10pct", run_json(got[1])},
                  {"brute_force_qps", nullptr},
                  {"checks", {{"holds_at_answer", holds}, {"fails_10pct_above", fails_above}}},
                  {"passed", holds && fails_above}});
  return holds && fails_above;
}

// The capacity search's work as `run` estimates it (its fewest runs).
double search_work_units(const json& scenario) {
  if (!scenario.is_object() || !scenario.contains("serving") || !scenario["serving"].is_object()) return 0;
  return run_work_units(as_searched(scenario), true);
}

// A check's work as `run` estimates it, before anything runs: the capacity
// search, and the grid's five long runs of `scale` times the search's run
// length, at the scenario's own rate (the answer is not known yet, so this
// can be far off either way; long_runs_units figures them at the answer).
double check_work_units(const json& scenario, double scale) {
  if (!scenario.is_object() || !scenario.contains("serving") || !scenario["serving"].is_object()) return 0;
  const json searched = as_searched(scenario);
  const double search_units = run_work_units(searched, true);
  const json v = read_engine_envelope(sightline::api::validate_scenario(safe_dump(searched)));
  if (!v.value("ok", false)) return search_units;  // the check fails on the scenario's own error
  const json& sv = v["result"]["serving"];
  const int64_t per_run = sv.contains("max_qps_search") ? sv["max_qps_search"].value("num_requests", int64_t{600}) : 600;
  double rate = 1.0;
  if (sv.contains("workload") && sv["workload"].contains("arrival") && sv["workload"]["arrival"].is_object())
    rate = sv["workload"]["arrival"].value("rate_qps", 1.0);
  const int64_t n = std::min<int64_t>(2000000, static_cast<int64_t>(std::llround(scale * static_cast<double>(per_run))));
  return search_units + static_cast<double>(std::size(kGrid)) * run_work_units(long_scenario(searched, rate > 0 ? rate : 1.0, n), true);
}

std::string slo_text(const json& slo) {
  std::string t;
  const json pct = slo.value("percentiles", json::object());
  for (const char* m : {"ttft", "tpot", "itl", "e2e"}) {
    const std::string key = std::string(m) + "_ms";
    if (!slo.contains(key)) continue;
    std::string name = m;
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    t += (t.empty() ? "" : ", ") + (pct.contains(m) ? pct[m].get<std::string>() + " " : std::string()) + name + " " +
         fixed(slo[key].get<double>(), 0) + " ms";
  }
  if (slo.contains("attainment")) t += " (" + fixed(100 * slo["attainment"].get<double>(), 0) + "% jointly)";
  return t;
}

std::string table_text(const json& out, const std::vector<LongRun>& done) {
  std::ostringstream t;
  const double target_answer = out["answer_qps"].get<double>();
  t << "capacity answer      " << fixed(target_answer, 3) << " req/s (upper " << fixed(out["answer_upper_qps"].get<double>(), 3)
    << ", service rate " << fixed(out["service_rate_qps"].get<double>(), 2) << " req/s"
    << (out["search_added_with_defaults"].get<bool>() ? "; search defaults added" : "") << ")\n";
  t << "SLO                  " << slo_text(out["slo"]) << "\n";
  t << "long runs            " << out["long_run_requests"] << " requests each\n";
  for (const auto& r : done)
    t << "  " << fixed(r.qps, 3) << " req/s  " << binding_text(r) << "  " << (r.meets ? "meets" : "fails") << "\n";
  const bool brute_ok = out["brute_force_qps"].is_number();
  const bool brute_run = out["checks"].contains("within_5pct_of_brute_force");  // not with --hold-only
  if (brute_run) {
    t << "brute-force capacity "
      << (brute_ok ? fixed(out["brute_force_qps"].get<double>(), 3) + " req/s (fails at " + fixed(out["brute_force_upper_qps"].get<double>(), 3) + ")"
                   : std::string("not bracketed"))
      << "\n";
    t << "answer vs brute force " << (brute_ok ? fixed(100 * out["answer_error_vs_brute_force"].get<double>(), 1) + "%" : std::string("n/a")) << "\n";
  }
  t << "holds at the answer  " << (out["checks"]["holds_at_answer"].get<bool>() ? "yes" : "NO") << "\n";
  t << "fails 10% above      " << (out["checks"]["fails_10pct_above"].get<bool>() ? "yes" : "NO") << "\n";
  if (brute_run) t << "within 5%            " << (out["checks"]["within_5pct_of_brute_force"].get<bool>() ? "yes" : "NO") << "\n";
  return t.str();
}

// One markdown row of --all: preset, SLO, answer, long-run shares at the
// answer and at +10%, brute force, error, verdict.
std::string markdown_row(const json& out) {
  auto share = [](const json& r) {
    if (!r.is_object() || !r["binding"].is_object()) return std::string("n/a");
    return fixed(r["binding"]["share_within"].get<double>(), 3) + (r["meets_slo"].get<bool>() ? " meets" : " fails");
  };
  const bool brute_ok = out["brute_force_qps"].is_number();
  std::ostringstream t;
  t << "| " << out["id"].get<std::string>() << " | " << slo_text(out["slo"]) << " | " << fixed(out["answer_qps"].get<double>(), 3)
    << (out["search_added_with_defaults"].get<bool>() ? " (defaults)" : "") << " | " << out["long_run_requests"] << " | "
    << share(out["at_answer"]) << " | " << share(out["above_10pct"]) << " | "
    << (brute_ok ? fixed(out["brute_force_qps"].get<double>(), 3) + " (fails at " + fixed(out["brute_force_upper_qps"].get<double>(), 3) + ")"
                 : std::string(out["checks"].contains("within_5pct_of_brute_force") ? "not bracketed" : "not run (--hold-only)"))
    << " | " << (brute_ok ? (out["answer_error_vs_brute_force"].get<double>() >= 0 ? "+" : "") + fixed(100 * out["answer_error_vs_brute_force"].get<double>(), 1) + "%" : std::string("n/a"))
    << " | " << (out["passed"].get<bool>() ? "pass" : "FAIL") << " |\n";
  return t.str();
}

}  // namespace

int cmd_check_capacity(const Args& args) {
  std::string file, preset, format = "table";
  bool all = false, hold_only = false;
  double scale = 20;
  int64_t jobs = 1;
  std::vector<std::string> files;
  std::string problem;
  Flags flags("check-capacity");
  CommandBudget budget("check-capacity");
  budget.flag(flags).text("--preset", &preset).boolean("--all", &all).boolean("--hold-only", &hold_only)
      .text("--format", &format, {"table", "json", "markdown"}).number("--scale", &scale, 1, 1000)
      .integer("--jobs", &jobs, 1, 256).positional(&files, 1);
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (!files.empty()) file = files[0];
  if (static_cast<int>(!file.empty()) + static_cast<int>(!preset.empty()) + static_cast<int>(all) != 1)
    return usage_error("check-capacity takes exactly one of FILE, --preset ID or --all");

  std::vector<json> scenarios;
  if (all) {
    // Every shipped scenario preset with a serving SLO, as shipped.
    const json list = read_engine_envelope(sightline::api::list_presets("scenarios"));
    if (!list["ok"].get<bool>()) return report_error(list);
    for (const json& p : list["result"])
      if (p.contains("serving") && p["serving"].is_object() && p["serving"].contains("slo")) scenarios.push_back(p);
  } else {
    std::string text;
    if (const int status = read_scenario_text(file, preset, text)) return status;
    json scenario;
    try {
      scenario = parse_json_document(text, preset.empty() ? file : "preset " + preset);
    } catch (const SightlineError& e) {
      return report_error(e);
    }
    // Validate as given first, so a bad file gets its located error.
    const json v = read_engine_envelope(sightline::api::validate_scenario(text));
    if (!v["ok"].get<bool>()) return report_error(v);
    scenarios.push_back(scenario);
  }

  try {
    for (const json& s : scenarios) budget.add(check_work_units(s, scale), "preset or file " + s.value("id", file));
  } catch (const SightlineError& e) {
    return report_error(e);
  }
  // Every capacity search first; then the long runs' work, figured at each
  // answer, is budgeted before any long run starts (long runs that --all
  // shares between presets count once).
  std::vector<std::optional<Searched>> searched(scenarios.size());
  std::vector<std::string> search_errors(scenarios.size());
  try {
    budget.restart("after the capacity searches, before any long run");
    std::set<std::string> figured;
    for (size_t i = 0; i < scenarios.size(); ++i) {
      try {
        searched[i] = search_answer(scenarios[i], scale);
      } catch (const SightlineError& e) {
        if (!all) return report_error(e);
        search_errors[i] = e.what();
        continue;
      }
      budget.add(search_work_units(scenarios[i]), "the capacity search of " + scenarios[i].value("id", file));
      if (figured.insert(safe_dump(long_scenario(searched[i]->scenario, searched[i]->answer, searched[i]->n))).second)
        budget.add(long_runs_units(*searched[i], hold_only, scale), "the long runs of " + scenarios[i].value("id", file) + " (" +
                                                      std::to_string(static_cast<int64_t>(kLongRunsAtLeast)) + " of " +
                                                      std::to_string(searched[i]->n) + " requests at the least)");
    }
  } catch (const SightlineError& e) {
    return report_error(e);
  }
  json reports = json::array();
  bool passed = true;
  LongRunCache cache;
  const std::string markdown_head =
      "| Preset | SLO | Answer (req/s) | Long runs (requests) | At the answer | At +10% | Brute force (req/s) | "
      "Answer vs brute force | Check |\n|---|---|---|---|---|---|---|---|---|\n";
  std::string markdown = markdown_head;
  std::string text;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const json& s = scenarios[i];
    json out;
    std::vector<LongRun> done;
    try {
      if (!searched[i]) throw SightlineError(error_code::kInvalidValue, "", search_errors[i]);
      passed = (hold_only ? check_hold(*searched[i], jobs, scale, cache, out, done) : check_long_runs(*searched[i], jobs, cache, out, done)) && passed;
    } catch (const SightlineError& e) {
      if (!all) return report_error(e);
      out = {{"id", s.value("id", std::string())}, {"error", e.what()}, {"passed", false}};
      passed = false;
    }
    if (all && format == "table") std::cerr << s.value("id", std::string()) << ": " << (out["passed"].get<bool>() ? "pass" : "FAIL") << "\n";
    if (format == "table" && !out.contains("error")) text += (all ? "== " + out["id"].get<std::string>() + "\n" : "") + table_text(out, done);
    markdown += out.contains("error") ? "| " + out["id"].get<std::string>() + " | error: " + out["error"].get<std::string>() +
                                            " | | | | | | | FAIL |\n"
                                      : markdown_row(out);
    if (out.contains("error")) text += out["id"].get<std::string>() + ": error: " + out["error"].get<std::string>() + "\n";
    reports.push_back(out);
  }
  if (format == "json") {
    if (all) {
      const json v = read_engine_envelope(sightline::api::version());
      std::cout << safe_dump(json{{"command", "sightline check-capacity --all --scale " + fixed(scale, 0) + (hold_only ? " --hold-only" : "") + " --format json"},
                                  {"engine_version", v["result"]["engine_version"]},
                                  {"scale", scale},
                                  {"presets", reports},
                                  {"markdown", markdown},
                                  {"passed", passed}},
                             2)
                << "\n";
    } else {
      std::cout << safe_dump(reports.front(), 2) << "\n";
    }
  } else {
    std::cout << (format == "markdown" ? markdown : text);
  }
  return passed ? 0 : 1;
}

}  // namespace sightline::cli
