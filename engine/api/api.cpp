#include "api/api.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>

#include "api/inspect_model.hpp"
#include "fit/bench_import.hpp"
#include "fit/calibration_apply.hpp"
#include "fit/calibration_fit.hpp"
#include "jobs/budgeted_job.hpp"
#include "jobs/make_job.hpp"
#include "jobs/run_estimate.hpp"
#include "jobs/run_job.hpp"
#include "core/error.hpp"
#include "core/error_boundary.hpp"
#include "core/json_text.hpp"
#include "core/version.hpp"
#include "perf/cost_bounds.hpp"
#include "presets/preset_store.hpp"
#include "scenario/scenario.hpp"
#include "scenario/metric_catalogue.hpp"
#include "scenario/parameter_catalogue.hpp"
#include "scenario/policy_registry.hpp"
#include "scenario/run_limits.hpp"
#include "serve/limit_facts.hpp"
#include "serve/serving_job.hpp"
#include "search/candidate_reuse.hpp"
#include "search/deployment_search.hpp"
#include "search/training_search.hpp"

namespace sightline::api {

namespace {

std::string ok_envelope(json result) {
  // Runs that report warnings inside their result surface them in the envelope too.
  json warnings = result.is_object() && result.contains("warnings") && result["warnings"].is_array()
                      ? result["warnings"]
                      : json::array();
  json e = {{"ok", true}, {"result", std::move(result)}, {"warnings", std::move(warnings)}};
  return safe_dump(e);
}

std::string error_envelope(const std::string& code, const std::string& path, const std::string& message) {
  json e = {{"ok", false}, {"error", {{"code", code}, {"path", path}, {"message", message}}}};
  return safe_dump(e);
}

// The envelope of last resort, when even an error envelope cannot be built
// (out of memory): a constant, so nothing can throw.
const char* const kOutOfMemoryEnvelope =
    R"({"ok":false,"error":{"code":"internal_error","path":"","message":"out of memory"}})";

// Runs `body` through the one error boundary (core/error_boundary), turning
// every exception into an error envelope. Nothing leaves this function by
// exception: building an envelope can itself fail only for lack of memory,
// which gets the constant envelope. `entry` names the API function.
std::string guarded(const char* entry, const std::function<json()>& body) noexcept {
  try {
    std::string out;
    const std::optional<CaughtError> error = catch_all(
        [&] {
          test_throw_point(std::string("api:") + entry);
          out = ok_envelope(body());
        },
        std::string("api::") + entry);
    return error ? error_envelope(error->code, error->path, error->message) : out;
  } catch (...) {
    return kOutOfMemoryEnvelope;
  }
}

std::string run_to_end(const std::string& scenario_json, IntervalMode mode,
                       int64_t default_units = RunLimits::kDefaultMaxWorkUnits,
                       int64_t ceiling = RunLimits::kApiCeiling) {
  return guarded("run_scenario",
                 [&] { return run_job_to_end(parse_json_text(scenario_json), mode, default_units, ceiling)->result(); });
}

}  // namespace

std::string run_scenario(const std::string& scenario_json) { return run_to_end(scenario_json, IntervalMode::Bounds); }

std::string run_scenario_central_only(const std::string& scenario_json) {
  return run_to_end(scenario_json, IntervalMode::CentralOnly);
}

std::string run_scenario_with_budget(const std::string& scenario_json, bool central_only, int64_t default_units,
                                     int64_t ceiling) {
  return run_to_end(scenario_json, central_only ? IntervalMode::CentralOnly : IntervalMode::Bounds, default_units,
                    std::min(ceiling, RunLimits::kNativeCeiling));
}

std::string search_plan(const std::string& question_json) {
  return guarded("search_plan", [&] {
    const search::DeploymentSearchSpec spec = search::read_deployment_search(parse_json_text(question_json));
    const search::Plan plan = search::plan_deployment_search(spec);
    json candidates = json::array();
    for (size_t i = 0; i < plan.candidates.size(); ++i)
      candidates.push_back({{"index", i}, {"deployment", search::candidate_label(spec, plan.candidates[i])}, {"scenario", plan.scenarios[i]}});
    json pruned = json::array();
    for (const auto& p : plan.pruned) pruned.push_back({{"layout", search::candidate_label(spec, p.layout)}, {"reason", p.reason}});
    // The question's latencies (search/deployment_search.hpp), known before any
    // run: the page heads its table and chart with them while the runs go on.
    return json{{"candidates", candidates},
                {"pruned", pruned},
                {"question_latencies", search::question_latencies_json(spec.ttft_percentile, spec.tpot_percentile)},
                {"space", {{"layouts", plan.space_size}, {"pruned", plan.pruned.size()}, {"candidates", plan.candidates.size()}}}};
  });
}

namespace {

// The runs so far of search_reuse, one entry per candidate (null: not run), with the limits each ran
// under; `limits` reads them from the candidates as the runs did.
std::vector<std::optional<search::CandidateRun>> read_reuse_runs(const json& runs, size_t expected,
                                                                  search::CandidateLimits& limits) {
  if (!runs.is_array()) fail(error_code::kType, "/runs", "expected an array of limit facts or nulls");
  if (runs.size() != expected)
    fail(error_code::kConstraint, "/runs",
         "expected " + std::to_string(expected) + " entries, one per candidate of the plan, got " + std::to_string(runs.size()));
  std::vector<std::optional<search::CandidateRun>> out(expected);
  for (size_t k = 0; k < expected; ++k) {
    if (runs[k].is_null()) continue;
    search::CandidateRun& r = out[k].emplace();
    r.facts = serve::read_limit_facts(runs[k], "/runs/" + std::to_string(k));
    r.outcome.ok = !r.facts.opaque;  // a failed run's facts are opaque: it proves nothing
    if (limits(k)) r.limits = *limits(k);
    else r.facts.opaque = true;
  }
  return out;
}

// The planned question search_reuse answers: its spec, its candidates as each
// run reads them (with the calibration) and their limits, read once. The page
// asks again as each run finishes, with the same question and calibration;
// re-planning 162 candidates and reading their memory plans took ~130 ms of
// wasm CPU an ask, so the last question's plan is kept. It is a pure function
// of the two texts, compared whole, so an answer never depends on the cache.
struct PlannedReuse {
  std::string question_json, calibration_json;
  search::DeploymentSearchSpec spec;
  std::vector<json> scenarios;
  std::vector<std::vector<size_t>> families;
  std::unique_ptr<search::CandidateLimits> limits;  // reads `scenarios`, which stays put
};

std::unique_ptr<PlannedReuse> plan_reuse(const std::string& question_json, const std::string& calibration_json) {
  auto p = std::make_unique<PlannedReuse>();
  p->spec = search::read_deployment_search(parse_json_text(question_json));
  search::Plan plan = search::plan_deployment_search(p->spec);
  const json calibration = parse_json_document(calibration_json, "the calibration");
  p->families = search::seqs_families(plan);
  p->scenarios = std::move(plan.scenarios);  // as each run reads it: with the calibration
  if (!calibration.is_null())
    for (json& s : p->scenarios) s = fit::with_calibration(std::move(s), calibration, "candidate");
  p->limits = std::make_unique<search::CandidateLimits>(p->scenarios);
  p->question_json = question_json;
  p->calibration_json = calibration_json;
  return p;
}

}  // namespace

std::string search_reuse(const std::string& question_json, const std::string& runs_json,
                         const std::string& calibration_json) {
  return guarded("search_reuse", [&] {
    static std::mutex last_mutex;  // native callers may ask from several threads
    static std::unique_ptr<PlannedReuse> last;
    const std::lock_guard<std::mutex> lock(last_mutex);
    if (!last || last->question_json != question_json || last->calibration_json != calibration_json) {
      last.reset();  // a question that fails to plan leaves nothing behind
      last = plan_reuse(question_json, calibration_json);
    }
    PlannedReuse& p = *last;
    const std::vector<std::optional<search::CandidateRun>> runs =
        read_reuse_runs(parse_json_text(runs_json), p.scenarios.size(), *p.limits);
    std::vector<const search::CandidateRun*> ran;
    for (const auto& r : runs) ran.push_back(r ? &*r : nullptr);
    search::ReuseRound round;
    if (search::reuses_runs(p.spec)) round = search::settle_round(p.families, ran, *p.limits);
    else {  // every candidate runs, in one round
      round.reused_from.assign(ran.size(), -1);
      for (size_t k = 0; k < ran.size(); ++k)
        if (!ran[k]) round.next.push_back(k);
    }
    return json{{"reused_from", round.reused_from}, {"next", round.next}};
  });
}

namespace {

// The central results given back for a plan's candidates, one per candidate in plan order.
// `each` names what one result stands for, for the count error.
std::vector<search::CandidateOutcome> read_results(const json& results, const char* path, size_t expected,
                                                   const char* each) {
  if (!results.is_array()) fail(error_code::kType, path, "expected an array of run results");
  // Exactly as many results as runs: the ranking indexes both by position.
  if (results.size() != expected)
    fail(error_code::kConstraint, path,
         "expected " + std::to_string(expected) + " run results, one per " + each + ", got " +
             std::to_string(results.size()));
  std::vector<search::CandidateOutcome> out;
  for (const json& r : results) {
    const bool envelope = r.is_object() && r.contains("ok");
    out.push_back(search::read_candidate_outcome(envelope ? (r.value("ok", false) ? r["result"] : r) : r));
  }
  return out;
}

struct RankInputs {
  search::DeploymentSearchSpec spec;
  search::Plan plan;
  std::vector<search::CandidateOutcome> central;
  std::vector<size_t> picked;  // the interval points' candidates
};

RankInputs rank_inputs(const std::string& question_json, const std::string& results_json) {
  RankInputs in;
  in.spec = search::read_deployment_search(parse_json_text(question_json));
  in.plan = search::plan_deployment_search(in.spec);
  in.central = read_results(parse_json_text(results_json), "/results", in.plan.candidates.size(), "candidate of the plan");
  in.picked = search::interval_candidates(in.spec, in.plan, in.central);
  return in;
}

constexpr CostBound kIntervalBounds[] = {CostBound::Low, CostBound::High};
constexpr CostBound kAllBounds[] = {CostBound::Central, CostBound::Low, CostBound::High};

}  // namespace

std::string search_intervals(const std::string& question_json, const std::string& results_json) {
  return guarded("search_intervals", [&] {
    const RankInputs in = rank_inputs(question_json, results_json);
    json points = json::array();
    for (size_t i : in.picked)
      for (CostBound b : kIntervalBounds)
        points.push_back({{"candidate", i},
                          {"deployment", search::candidate_label(in.spec, in.plan.candidates[i])},
                          {"bound", cost_bound_name(b)},
                          {"scenario", in.plan.scenarios[i]}});
    return json{{"points", points}};
  });
}

std::string search_rank(const std::string& question_json, const std::string& results_json,
                        const std::string& bound_results_json) {
  return guarded("search_rank", [&] {
    const RankInputs in = rank_inputs(question_json, results_json);
    const std::vector<search::CandidateOutcome> bound =
        read_results(parse_json_text(bound_results_json), "/bound_results", 2 * in.picked.size(),
                     "point of search_intervals");
    std::vector<search::CandidateOutcome> low, high;
    for (size_t k = 0; k < in.picked.size(); ++k) {
      low.push_back(bound[2 * k]);
      high.push_back(bound[2 * k + 1]);
    }
    return search::rank_deployment_search(in.spec, in.plan, in.central, low, high).to_json();
  });
}

std::string training_search(const std::string& question_json) {
  return guarded("training_search", [&] {
    const search::TrainingSearchSpec spec = search::read_training_search(parse_json_text(question_json));
    return search::run_training_search(spec, [](size_t n, const std::function<void(size_t)>& task) {
             for (size_t k = 0; k < n; ++k) task(k);
           }).to_json();
  });
}

std::string estimate_work(const std::string& scenario_json, bool central_only) {
  return guarded("estimate_work", [&] {
    json doc = parse_json_text(scenario_json);
    const RunLimits limits = take_run_limits(doc);
    const Scenario s = read_scenario(doc);
    const WorkRange w = sightline::estimate_work(s, central_only ? IntervalMode::CentralOnly : IntervalMode::Bounds, limits);
    return json{{"units", {{"low", w.units_low}, {"high", w.units_high}}},
                {"units_per_request", w.units_per_request},
                {"requests", {{"low", w.requests_low}, {"high", w.requests_high}}},
                {"probe", {{"requests", w.probe_requests}, {"units", w.probe_units}}}};
  });
}

std::string validate_scenario(const std::string& scenario_json) {
  return guarded("validate_scenario", [&] {
    json doc = parse_json_text(scenario_json);
    const RunLimits limits = take_run_limits(doc);
    json resolved = scenario_to_json(read_scenario(doc));
    resolved["limits"] = limits.to_json();
    return resolved;
  });
}

std::string list_presets(const std::string& kind) {
  return guarded("list_presets", [&] {
    if (kind.empty()) return json(preset_kinds());
    bool known = false;
    for (const auto& k : preset_kinds()) known = known || k == kind;
    if (!known) {
      std::string kinds;
      for (const auto& k : preset_kinds()) kinds += (kinds.empty() ? "" : ", ") + k;
      fail(error_code::kInvalidValue, "", "unknown preset kind '" + kind + "'; known: " + kinds);
    }
    json arr = json::array();
    for (const json* p : sightline::list_presets(kind)) arr.push_back(*p);
    return arr;
  });
}

std::string inspect_model(const std::string& model_json) {
  return guarded("inspect_model", [&] { return inspect_model_json(read_model_for_inspection(parse_json_text(model_json))); });
}

std::string import_bench_file(const std::string& name, const std::string& text, const std::string& format) {
  return guarded("import_bench_file", [&] {
    json runs = json::array();
    for (const fit::BenchRun& r : fit::read_bench_file(name, text, format)) runs.push_back(r.to_json());
    return runs;
  });
}

std::string apply_calibration(const std::string& scenario_json, const std::string& calibration_json) {
  return guarded("apply_calibration", [&] {
    return fit::with_calibration(parse_json_text(scenario_json), parse_json_document(calibration_json, "the calibration"),
                            "the scenario");
  });
}

namespace {

// A string member of the fit request, located at `path` when it is not one.
std::string request_text(const json& doc, const char* key, const std::string& path) {
  const json& v = doc[key];
  if (!v.is_string()) fail(error_code::kType, path, std::string(key) + ": expected a string, got " + json_type_name(v));
  return v.get<std::string>();
}

json fit_from_request(const json& doc, const std::function<void(double)>& on_progress, int64_t ceiling) {
  if (!doc.is_object()) fail(error_code::kType, "", "a fit request is a JSON object");
  for (const auto& [key, value] : doc.items())
    if (key != "base" && key != "base_name" && key != "files" && key != "id" && key != "limits")
      fail(error_code::kUnknownKey, "/" + key, "a fit request has no key '" + key + "' (base, base_name, files, id, limits)");
  for (const char* key : {"base", "base_name", "files", "id"})
    if (!doc.contains(key)) fail(error_code::kMissingKey, std::string("/") + key, std::string("a fit request needs '") + key + "'");
  const json& files = doc["files"];
  if (!files.is_array() || files.empty())
    fail(error_code::kType, "/files", "files: expected a non-empty array of {name, text}");
  std::vector<fit::BenchRun> runs;
  std::string source;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string at = "/files/" + std::to_string(i);
    if (!files[i].is_object() || files[i].size() != 2 || !files[i].contains("name") || !files[i].contains("text"))
      fail(error_code::kType, at, "each file is {name, text}");
    const std::string name = request_text(files[i], "name", at + "/name");
    const std::string text = request_text(files[i], "text", at + "/text");
    for (fit::BenchRun& r : fit::read_bench_file(name, text, "")) runs.push_back(std::move(r));
    source += (source.empty() ? "" : ", ") + name;
  }
  fit::FitBase base{doc["base"], request_text(doc, "base_name", "/base_name")};
  const std::string id = request_text(doc, "id", "/id");
  fit::FitOptions options;
  // The same reader and bounds as a scenario's limits section, with the fit's default.
  options.max_work_units = doc.contains("limits")
                               ? read_max_work_units(doc["limits"], "/limits", fit::FitOptions::kDefaultWorkUnits, ceiling)
                               : fit::FitOptions::kDefaultWorkUnits;
  options.on_progress = on_progress;
  return fit::fit_cluster_calibration(base, runs, id, "sightline fit of " + source + " on " + base.name, options);
}

}  // namespace

