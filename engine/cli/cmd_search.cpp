// sightline search: the serving deployment search (search/deployment_search.hpp),
// with the candidates, then the Pareto points' interval runs, on --jobs threads.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/cli_common.hpp"
#include "cli/command_budget.hpp"
#include "cli/flags.hpp"
#include "core/json_text.hpp"
#include "jobs/make_job.hpp"
#include "search/deployment_search.hpp"

namespace sightline::cli {

namespace {

// The budget question's table: each layout at the highest rate it sustains.
std::string budget_table(const search::DeploymentSearchSpec& spec, const json& r) {
  std::ostringstream s;
  s << "best deployment within " << spec.max_gpus << " GPUs (no target rate), SLO " << r["slo"].dump() << "\n";
  s << "space: " << r["space"]["layouts"] << " layouts, " << r["space"]["pruned"] << " pruned, " << r["space"]["simulated"]
    << " capacity searches (" << r["space"]["requests_simulated"] << " requests)\n";
  s << "accuracy: tier " << r["accuracy"].value("tier", "") << ", 80% intervals from the kernels' low/high cost bounds\n\n";
  s << "  meets  $/Mtok    max req/s  (upper)   GPUs  deployment\n";
  for (const json& c : r["ranked"]) {
    if (c.contains("error")) {
      s << "  error  " << c["deployment"].get<std::string>() << ": " << c["error"].get<std::string>() << "\n";
      continue;
    }
    char line[320];
    std::snprintf(line, sizeof line, "  %-5s  %-8.3f  %-9.3f  %-8.3f  %-4d  %s%s\n", c["meets_slo"].get<bool>() ? "yes" : "no",
                  c["usd_per_million_tokens"].get<double>(), c["max_qps"].get<double>(), c["max_qps_upper"].get<double>(),
                  c["gpus"].get<int>(), c["deployment"].get<std::string>().c_str(), c["pareto"].get<bool>() ? "  (Pareto)" : "");
    s << line;
  }
  s << "\nPareto front ($/Mtok at the highest rate within the SLO vs that rate, 80% intervals):\n";
  for (const json& c : r["pareto_front"]) {
    if (!c.contains("key_metrics")) {
      s << "  " << fixed(c["usd_per_million_tokens"].get<double>(), 3) << " $/Mtok at " << fixed(c["max_qps"].get<double>(), 3)
        << " req/s  " << c["deployment"].get<std::string>() << " (no interval run)\n";
      continue;
    }
    s << "  " << value_with_interval(c["key_metrics"][0], 3) << " $/Mtok at " << value_with_interval(c["key_metrics"][1], 3)
      << " req/s  " << c["deployment"].get<std::string>() << "\n";
  }
  const json& best = r["cheapest_meeting_slo"];
  if (best.is_null()) {
    s << "\nno deployment within the budget met the SLO at any rate searched\n";
  } else {
    s << "\ncheapest per token within the budget: " << best["deployment"].get<std::string>() << " (" << best["gpus"]
      << " GPUs), ";
    if (best.contains("key_metrics"))
      s << value_with_interval(best["key_metrics"][0], 3) << " $/Mtok at " << value_with_interval(best["key_metrics"][1], 3)
        << " req/s";
    else
      s << fixed(best["usd_per_million_tokens"].get<double>(), 3) << " $/Mtok at " << fixed(best["max_qps"].get<double>(), 3) << " req/s";
    s << "; not shown to hold at " << fixed(best["max_qps_upper"].get<double>(), 3) << " req/s\n";
  }
  return s.str();
}

// `reused`: deployments that took a sibling's run (search/candidate_reuse.hpp).
std::string table(const search::DeploymentSearchSpec& spec, const json& r, int64_t reused) {
  if (spec.budget()) return budget_table(spec, r);
  std::ostringstream s;
  s << "target " << spec.target_qps << " req/s within " << spec.max_gpus << " GPUs, SLO " << r["slo"].dump() << "\n";
  s << "space: " << r["space"]["layouts"] << " layouts, " << r["space"]["pruned"] << " pruned, " << r["space"]["simulated"]
    << " deployments simulated (" << r["space"]["requests_simulated"] << " requests)\n";
  if (reused > 0)
    s << "reused: " << reused << " of them took the run of a deployment differing only in max_num_seqs, proven the same run"
      << " (--no-reuse runs them)\n";
  s << "accuracy: tier " << r["accuracy"].value("tier", "") << ", 80% intervals from the kernels' low/high cost bounds\n\n";
  // Every latency quoted at the question's percentile (question_percentile):
  // the table's columns, the front's axis (pareto_axes) and the answer.
  const std::string ttft = search::latency_id("ttft", spec.ttft_percentile), tpot = search::latency_id("tpot", spec.tpot_percentile);
  const std::string ttft_words = search::latency_words("ttft", spec.ttft_percentile);
  const std::string tpot_words = search::latency_words("tpot", spec.tpot_percentile);
  s << "  meets  $/Mtok    " << ttft_words << " ms  " << tpot_words << " ms  verdict    deployment\n";
  for (const json& c : r["ranked"]) {
    if (c.contains("error")) {
      s << "  error  " << c["deployment"].get<std::string>() << ": " << c["error"].get<std::string>() << "\n";
      continue;
    }
    char line[320];
    std::snprintf(line, sizeof line, "  %-5s  %-8.3f  %-11.1f  %-11.1f  %-9s  %s%s\n", c["meets_slo"].get<bool>() ? "yes" : "no",
                  c["usd_per_million_tokens"].get<double>(), c[ttft].get<double>(), c[tpot].get<double>(),
                  c["verdict"].get<std::string>().c_str(), c["deployment"].get<std::string>().c_str(),
                  c["pareto"].get<bool>() ? "  (Pareto)" : "");
    s << line;
  }
  // A key metric of a row by its id (the row's own figure when it had no interval run).
  const auto quoted = [](const json& c, const std::string& id, int digits) {
    const json* m = c.contains("key_metrics") ? find_key_metric(c["key_metrics"], id) : nullptr;
    return m ? value_with_interval(*m, digits) : fixed(c[id].get<double>(), digits);
  };
  s << "\nPareto front among deployments meeting the SLO ($/Mtok vs " << ttft_words << ", 80% intervals):\n";
  for (const json& c : r["pareto_front"]) {
    if (!c.contains("key_metrics")) {
      s << "  " << fixed(c["usd_per_million_tokens"].get<double>(), 3) << " $/Mtok, " << fixed(c[ttft].get<double>(), 1)
        << " ms  " << c["deployment"].get<std::string>() << " (no interval run)\n";
      continue;
    }
    s << "  " << quoted(c, "usd_per_million_tokens", 3) << " $/Mtok, " << ttft_words << " " << quoted(c, ttft, 1)
      << " ms  " << c["deployment"].get<std::string>() << "\n";
  }
  const json& best = r["cheapest_meeting_slo"];
  if (best.is_null()) {
    s << "\nno deployment met the SLO at the target rate\n";
  } else {
    s << "\ncheapest meeting the SLO: " << best["deployment"].get<std::string>() << " (" << best["gpus"] << " GPUs), ";
    if (best.contains("key_metrics"))
      s << quoted(best, "usd_per_million_tokens", 3) << " $/Mtok, " << ttft_words << " " << quoted(best, ttft, 1) << " ms, "
        << tpot_words << " " << quoted(best, tpot, 1) << " ms";
    else
      s << fixed(best["usd_per_million_tokens"].get<double>(), 3) << " $/Mtok";
    s << "; SLO attainment " << fixed(best["slo_attainment"].get<double>(), 4) << " (" << fixed(best["slo_attainment_low"].get<double>(), 4)
      << "-" << fixed(best["slo_attainment_high"].get<double>(), 4) << ") over " << best["requests"] << " requests\n";
  }
  return s.str();
}

// --confirm N: the answer (the cheapest deployment meeting the SLO) run once
// more, as a user would check it: an ordinary simulation of N requests at the
// target rate (at least twice its deciding run), without the steady-state
// sizing, judged on its whole goodput. For the budget question the rate is
// the answer's max_qps, and N is at least twice the search's longest run.
json confirm_answer(const search::DeploymentSearchSpec& spec, const search::Plan& plan, const json& ranked, int64_t requests) {
  const json& best = ranked["cheapest_meeting_slo"];
  if (best.is_null()) return nullptr;
  json s = plan.scenarios.at(best["candidate"].get<size_t>());
  int64_t deciding = best["requests"].get<int64_t>();
  if (best.contains("max_qps")) {
    // The capacity search's runs: its requests_simulated adds up all of them;
    // the longest is at most max_requests_per_run.
    deciding = std::min(deciding, s["serving"]["max_qps_search"]["max_requests_per_run"].get<int64_t>());
    s["serving"].erase("max_qps_search");
    s["serving"]["workload"]["arrival"]["rate_qps"] = best["max_qps"];
  }
  const int64_t n = std::max<int64_t>(requests, 2 * deciding);
  s["serving"].erase("steady_state");
  s["serving"]["workload"]["num_requests"] = n;
  s["serving"]["limits"] = {{"max_requests", n}, {"max_sim_time_s", 1e7}, {"max_events", 1000000000}};
  auto job = make_single_job(read_scenario(s));
  while (!job->step(1 << 20)) {
  }
  const json m = job->result()["metrics"];
  const json& slo = s["serving"]["slo"];
  const double attainment = m["goodput"]["slo_attainment"].get<double>();
  json c = {{"deployment", best["deployment"]},
          {"requests", n},
          {"completed", m["requests"]["completed"]},
          {"slo_attainment", attainment},
          {"required_attainment", slo.value("attainment", 0.0)},
          {"meets_slo", attainment >= slo.value("attainment", 0.0)},
          // its latencies at the question's percentiles, as the search quotes them
          {search::latency_id("ttft", spec.ttft_percentile), m["ttft_ms"][search::percentile_name(spec.ttft_percentile)]},
          {search::latency_id("tpot", spec.tpot_percentile), m["tpot_ms"][search::percentile_name(spec.tpot_percentile)]}};
  if (best.contains("max_qps")) c["rate_qps"] = best["max_qps"];
  return c;
}

std::string confirmation_text(const search::DeploymentSearchSpec& spec, const json& c) {
  if (c.is_null()) return "\nconfirmation: no answer to confirm\n";
  std::ostringstream s;
  s << "\nconfirmation run (" << c["requests"] << " requests, no steady-state sizing): " << c["deployment"].get<std::string>()
    << ": SLO attainment " << fixed(c["slo_attainment"].get<double>(), 4) << " (needs "
    << fixed(c["required_attainment"].get<double>(), 2) << "), " << search::latency_words("ttft", spec.ttft_percentile) << " "
    << fixed(c[search::latency_id("ttft", spec.ttft_percentile)].get<double>(), 1) << " ms, "
    << search::latency_words("tpot", spec.tpot_percentile) << " "
    << fixed(c[search::latency_id("tpot", spec.tpot_percentile)].get<double>(), 1) << " ms: "
    << (c["meets_slo"].get<bool>() ? "meets the SLO" : "MISSES the SLO") << "\n";
  return s.str();
}

// A candidate's estimate is the first central run `run` would make of it (its
// fewest requests). The search makes more: the steady-state sizing reruns an
// undecided candidate longer (up to max_requests), and the Pareto points add
// their two interval runs. Measured on examples/search-llama3-70b.json
// (2026-11-29, docs/limits.md): its 162 candidates' estimates sum to 9.9e6
// units, and the search took 138.9 s of CPU (--jobs 1), 14 us per estimated
// unit: 4.7 units at run's 3 us each, rounded up so that the default budget
// (20M units) admitted at most about 56 s of CPU. Since a unit counts the
// sequences stepped and the prompts arrived (2026-12-01), the candidates'
// estimates are 2.16x what they were (2.14e7 in all against 9.9e6), and the
// default 4x (80M): 9 units per estimated unit keep its share of the search,
// 80M admitting about 58 s of those 138.9 s.
constexpr double kSearchWorkPerRunEstimate = 9.0;

}  // namespace

int cmd_search(const Args& args) {
  std::string file, out, format = "table";
  int64_t top = 20;  // rows of a training search's table
  int64_t confirm = 0;  // requests of the answer's confirmation run (0: none)
  bool no_reuse = false;  // every candidate runs, none takes a proven sibling's run
  int64_t jobs = std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()));
  std::vector<std::string> files;
  std::string problem;
  Flags flags("search");
  CommandBudget budget("search");
  budget.flag(flags).integer("--jobs", &jobs, 1, 1024).integer("--top", &top, 1, 1000000)
      .integer("--confirm", &confirm, 1, 10000000).boolean("--no-reuse", &no_reuse)
      .text("--format", &format, {"table", "json"}).text("--out", &out).positional(&files, 1);
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (!files.empty()) file = files[0];
  if (file.empty()) return usage_error("search needs a search question file (or '-')");
  std::string text;
  if (!read_file(file, text)) {
    std::cerr << "error [io_error] at '': cannot read " << file << "\n";
    return 1;
  }
  try {
    const json doc = parse_json_text(text);
    // A question with a "kind" is a training search (search/training_search.hpp).
    if (doc.is_object() && doc.contains("kind"))
      return run_training_search(doc, jobs, format, out, static_cast<size_t>(top), budget);
    const search::DeploymentSearchSpec spec = search::read_deployment_search(doc);
    const search::Plan plan = search::plan_deployment_search(spec);
    // The search's work before any candidate runs: each candidate's central
    // run as `run` estimates it, times what the search measured to make of
    // it (kSearchWorkPerRunEstimate), and the confirmation's requests (an
    // event each, at the least).
    for (size_t k = 0; k < plan.scenarios.size(); ++k)
      budget.add(kSearchWorkPerRunEstimate * run_work_units(plan.scenarios[k], true),
                 "candidate " + std::to_string(k + 1) + " of " + std::to_string(plan.scenarios.size()) + ", " +
                     search::candidate_label(spec, plan.candidates[k]) + ", in " + file);
    if (confirm > 0) budget.add(static_cast<double>(confirm), "the --confirm run of " + std::to_string(confirm) + " requests");
    std::vector<int> reused_from;
    search::RunOptions options;
    options.reuse_runs = !no_reuse;
    options.reused_from = &reused_from;
    const auto runs = search::run_deployment_plan(
        spec, plan, [&](size_t n, const std::function<void(size_t)>& task) { parallel_for(n, jobs, task); }, options);
    const int64_t reused = std::count_if(reused_from.begin(), reused_from.end(), [](int i) { return i >= 0; });
    json r = search::rank_deployment_search(spec, plan, runs.central, runs.low, runs.high).to_json();
    if (confirm > 0) r["confirmation"] = confirm_answer(spec, plan, r, confirm);
    write_output(out, format == "json" ? r.dump(2) + "\n"
                                       : table(spec, r, reused) + (confirm > 0 ? confirmation_text(spec, r["confirmation"]) : ""));
  } catch (const SightlineError& e) {
    return report_error(e);
  }
  return 0;
}

}  // namespace sightline::cli
