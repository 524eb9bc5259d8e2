#pragma once
// The engine's public API: JSON text in, JSON envelope out. The CLI, the wasm
// bindings and the tests all go through these functions.
//   success: {"ok":true,"result":...,"warnings":[...]}
//   failure: {"ok":false,"error":{"code":...,"path":...,"message":...}}
// No exception escapes.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace sightline {

class Job;
namespace serve {
class ServingJob;
}

namespace api {

std::string run_scenario(const std::string& scenario_json);
// The central run alone: no low/high on key metrics (the result says
// "intervals": "central_only"), a third of the work; for ranking many points.
std::string run_scenario_central_only(const std::string& scenario_json);
// The native CLI's run: the budget when the scenario gives none
// (`default_units`) and the most a scenario may ask for (`ceiling`, at most
// RunLimits::kNativeCeiling = 1e10). The functions above, the page and the
// fuzzer keep the default budget of 1e7, and a scenario may ask for up to
// RunLimits::kApiCeiling = 2e7 there.
std::string run_scenario_with_budget(const std::string& scenario_json, bool central_only, int64_t default_units,
                                     int64_t ceiling);
std::string validate_scenario(const std::string& scenario_json);  // result: the resolved scenario
// What a run will cost before it starts, for a time estimate (jobs/run_estimate.hpp,
// estimate_work): {"units": {"low", "high"}, "units_per_request", "requests": {"low", "high"},
// "probe": {"requests", "units"}} (a caller times the call for its machine's units per second).
std::string estimate_work(const std::string& scenario_json, bool central_only);
std::string list_presets(const std::string& kind);                // kind "" lists the kinds
std::string get_preset(const std::string& kind, const std::string& id);
std::string version();
// What the engine understood of a model: `model_json` is a pasted config.json,
// {"hf_config": ..., "hf_quant_config": ...}, a preset id string or an
// architecture object (api/inspect_model.hpp lists the fields).
std::string inspect_model(const std::string& model_json);
// The runs of one benchmark result file, as `sightline fit --import-only`
// reads them (fit/bench_import.hpp): `name` is the file's name for messages,
// `format` "" detects the format from the structure. result: [run...]; an
// error is located in the file (its JSON pointer, or /line/N of a summary).
std::string import_bench_file(const std::string& name, const std::string& text, const std::string& format);
// The scenario with a cluster calibration (`sightline fit`'s file) in its cost
// model, as `sightline run --calibration FILE` runs it (fit/calibration_apply.hpp).
// result: the scenario to run.
std::string apply_calibration(const std::string& scenario_json, const std::string& calibration_json);
// `sightline fit` through JSON, for the page's worker: request
//   {"base": SCENARIO, "base_name": "...", "files": [{"name", "text"}...], "id": "...",
//    "limits": {"max_work_units": N}?}
// reads every file as import_bench_file does and fits on the base scenario
// (fit/calibration_fit.hpp); result: the calibration file. The work budget is
// the fit's default unless limits asks for more, up to `ceiling`
// (fit::FitOptions::kApiCeiling here; the CLI's --max-work-units goes to
// kMaxWorkUnits). `on_progress` (may be empty) gets 0..1 after each replay.
std::string fit_calibration(const std::string& request_json, const std::function<void(double)>& on_progress,
                            int64_t ceiling);
// Policy registries the page builds its dropdowns from: {"serving": {...}, "cost_tiers": [...], ...}.
std::string list_registries();

// The serving deployment search, split so the page's worker pool runs the
// candidates (search/deployment_search.hpp):
// search_plan(question): {"candidates": [{"index", "deployment", "scenario"}...], "pruned": [...], "space": {...}};
//   each scenario is an ordinary serving scenario (with serving.steady_state) for run_scenario / Engine::start.
// search_intervals(question, results): results is a JSON array, one central run result (or its envelope) per
//   candidate in plan order; the runs the ranking needs for its 80% intervals: the Pareto points (at most
//   max_interval_points) at the kernels' low and high cost bounds, {"points": [{"candidate", "deployment",
//   "bound": "low"|"high", "scenario"}...]}, each an ordinary run for Engine::start_at_bound (sliced, so a
//   worker reports its progress and takes a cancel).
// search_rank(question, results, bound_results): pure, it runs nothing: the ranked table, the Pareto front
//   and the cheapest deployment meeting the SLO from the central results and the bound runs' results (in
//   search_intervals' point order).
// search_reuse(question, runs, calibration): the central runs go in rounds, as the CLI's do
//   (search/candidate_reuse.hpp): a candidate differing from a sibling only in max_num_seqs takes that
//   sibling's run when its limit facts prove the two runs the same. runs: one entry per candidate in plan
//   order, null while it has not run, else its run's limit facts (Engine::limit_facts; {"opaque": true} for a
//   run that failed); calibration: the cluster calibration every run is priced with, or null. result:
//   {"reused_from": [the candidate whose run it takes, or -1 ...], "next": [the next round's candidates]}; an
//   empty next: every candidate ran or takes a run (whose result stands for its own in search_intervals and
//   search_rank). A budget question reuses nothing: its first round is every candidate.
// The CLI's `sightline search` takes the same steps (search/deployment_search.hpp).
std::string search_plan(const std::string& question_json);
std::string search_reuse(const std::string& question_json, const std::string& runs_json,
                         const std::string& calibration_json);
std::string search_intervals(const std::string& question_json, const std::string& results_json);
std::string search_rank(const std::string& question_json, const std::string& results_json,
                        const std::string& bound_results_json);

// The training configuration search (search/training_search.hpp) in one call: a
// {"kind": "training_search"} question in, the ranked answer out (the same
// JSON as `sightline search QUESTION --format json`). Estimates take tens of
// microseconds each natively, so it runs sequentially.
std::string training_search(const std::string& question_json);

// Sliced runs for callers that must stay responsive (the web worker).
class Engine {
 public:
  Engine();
  ~Engine();
  std::string start(const std::string& scenario_json);    // result: {"handle": n}
  // The same, running the central cost bound alone (no low/high on key metrics):
  // how the page's deployment search ranks its many candidates.
  std::string start_central_only(const std::string& scenario_json);
  // One run at a cost bound ("central", "low" or "high": every kernel at its
  // 80% interval's central, low-cost or high-cost end), no intervals: a
  // deployment search's interval points (search_intervals).
  std::string start_at_bound(const std::string& scenario_json, const std::string& bound);
  // A deployment search's candidate, run as `sightline search` runs one
  // (search::run_candidate): once at the central cost bound, no intervals;
  // limit_facts(handle) gives what its limits decided once it is finished,
  // before result() frees the handle (api::search_reuse reads them).
  std::string start_search_candidate(const std::string& scenario_json);
  std::string limit_facts(int handle);  // result: serve::limit_facts_to_json's object
  std::string step(int handle, int max_units);             // result: {"done": b, "progress": x}
  std::string result(int handle);                          // result: the run's result; frees the handle
  std::string cancel(int handle);                          // result: {"cancelled": b}

 private:
  std::string start_job(const std::string& scenario_json, bool central_only);
  int start_single(const std::string& scenario_json, const std::string& bound, bool candidate);
  std::map<int, std::unique_ptr<Job>> jobs_;
  std::map<int, const serve::ServingJob*> candidates_;  // the search candidates' simulations, owned by jobs_
  int next_handle_ = 1;
};

}  // namespace api
}  // namespace sightline