std::string fit_calibration(const std::string& request_json, const std::function<void(double)>& on_progress,
                            int64_t ceiling) {
  return guarded("fit_calibration", [&] {
    return fit_from_request(parse_json_text(request_json), on_progress,
                            std::max<int64_t>(1, std::min(ceiling, fit::FitOptions::kMaxWorkUnits)));
  });
}

std::string get_preset(const std::string& kind, const std::string& id) {
  return guarded("get_preset", [&] { return require_preset(kind, id, ""); });
}

std::string version() {
  return guarded("version", [] {
    return json{{"engine_version", kEngineVersion},
                {"scenario_schema_version", kScenarioSchemaVersion},
                {"result_schema_version", kResultSchemaVersion}};
  });
}

std::string list_registries() {
  return guarded("list_registries", [] {
    json stacks = json::array();
    for (const json* p : sightline::list_presets("stacks")) stacks.push_back({{"name", p->at("id")}, {"description", p->at("name")}});
    return json{{"metrics", metric_catalogue_json()},
                {"distributions", distribution_catalogue_json()},
                {"memory_parts", memory_parts_json()},
                {"step_parts", step_parts_json()},
                {"parameters", parameter_catalogue_json()},
                {"policies", serve::policy_tables_json()},
                {"cost_tiers",
                 json::array({{{"name", "auto"}, {"description", "target-measured where a calibration ships, else cross-generation"}},
                              {{"name", "target-measured"}, {"description", "efficiency curves fitted from measurements of this GPU"}},
                              {{"name", "cross-generation"}, {"description", "another GPU's curves applied to this GPU's spec sheet"}},
                              {{"name", "roofline"}, {"description", "spec-sheet peaks, no efficiency losses"}}})},
                {"software_stacks", stacks},
                {"dtypes", dtype_names()},
                {"attention", json::array({{{"name", "flash"}, {"description", "FlashAttention: scores never materialized"}},
                                           {{"name", "standard"}, {"description", "materialized scores and probabilities"}}})}};
  });
}

