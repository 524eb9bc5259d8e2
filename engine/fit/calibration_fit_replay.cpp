#include "fit/calibration_fit_replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>

#include "fit/bench_server_settings.hpp"
#include "fit/calibration_apply.hpp"
#include "jobs/budgeted_job.hpp"
#include "jobs/run_estimate.hpp"
#include "jobs/run_job.hpp"
#include "core/error.hpp"
#include "core/error_boundary.hpp"
#include "perf/host_overhead.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_sections.hpp"

namespace sightline::fit {

namespace {

// The default policy of the software stack the scenario `s` names ("" for
// a stack without one).
std::string stack_default_policy(const json& s) {
  const json* cost_model = s.contains("cost_model") ? &s["cost_model"] : nullptr;
  const json named = cost_model && cost_model->is_object() && cost_model->contains("software_stack")
                         ? (*cost_model)["software_stack"]
                         : json(kDefaultSoftwareStack);
  const SoftwareStack stack = read_software_stack(named, "/cost_model/software_stack");
  return stack.default_scheduler ? stack.default_scheduler->policy : "";
}

// The scheduler policy the scenario `s` runs, by the scenario reader's rule
// (its stack read only when the scenario names no policy).
std::string scheduler_policy_of(const json& s) {
  const json* scheduler = s.contains("serving") && s["serving"].contains("scheduler") ? &s["serving"]["scheduler"] : nullptr;
  const std::string given = scheduler && scheduler->is_object() && scheduler->contains("policy") &&
                                    (*scheduler)["policy"].is_string()
                                ? (*scheduler)["policy"].get<std::string>()
                                : "";
  return serve::scheduler_policy_run(given, given.empty() ? stack_default_policy(s) : "");
}

// The scenario key a server setting is written at: the prefill token budget
// is chunk_size under the chunked_prefill policy, max_num_batched_tokens otherwise.
std::string replayed_key(const BenchSetting& b, const std::string& policy) {
  return b.key == "max_num_batched_tokens" && policy == "chunked_prefill" ? "chunk_size" : b.key;
}

// Where in the user's documents a replay error belongs: a workload path of
// the replayed scenario came from the benchmark file (its key), anything else
// from the base scenario the user wrote.
[[noreturn]] void relocate_replay_error(const FitBase& base, const BenchRun& run, const CaughtError& e) {
  const std::string& path = e.path;
  const std::string& msg = e.message;
  const std::string& code = e.code;
  auto under = [&](const char* prefix) { return path.rfind(prefix, 0) == 0; };
  std::string source;
  if (under("/serving/workload/prompt_tokens")) source = run.prompt_range ? run.prompt_range->source : run.prompt_source;
  else if (under("/serving/workload/output_tokens")) source = run.output_range ? run.output_range->source : run.output_source;
  else if (under("/serving/workload/arrival")) source = run.load_source;
  else if (under("/serving/workload/num_requests")) source = run.requests_source;
  else if (under("/model") && !run.replay_model.empty()) source = "--model-of";
  for (const BenchSetting& b : run.server_settings) {
    const std::string at = "/serving/" + b.section + "/";
    if (source.empty() && (under((at + b.key).c_str()) ||
                           (b.key == "max_num_batched_tokens" && under((at + "chunk_size").c_str()))))
      source = b.from;
  }
  if (!source.empty())
    fail(code.c_str(), source,
         run.file + run.where + ": replaying this run on " + base.name + " failed at the value read from " + source + ": " +
             msg);
  fail(code.c_str(), path, base.name + ": replaying " + run.file + run.where + " on this base scenario failed: " + msg);
}

// Runs `body` (a replay of `run` on the base scenario); what it throws is
// relocated into the user's documents.
void relocated(const FitBase& base, const BenchRun& run, const std::function<void()>& body) {
  if (const std::optional<CaughtError> e = catch_all(body, "api::run_scenario"))
    relocate_replay_error(base, run, *e);
}

// MLPerf's LoadGen hands the system under test token ids (its data sets ship
// tokenized), so the replay's front end tokenizes no prompt: the base's stack,
// written out in full, with tokenize_us_per_token 0 (docs/serving.md, "From
// arrival to first token").
void hand_token_ids(json& s) {
  json& cost_model = cost_model_section(s, "the base scenario");
  const json named = cost_model.contains("software_stack") ? cost_model["software_stack"] : json(kDefaultSoftwareStack);
  SoftwareStack stack = read_software_stack(named, "/cost_model/software_stack");
  if (stack.tokenize_us_per_token == 0) return;
  stack.tokenize_us_per_token = 0;
  cost_model["software_stack"] = stack.to_json();
}

}  // namespace

int64_t replay_requests(const BenchRun& run) {
  const int64_t n = run.replay_requests > 0 ? run.replay_requests : run.stop_s > 0 ? run.sent : run.requests;
  return std::max<int64_t>(1, std::min(n, kMaxReplayRequests));
}

double replay_stop_s(const BenchRun& run) {
  if (!(run.stop_s > 0)) return 0;
  // A replay cut to fewer requests (the work budget) keeps the rate: the
  // window shrinks with the count.
  return run.stop_s * static_cast<double>(replay_requests(run)) / static_cast<double>(std::max<int64_t>(1, run.sent));
}

std::vector<FitTarget> fit_targets(const BenchRun& run) {
  std::vector<FitTarget> t;
  auto take = [&](std::initializer_list<std::pair<const char*, const char*>> choices) {
    for (const auto& [metric, statistic] : choices)
      if (const BenchFigure* f = run.figure(metric)) {
        t.push_back({metric, f->value, f->source, statistic, f->rel_se});
        return;
      }
  };
  if (run.load == "batch") {
    take({{"output_tokens_per_s", "output_tokens_per_s"}});
    return t;
  }
  take({{"ttft_mean_ms", "ttft_mean"}, {"ttft_median_ms", "ttft_p50"}});
  take({{"tpot_mean_ms", "tpot_mean"}, {"itl_mean_ms", "itl_mean"}, {"itl_median_ms", "itl_p50"}});
  return t;
}

void check_stopped_count(const std::string& base_name, const BenchRun& run, int64_t completed) {
  if (!(run.stop_s > 0)) return;
  const double replayed = static_cast<double>(replay_requests(run));
  const double scale = replayed / static_cast<double>(std::max<int64_t>(1, run.sent));
  const double expected = static_cast<double>(run.sent - run.cut) * scale;
  const double tolerance = 3 * std::sqrt(replayed) + static_cast<double>(run.cut) * scale;
  if (std::fabs(static_cast<double>(completed) - expected) <= tolerance) return;
  char what[256];
  std::snprintf(what, sizeof what,
                "stopped at the benchmark's end (%.4g s), this run completes %lld requests where the run completed "
                "%.0f, more than %.0f apart (3 sqrt(sent) + the requests the run had in flight)",
                replay_stop_s(run), static_cast<long long>(completed), expected, tolerance);
  fail(error_code::kConstraint, run.requests_source,
       run.file + run.where + ": replayed on " + base_name + " without calibration and " + what +
           ": a replay that finishes far more or far fewer requests than the run describes another run; no "
           "calibration is written");
}

json scenario_for_bench_run(const json& base, const BenchRun& run, const json& calibration) {
  if (!base.is_object() || !base.contains("serving") || !base["serving"].is_object())
    fail(error_code::kConstraint, "/serving", "the base scenario of a fit must be a serving scenario");
  if (!run.prompt_tokens_mean)
    fail(error_code::kMissingKey, run.where,
         run.file + run.where + ": the file does not record prompt lengths: give --prompt-tokens " + run.file + "=N");
  json s = base;
  if (!run.replay_model.empty()) s["model"] = run.replay_model;  // same cluster and stack, another model
  json& serving = s["serving"];
  serving["mode"] = "simulate";
  if (run.server_max_num_seqs > 0) {
    if (!serving.contains("scheduler") || !serving["scheduler"].is_object()) serving["scheduler"] = json::object();
    serving["scheduler"]["max_num_seqs"] = run.server_max_num_seqs;
  }
  // The server's scheduler and KV settings (SGLang's server_info), as it ran them.
  std::string policy = run.server_settings.empty() ? "" : scheduler_policy_of(s);
  for (const BenchSetting& b : run.server_settings)
    if (b.section == "scheduler" && b.key == "policy") policy = b.value.get<std::string>();
  for (const BenchSetting& b : run.server_settings) {
    json& section = serving[b.section];
    if (!section.is_object()) section = json::object();
    section[replayed_key(b, policy)] = b.value;
  }
  serving.erase("steady_state");
  json& w = serving["workload"];
  if (!w.is_object()) w = json::object();
  w.erase("duration_s");
  w.erase("shared_prefix");
  if (run.load == "burst" || run.load == "batch") {
    w["arrival"] = {{"process", "all_at_once"}};
  } else if (run.load == "closed_loop") {
    w["arrival"] = {{"process", "closed_loop"}, {"concurrency", run.concurrency}};
  } else {
    w["arrival"] = {{"process", run.arrival}, {"rate_qps", run.rate_qps}};
    if (run.arrival == "gamma") w["arrival"]["cv"] = std::min(100.0, std::max(0.01, run.arrival_cv));
    // A cap at or above the replayed count never binds: it is the same run.
    if (run.max_concurrency > 0) {
      w["arrival"]["max_concurrency"] = std::min(run.max_concurrency, replay_requests(run));
      serving.erase("max_qps_search");  // a search of the rate has no meaning behind a client's cap
    }
  }
  w["num_requests"] = replay_requests(run);
  // The generator's range where the file names it (BenchRun::prompt_range), else the recorded mean.
  auto lengths = [](const std::optional<BenchRun::LengthRange>& range, double mean) {
    if (range) return json{{"dist", "uniform"}, {"min", range->min}, {"max", range->max}};
    return json{{"dist", "fixed"}, {"value", std::max<int64_t>(1, std::llround(mean))}};
  };
  w["prompt_tokens"] = lengths(run.prompt_range, *run.prompt_tokens_mean);
  if (run.output_tokens_mean) w["output_tokens"] = lengths(run.output_range, *run.output_tokens_mean);
  if (run.format == "mlperf") hand_token_ids(s);
  return with_calibration(std::move(s), calibration, "the base scenario");
}

Replay replay_run(const FitBase& base, const BenchRun& run, const json& calibration) {
  std::unique_ptr<Job> job;
  relocated(base, run, [&] {
    job = run_job_to_end(scenario_for_bench_run(base.doc, run, calibration), IntervalMode::CentralOnly,
                         RunLimits::kDefaultMaxWorkUnits, RunLimits::kApiCeiling, replay_stop_s(run));
    (void)job->figure("requests_completed");  // over its budget: the located limit_exceeded, relocated
  });
  // The run's typed figures by catalogue id (Missing: the run has none).
  auto figure = [&](const char* id) -> std::optional<double> {
    const KeyMetric k = job->figure(id);
    return k.numeric() ? std::optional<double>(k.value) : std::nullopt;
  };
  Replay p;
  p.completed = static_cast<int64_t>(figure("requests_completed").value_or(0));
  // A distribution's mean (and median) with its relative standard error.
  auto read = [&](const char* dist, const char* mean_key, const char* p50_key) {
    const std::string d = dist;
    const double n = figure((d + "_count").c_str()).value_or(0);
    const double stddev = figure((d + "_stddev_ms").c_str()).value_or(0);
    const std::optional<double> mean = figure((d + "_mean_ms").c_str());
    if (!mean) return;
    p.value[mean_key] = *mean;
    if (*mean > 0 && n > 0) p.rel_se[mean_key] = stddev / *mean / std::sqrt(n);
    // A median's standard error is about 1.25 times the mean's.
    if (const std::optional<double> p50 = p50_key ? figure((d + "_p50_ms").c_str()) : std::nullopt) {
      p.value[p50_key] = *p50;
      if (*mean > 0 && n > 0) p.rel_se[p50_key] = 1.25 * stddev / *mean / std::sqrt(n);
    }
  };
  read("ttft", "ttft_mean", "ttft_p50");
  read("tpot", "tpot_mean", nullptr);
  read("itl", "itl_mean", "itl_p50");
  if (const std::optional<double> tput = figure("output_tokens_per_s")) p.value["output_tokens_per_s"] = *tput;
  return p;
}

int64_t replay_work_units(const FitBase& base, const BenchRun& run) {
  int64_t units = 0;
  std::optional<Scenario> replay;
  relocated(base, run, [&] {
    json doc = scenario_for_bench_run(base.doc, run, nullptr);
    const RunLimits limits = take_run_limits(doc);
    replay.emplace(read_scenario(doc));
    // Counted in events, the measure FitOptions' budget was sized in (a
    // replay is one deployment at fixed lengths: its events cost alike).
    const WorkRange w = estimate_work(*replay, IntervalMode::CentralOnly, limits);
    units = static_cast<int64_t>(std::min(w.events_high, static_cast<double>(limits.max_work_units) / w.units_per_event));
  });
  // Before any replay (every fit sizes its replays first): the deployment the
  // file reports, against the replay's; a contradiction is the file's to locate.
  bench::check_server_deployment(*replay, run);
  return units;
}

std::vector<std::string> size_replays(const FitBase& base, std::vector<BenchRun>& runs, int64_t units_per_evaluation) {
  // Each run's work per replayed request, priced at the smallest count the
  // fit would replay (the estimate grows about linearly with the count).
  std::vector<double> per_request(runs.size());
  std::vector<int64_t> wanted(runs.size());
  const double budget = static_cast<double>(units_per_evaluation);
  double at_most = 0, at_least = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    wanted[i] = replay_requests(runs[i]);
    runs[i].replay_requests = std::min(wanted[i], kMinReplayRequests);
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    per_request[i] = static_cast<double>(std::max<int64_t>(1, replay_work_units(base, runs[i]))) /
                     static_cast<double>(runs[i].replay_requests);
    at_most += per_request[i] * static_cast<double>(wanted[i]);
    at_least += per_request[i] * static_cast<double>(runs[i].replay_requests);
    // Short even at the smallest counts: the fit's own estimate refuses it
    // (calibration_fit's cap_evaluations), so pricing the rest is no use.
    if (at_least > 2 * budget) return {};
  }
  auto cost_at = [&](int64_t cap) {
    double c = 0;
    for (size_t i = 0; i < runs.size(); ++i)
      c += per_request[i] * static_cast<double>(std::min(wanted[i], std::max(cap, kMinReplayRequests)));
    return c;
  };
  // The largest common count the budget pays for (bisection on whole requests).
  int64_t cap = *std::max_element(wanted.begin(), wanted.end());
  if (at_most > budget) {
    int64_t lo = kMinReplayRequests, hi = cap;
    if (at_least >= budget) hi = lo;
    while (hi - lo > 1) {
      const int64_t mid = lo + (hi - lo) / 2;
      (cost_at(mid) <= budget ? lo : hi) = mid;
    }
    cap = lo;
  }
  std::vector<std::string> cut;
  for (size_t i = 0; i < runs.size(); ++i) {
    runs[i].replay_requests = std::min(wanted[i], std::max(cap, kMinReplayRequests));
    if (runs[i].replay_requests < runs[i].requests)
      cut.push_back(runs[i].file + runs[i].where + ": replayed " + std::to_string(runs[i].replay_requests) + " of the " +
                    std::to_string(runs[i].requests) + " requests the run completed (" +
                    (runs[i].replay_requests < wanted[i] ? "what the work budget pays for: raise --max-work-units for more"
                                                         : "the most a replay makes") +
                    "); a run that built a backlog is predicted with less of it");
  }
  return cut;
}

}  // namespace sightline::fit
