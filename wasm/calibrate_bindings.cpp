// Embind bindings of the Calibrate tab's module (sightline-calibrate.wasm,
// loaded when the user gives the tab a file): the benchmark readers and the
// fit, over engine/api/api.hpp like bindings.cpp. The page's own module keeps
// applyCalibration, so runs with a calibration need nothing from here.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "api/api.hpp"
#include "fit/calibration_fit.hpp"

namespace {

// The fit blocks until it is done; the worker passes a function that posts
// each progress figure to the page (the page's thread is never blocked).
std::string fit_calibration(const std::string& request, emscripten::val on_progress) {
  const bool report = on_progress.typeOf().as<std::string>() == "function";
  return sightline::api::fit_calibration(
      request, [&](double p) { if (report) on_progress(p); }, sightline::fit::FitOptions::kApiCeiling);
}

}  // namespace

EMSCRIPTEN_BINDINGS(sightline_calibrate) {
  emscripten::function("version", &sightline::api::version);
  emscripten::function("importBenchFile", &sightline::api::import_bench_file);
  emscripten::function("fitCalibration", &fit_calibration);
}
