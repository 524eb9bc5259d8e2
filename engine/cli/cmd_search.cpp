// sightline search: the serving deployment search (search/deployment_search.hpp),
// with the surviving candidates simulated on --jobs threads.
#include <atomic>
#include <iostream>
#include <thread>

#include "cli/cli_common.hpp"
#include "search/deployment_search.hpp"

namespace sightline::cli {

int cmd_search(const Args& args) {
  std::string file, out, format = "table";
  int64_t jobs = std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()));
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--jobs" && i + 1 < args.size()) {
      try {
        jobs = std::stoll(args[++i]);
      } catch (const std::exception&) {
        jobs = 0;
      }
      if (jobs < 1 || jobs > 1024) return usage_error("--jobs takes a whole number from 1 to 1024");
    } else if (args[i] == "--format" && i + 1 < args.size()) {
      format = args[++i];
    } else if (args[i] == "--out" && i + 1 < args.size()) {
      out = args[++i];
    } else if (file.empty() && (args[i] == "-" || args[i].rfind("--", 0) != 0)) {
      file = args[i];
    } else {
      return usage_error("unexpected argument '" + args[i] + "'");
    }
  }
  if (format != "table" && format != "json") return usage_error("unknown format '" + format + "'");
  if (file.empty()) return usage_error("search needs a search file (or '-')");
  std::string text;
  if (!read_file(file, text)) {
    std::cerr << "error [io_error] at '': cannot read " << file << "\n";
    return 1;
  }
  try {
    json doc;
    try {
      doc = json::parse(text);
    } catch (const json::exception& e) {
      fail("parse_error", "", std::string("invalid JSON: ") + e.what());
    }
    const search::DeploymentSearchSpec spec = search::read_deployment_search(doc);
    const search::Plan plan = search::plan_deployment_search(spec);
    std::vector<search::CandidateResult> results(plan.candidates.size());
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t k = next.fetch_add(1); k < results.size(); k = next.fetch_add(1))
        results[k] = search::evaluate_candidate(spec, plan.candidates[k]);
    };
    std::vector<std::thread> pool;
    for (int64_t t = 0; t < std::min<int64_t>(jobs, static_cast<int64_t>(results.size())); ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
    const json r = search::summarize_deployment_search(spec, plan, results);
    if (format == "json") {
      write_output(out, r.dump(2) + "\n");
      return 0;
    }
    std::ostringstream s;
    s << "target " << spec.target_qps << " req/s, SLO " << r["slo"].dump() << "\n";
    s << "space: " << r["space"]["layouts"] << " layouts, " << r["space"]["pruned"] << " pruned, "
      << r["space"]["simulated"] << " deployments simulated\n\n";
    s << "  meets  $/Mtok    P99 TTFT ms  P99 TPOT ms  deployment\n";
    for (const json& c : r["ranked"]) {
      if (c.contains("error")) {
        s << "  error  " << c["deployment"].get<std::string>() << ": " << c["error"].get<std::string>() << "\n";
        continue;
      }
      char line[256];
      std::snprintf(line, sizeof line, "  %-5s  %-8.3f  %-11.1f  %-11.1f  %s\n", c["meets_slo"].get<bool>() ? "yes" : "no",
                    c["usd_per_million_tokens"].get<double>(), c["ttft_p99_ms"].get<double>(),
                    c["tpot_p99_ms"].get<double>(), c["deployment"].get<std::string>().c_str());
      s << line;
    }
    s << "\nPareto front ($/Mtok vs P99 TTFT):\n";
    for (const json& c : r["pareto_front"])
      s << "  " << fixed(c["usd_per_million_tokens"].get<double>(), 3) << " $/Mtok, " << fixed(c["ttft_p99_ms"].get<double>(), 1)
        << " ms  " << c["deployment"].get<std::string>() << "\n";
    const json& best = r["cheapest_meeting_slo"];
    if (best.is_null()) s << "\nno deployment met the SLO at the target rate\n";
    else
      s << "\ncheapest meeting the SLO: " << best["deployment"].get<std::string>() << ", "
        << fixed(best["usd_per_million_tokens"].get<double>(), 3) << " $/Mtok (80% interval "
        << fixed(best["interval_80pct"]["high"]["usd_per_million_tokens"].get<double>(), 3) << "-"
        << fixed(best["interval_80pct"]["low"]["usd_per_million_tokens"].get<double>(), 3) << ")\n";
    write_output(out, s.str());
  } catch (const SightlineError& e) {
    return report_error(e);
  }
  return 0;
}

}  // namespace sightline::cli
