// sightline check-capacity: checks a max-QPS answer against brute force, the
// way a user would check it by hand. The scenario's capacity search gives the
// answer; then plain runs of the same scenario, `--scale` times longer than
// the search's runs, at fixed rates:
//   - at the answer, the long run must meet the SLO;
//   - at 10% above it, the long run must miss it;
//   - the brute-force capacity (the highest rate whose long run meets the
//     SLO, found on a grid of rates around the answer and refined by
//     bisection on long runs) must lie within 5% of the answer.
// A long run "meets the SLO" when every request completes and the share of
// all its requests within every bound of the SLO (its goodput attainment)
// reaches slo.attainment: no warm-up is skipped and no statistics are
// applied, so the check does not share the search's steady-state verdict.
// The long runs are long enough for the start-up and the drain to be a small
// share of them, and for an overload to show as queueing (a run that is
// `scale` times longer queues `scale` times more behind an overload).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include "api/api.hpp"
#include "cli/cli_common.hpp"
#include "core/json_text.hpp"

namespace sightline::cli {

namespace {

constexpr double kAboveShare = 1.10;     // the rate that must fail: 10% above the answer
constexpr double kTolerance = 0.05;      // the answer within 5% of brute force
constexpr double kBisectPrecision = 0.01;  // brute force refined to 1%
const double kGrid[] = {0.8, 0.9, 1.0, 1.1, 1.2};
constexpr int kMaxGridExtensions = 6;    // widen the grid (x0.8 / x1.25) at most this many times

struct LongRun {
  double qps = 0;
  double attainment = 0;
  int64_t completed = 0;
  double goodput_qps = 0;
  double ttft_p99_ms = 0;
  bool meets = false;
  std::string error;
};

json run_json(const LongRun& r) {
  return {{"qps", r.qps}, {"slo_attainment", r.attainment}, {"completed", r.completed}, {"goodput_qps", r.goodput_qps},
          {"ttft_p99_ms", r.ttft_p99_ms}, {"meets_slo", r.meets}};
}

// The scenario as a plain run of `requests` at `qps`: no search, no compare.
json long_scenario(json s, double qps, int64_t requests) {
  json& sv = s["serving"];
  sv.erase("max_qps_search");
  sv.erase("compare");
  sv.erase("steady_state");
  sv.erase("outputs");
  sv["workload"]["arrival"]["rate_qps"] = qps;
  sv["workload"]["num_requests"] = requests;
  sv["workload"].erase("duration_s");
  sv["limits"] = {{"max_requests", requests}, {"max_events", 1000000000}, {"max_sim_time_s", 1e7}};
  return s;
}

LongRun long_run(const json& scenario, double qps, int64_t requests, double target) {
  LongRun r;
  r.qps = qps;
  const json env = json::parse(sightline::api::run_scenario_central_only(safe_dump(long_scenario(scenario, qps, requests))));
  if (!env["ok"].get<bool>()) {
    r.error = env["error"].value("message", std::string("run failed"));
    return r;
  }
  const json& m = env["result"]["metrics"];
  r.attainment = m["goodput"].value("slo_attainment", 0.0);
  r.goodput_qps = m["goodput"].value("requests_per_s", 0.0);
  r.completed = m["requests"].value("completed", int64_t{0});
  if (m.contains("ttft_ms") && m["ttft_ms"].is_object()) r.ttft_p99_ms = m["ttft_ms"].value("p99", 0.0);
  r.meets = r.completed == requests && r.attainment >= target;
  return r;
}

}  // namespace

int cmd_check_capacity(const Args& args) {
  std::string file, preset, format = "table";
  double scale = 20;
  int64_t jobs = 1;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--preset" && i + 1 < args.size()) preset = args[++i];
    else if (args[i] == "--format" && i + 1 < args.size()) format = args[++i];
    else if (args[i] == "--scale" && i + 1 < args.size()) {
      try {
        scale = std::stod(args[++i]);
      } catch (...) {
        return usage_error("--scale takes a number");
      }
      if (!(scale >= 1 && scale <= 1000)) return usage_error("--scale must be between 1 and 1000");
    } else if (args[i] == "--jobs" && i + 1 < args.size()) {
      try {
        jobs = std::stoll(args[++i]);
      } catch (...) {
        return usage_error("--jobs takes a number");
      }
      if (jobs < 1 || jobs > 256) return usage_error("--jobs must be between 1 and 256");
    } else if (file.empty() && (args[i] == "-" || args[i].rfind("--", 0) != 0)) file = args[i];
    else return usage_error("unexpected argument '" + args[i] + "'");
  }
  if (format != "table" && format != "json") return usage_error("unknown format '" + format + "'");
  if (file.empty() == preset.empty()) return usage_error("check-capacity takes exactly one of FILE or --preset ID");
  std::string text;
  if (!preset.empty()) {
    json p = json::parse(sightline::api::get_preset("scenarios", preset));
    if (!p["ok"].get<bool>()) return report_error(p);
    text = safe_dump(p["result"]);
  } else if (!read_file(file, text)) {
    std::cerr << "error [io_error] at '': cannot read " << file << "\n";
    return 1;
  }
  json scenario;
  try {
    scenario = json::parse(text);
  } catch (const std::exception&) {
    std::cerr << "error [parse_error] at '': the scenario is not valid JSON\n";
    return 1;
  }
  // Validate as given first, so a bad file gets its located error.
  {
    const json v = json::parse(sightline::api::validate_scenario(text));
    if (!v["ok"].get<bool>()) return report_error(v);
  }
  if (!scenario.is_object() || !scenario.contains("serving") || !scenario["serving"].is_object() ||
      !scenario["serving"].contains("slo")) {
    std::cerr << "error [missing_key] at '/serving/slo': check-capacity needs a serving scenario with an slo\n";
    return 1;
  }
  // Long runs are judged by their joint attainment (goodput's share); a bound
  // judged alone at a percentile is not, so such an SLO is refused, not
  // misjudged.
  if (const auto pit = scenario["serving"]["slo"].find("percentiles"); pit != scenario["serving"]["slo"].end())
    for (const auto& [metric, pct] : pit->items())
      if (pct != "joint") {
        std::cerr << "error [unsupported] at '/serving/slo/percentiles/" << metric
                  << "': check-capacity judges long runs by the share of requests within every bound (slo.attainment); "
                     "a bound judged alone at a percentile is not checked yet\n";
        return 1;
      }
  // A scenario with an SLO but no search gets the search's defaults: the
  // answer the page's capacity search gives for it.
  bool added_search = false;
  if (!scenario["serving"].contains("max_qps_search")) {
    scenario["serving"]["max_qps_search"] = json::object();
    added_search = true;
  }
  json searched = scenario;
  searched["serving"].erase("compare");
  const json env = json::parse(sightline::api::run_scenario_central_only(safe_dump(searched)));
  if (!env["ok"].get<bool>()) return report_error(env);
  const json& q = env["result"]["max_qps"];
  const double answer = q.value("qps", 0.0);
  const double target = q["slo"].value("attainment", 0.9);
  const double service = q.value("service_rate_qps", 0.0);
  if (!(answer > 0)) {
    std::cerr << "error [invalid_value] at '/serving/max_qps_search': the capacity search found no rate that meets the SLO\n";
    return 1;
  }
  // Long runs: `scale` x the search's shortest run, and at least twice the
  // longest run that decided the answer.
  int64_t deciding = 0;
  for (const json& run : q["runs"])
    if (run.value("qps", 0.0) == answer) deciding = std::max(deciding, run.value("requests", int64_t{0}));
  const int64_t floor_requests = q.value("requests_per_run", int64_t{600});
  const int64_t n = std::min<int64_t>(2000000, std::max<int64_t>(static_cast<int64_t>(std::llround(scale * static_cast<double>(floor_requests))), 2 * deciding));

