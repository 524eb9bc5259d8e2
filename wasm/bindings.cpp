// Embind bindings: plain functions over JSON strings, mirroring engine/api/api.hpp.
// One Engine instance per module holds the sliced runs of this worker.
#include <emscripten/bind.h>

#include <cstdlib>

#include "api/api.hpp"

namespace {

sightline::api::Engine& engine() {
  static sightline::api::Engine instance;
  return instance;
}

std::string start(const std::string& scenario) { return engine().start(scenario); }
std::string start_central_only(const std::string& scenario) { return engine().start_central_only(scenario); }
std::string start_at_bound(const std::string& scenario, const std::string& bound) {
  return engine().start_at_bound(scenario, bound);
}
std::string start_search_candidate(const std::string& scenario) { return engine().start_search_candidate(scenario); }
std::string limit_facts(int handle) { return engine().limit_facts(handle); }
std::string step(int handle, int max_units) { return engine().step(handle, max_units); }
std::string result(int handle) { return engine().result(handle); }
std::string cancel(int handle) { return engine().cancel(handle); }

// Test hook: aborts this module for real (std::abort, as a failed allocation
// or an engine bug would), so the page's worker test can show that a worker
// killed by a genuine wasm abort is restarted and its pending run rejected
// (tests/web/worker.test.mjs). No input reaches it; only the worker's
// TEST_HOOK_ABORT message calls it, and no page code sends that.
void test_hook_abort() { std::abort(); }

}  // namespace

EMSCRIPTEN_BINDINGS(sightline) {
  emscripten::function("runScenario", &sightline::api::run_scenario);
  emscripten::function("validateScenario", &sightline::api::validate_scenario);
  emscripten::function("estimateWork", &sightline::api::estimate_work);
  emscripten::function("listPresets", &sightline::api::list_presets);
  emscripten::function("getPreset", &sightline::api::get_preset);
  emscripten::function("version", &sightline::api::version);
  emscripten::function("inspectModel", &sightline::api::inspect_model);
  // The benchmark readers and the fit are calibrate_bindings.cpp's (loaded on demand).
  emscripten::function("applyCalibration", &sightline::api::apply_calibration);
  emscripten::function("listRegistries", &sightline::api::list_registries);
  emscripten::function("searchPlan", &sightline::api::search_plan);
  emscripten::function("searchReuse", &sightline::api::search_reuse);
  emscripten::function("searchIntervals", &sightline::api::search_intervals);
  emscripten::function("searchRank", &sightline::api::search_rank);
  emscripten::function("trainingSearch", &sightline::api::training_search);
  emscripten::function("start", &start);
  emscripten::function("startCentralOnly", &start_central_only);
  emscripten::function("startAtBound", &start_at_bound);
  emscripten::function("startSearchCandidate", &start_search_candidate);
  emscripten::function("limitFacts", &limit_facts);
  emscripten::function("step", &step);
  emscripten::function("result", &result);
  emscripten::function("cancel", &cancel);
  emscripten::function("testHookAbort", &test_hook_abort);
}