Engine::Engine() = default;
Engine::~Engine() = default;

std::string Engine::start(const std::string& scenario_json) { return start_job(scenario_json, false); }

std::string Engine::start_central_only(const std::string& scenario_json) { return start_job(scenario_json, true); }

std::string Engine::start_at_bound(const std::string& scenario_json, const std::string& bound) {
  return guarded("Engine::start_at_bound", [&] { return json{{"handle", start_single(scenario_json, bound, false)}}; });
}

std::string Engine::start_search_candidate(const std::string& scenario_json) {
  return guarded("Engine::start_search_candidate", [&] {
    return json{{"handle", start_single(scenario_json, cost_bound_name(CostBound::Central), true)}};
  });
}

// One run at a named cost bound, no intervals; a search `candidate` keeps its simulation for limit_facts().
int Engine::start_single(const std::string& scenario_json, const std::string& bound, bool candidate) {
  const CostBound* named = nullptr;
  for (const CostBound& c : kAllBounds)
    if (bound == cost_bound_name(c)) named = &c;
  if (!named) fail(error_code::kInvalidValue, "/bound", "bound must be central, low or high; got '" + bound + "'");
  SingleRun run = start_single_run(parse_json_text(scenario_json), *named, candidate);
  const int handle = next_handle_++;
  jobs_[handle] = std::move(run.job);
  if (candidate) candidates_[handle] = run.serving;
  return handle;
}