  // The grid, run in parallel; widened while all of it meets or all fails.
  std::vector<LongRun> done;
  auto run_rates = [&](const std::vector<double>& rates) {
    std::vector<LongRun> out(rates.size());
    parallel_for(rates.size(), jobs, [&](size_t k) { out[k] = long_run(scenario, rates[k], n, target); });
    for (const auto& r : out) {
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
  try {
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
  } catch (const SightlineError& e) {
    return report_error(e);
  }
  std::sort(done.begin(), done.end(), [](const LongRun& a, const LongRun& b) { return a.qps < b.qps; });
  const LongRun* at = nullptr;
  const LongRun* above = nullptr;
  for (const auto& r : done) {
    if (r.qps == answer * kGrid[2]) at = &r;
    if (r.qps == answer * kGrid[3]) above = &r;
  }
  const bool brute_ok = lo > 0 && hi < 1e300;
  const double error = brute_ok ? answer / lo - 1 : 0;
  const bool holds = at && at->meets, fails_above = above && !above->meets, within = brute_ok && std::fabs(error) <= kTolerance;
  json grid = json::array();
  for (const auto& r : done) grid.push_back(run_json(r));
  json out = {{"answer_qps", answer},
              {"answer_upper_qps", q["upper_qps"]},
              {"service_rate_qps", service},
              {"slo", q["slo"]},
              {"search_added_with_defaults", added_search},
              {"search_requests_simulated", q["requests_simulated"]},
              {"search_requests_floor", floor_requests},
              {"long_run_requests", n},
              {"long_run_rule", "a plain run of long_run_requests at the rate meets the SLO when every request completes and "
                                "its goodput attainment (share of all its requests within every bound) reaches slo.attainment"},
              {"at_answer", at ? run_json(*at) : json(nullptr)},
              {"above_10pct", above ? run_json(*above) : json(nullptr)},
              {"brute_force_qps", brute_ok ? json(lo) : json(nullptr)},
              {"brute_force_upper_qps", brute_ok ? json(hi) : json(nullptr)},
              {"answer_error_vs_brute_force", brute_ok ? json(error) : json(nullptr)},
              {"runs", grid},
              {"checks", {{"holds_at_answer", holds}, {"fails_10pct_above", fails_above}, {"within_5pct_of_brute_force", within}}},
              {"passed", holds && fails_above && within}};
  if (format == "json") {
    std::cout << safe_dump(out, 2) << "\n";
  } else {
    std::ostringstream t;
    t << "capacity answer      " << fixed(answer, 3) << " req/s (service rate " << fixed(service, 2) << " req/s"
      << (added_search ? "; search defaults added" : "") << ")\n";
    t << "long runs            " << n << " requests each, attainment target " << fixed(target, 3) << "\n";
    for (const auto& r : done)
      t << "  " << fixed(r.qps, 3) << " req/s  attainment " << fixed(r.attainment, 4) << "  "
        << (r.meets ? "meets" : "fails") << "\n";
    t << "brute-force capacity " << (brute_ok ? fixed(lo, 3) + " req/s (fails at " + fixed(hi, 3) + ")" : std::string("not bracketed")) << "\n";
    t << "answer vs brute force " << (brute_ok ? fixed(100 * error, 1) + "%" : std::string("n/a")) << "\n";
    t << "holds at the answer  " << (holds ? "yes" : "NO") << "\n";
    t << "fails 10% above      " << (fails_above ? "yes" : "NO") << "\n";
    t << "within 5%            " << (within ? "yes" : "NO") << "\n";
    std::cout << t.str();
  }
  return holds && fails_above && within ? 0 : 1;
}

}  // namespace sightline::cli