std::string Engine::start_job(const std::string& scenario_json, bool central_only) {
  return guarded("Engine::start", [&] {
    std::unique_ptr<BudgetedJob> job =
        start_budgeted_job(parse_json_text(scenario_json), central_only ? IntervalMode::CentralOnly : IntervalMode::Bounds);
    const int handle = next_handle_++;
    jobs_[handle] = std::move(job);
    return json{{"handle", handle}};
  });
}

namespace {
Job& find_job(std::map<int, std::unique_ptr<Job>>& jobs, int handle) {
  auto it = jobs.find(handle);
  if (it == jobs.end()) fail(error_code::kUnknownHandle, "", "no run with handle " + std::to_string(handle));
  return *it->second;
}
}  // namespace

std::string Engine::step(int handle, int max_units) {
  return guarded("Engine::step", [&] {
    Job& job = find_job(jobs_, handle);
    const bool done = job.step(max_units < 1 ? 1 : max_units);
    return json{{"done", done}, {"progress", job.progress()}};
  });
}

std::string Engine::result(int handle) {
  return guarded("Engine::result", [&] {
    Job& job = find_job(jobs_, handle);
    if (job.progress() < 1.0) fail(error_code::kConstraint, "", "run " + std::to_string(handle) + " is not finished");
    json r = job.result();
    jobs_.erase(handle);
    candidates_.erase(handle);
    return r;
  });
}

std::string Engine::limit_facts(int handle) {
  return guarded("Engine::limit_facts", [&] {
    const Job& job = find_job(jobs_, handle);
    const auto it = candidates_.find(handle);
    if (it == candidates_.end()) fail(error_code::kConstraint, "", "run " + std::to_string(handle) + " is not a search candidate");
    if (job.progress() < 1.0) fail(error_code::kConstraint, "", "run " + std::to_string(handle) + " is not finished");
    return serve::limit_facts_to_json(it->second->limit_facts());
  });
}

std::string Engine::cancel(int handle) {
  return guarded("Engine::cancel", [&] {
    candidates_.erase(handle);
    return json{{"cancelled", jobs_.erase(handle) > 0}};
  });
}

}  // namespace sightline::api
