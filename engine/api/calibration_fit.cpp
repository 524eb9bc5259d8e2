#include "api/calibration_fit.hpp"

#include <algorithm>
#include <cmath>

#include "api/api.hpp"
#include "core/error.hpp"
#include "core/nelder_mead.hpp"
#include "perf/cluster_calibration.hpp"

namespace sightline::api {

namespace {

constexpr int64_t kMaxReplayRequests = 150;  // enough for a stable mean; bounds the fit's work

struct Predicted {
  double ttft_ms = 0, tpot_ms = 0;
};

// Factors as the optimizer sees them: logs of the efficiency scales (so they
// stay positive and symmetric around 1) and the host time in ms.
struct FitFactors {
  double log_compute = 0, log_memory = 0, log_comm = 0, host_ms = 0;
  static FitFactors from(const std::vector<double>& x) { return {x[0], x[1], x[2], std::fabs(x[3])}; }
  json calibration(const std::string& id, const std::string& source) const {
    ClusterCalibration c;
    c.id = id;
    c.source = source;
    c.compute_efficiency_scale = std::min(20.0, std::max(0.05, std::exp(log_compute)));
    c.memory_efficiency_scale = std::min(20.0, std::max(0.05, std::exp(log_memory)));
    c.comm_efficiency_scale = std::min(20.0, std::max(0.05, std::exp(log_comm)));
    c.host_us_per_step = std::min(1e6, host_ms * 1e3);
    return c.to_json();
  }
};

Predicted predict(const json& base, const BenchRun& run, const json& calibration) {
  const json scenario = scenario_for_bench_run(base, run, calibration);
  const json env = json::parse(run_scenario_central_only(scenario.dump()));
  if (!env.value("ok", false)) {
    const json& e = env["error"];
    fail(e.value("code", error_code::kInternal).c_str(), e.value("path", ""),
         "replaying " + run.file + run.where + " on the base scenario failed: " + e.value("message", ""));
  }
  const json& m = env["result"]["metrics"];
  Predicted p;
  if (m["ttft_ms"]["mean"].is_number()) p.ttft_ms = m["ttft_ms"]["mean"].get<double>();
  if (m["tpot_ms"]["mean"].is_number()) p.tpot_ms = m["tpot_ms"]["mean"].get<double>();
  return p;
}

double huber(double r, double delta) {
  const double a = std::fabs(r);
  return a <= delta ? 0.5 * r * r : delta * (a - 0.5 * delta);
}

double log_ratio(double pred, double meas) { return pred > 0 && meas > 0 ? std::log(pred / meas) : 10.0; }

double signed_error(double pred, double meas) { return meas > 0 ? pred / meas - 1 : 0; }

// Loss of a factor set on a subset of runs: Huber on log errors (robust to a
// bad run) plus weak Gaussian priors in log space (σ = 1 for the efficiency
// scales, 20 ms for host time), so an unidentifiable factor stays at "no correction".
double loss(const json& base, const std::vector<BenchRun>& runs, const std::vector<size_t>& subset,
            const FitFactors& f, const std::string& id) {
  const json cal = f.calibration(id, "fit");
  double l = 0;
  for (size_t i : subset) {
    const Predicted p = predict(base, runs[i], cal);
    l += huber(log_ratio(p.ttft_ms, runs[i].ttft_mean_ms), 0.2) + huber(log_ratio(p.tpot_ms, runs[i].tpot_mean_ms), 0.2);
  }
  const double prior = 1e-6;
  l += prior * (f.log_compute * f.log_compute + f.log_memory * f.log_memory + f.log_comm * f.log_comm +
                (f.host_ms / 20) * (f.host_ms / 20));
  return l;
}

FitFactors minimize(const json& base, const std::vector<BenchRun>& runs, const std::vector<size_t>& subset,
                    std::vector<double> start, const std::string& id, int* evaluations) {
  auto objective = [&](const std::vector<double>& x) { return loss(base, runs, subset, FitFactors::from(x), id); };
  MinimizeResult r = nelder_mead(objective, start, {0.2, 0.2, 0.2, 0.5}, 200, 1e-12);
  // A restart from the optimum escapes a collapsed simplex (Nelder–Mead's known failure).
  MinimizeResult r2 = nelder_mead(objective, r.x, {0.05, 0.05, 0.05, 0.1}, 100, 1e-14);
  *evaluations += r.evaluations + r2.evaluations;
  return FitFactors::from(r2.value <= r.value ? r2.x : r.x);
}

json error_row(const BenchRun& run, const Predicted& before, const Predicted& after, bool held_out) {
  return {{"file", run.file},
          {"where", run.where},
          {"format", run.format},
          {"held_out", held_out},
          {"measured", {{"ttft_mean_ms", run.ttft_mean_ms}, {"tpot_mean_ms", run.tpot_mean_ms}}},
          {"uncalibrated", {{"ttft_mean_ms", before.ttft_ms}, {"tpot_mean_ms", before.tpot_ms}}},
          {"calibrated", {{"ttft_mean_ms", after.ttft_ms}, {"tpot_mean_ms", after.tpot_ms}}},
          {"error_uncalibrated",
           {{"ttft", signed_error(before.ttft_ms, run.ttft_mean_ms)}, {"tpot", signed_error(before.tpot_ms, run.tpot_mean_ms)}}},
          {"error_calibrated",
           {{"ttft", signed_error(after.ttft_ms, run.ttft_mean_ms)}, {"tpot", signed_error(after.tpot_ms, run.tpot_mean_ms)}}}};
}

double median_abs(std::vector<double> v) {
  if (v.empty()) return 0;
  for (double& x : v) x = std::fabs(x);
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

json scenario_for_bench_run(const json& base, const BenchRun& run, const json& calibration) {
  if (!base.is_object() || !base.contains("serving") || !base["serving"].is_object())
    fail(error_code::kConstraint, "/serving", "the base scenario of a fit must be a serving scenario");
  json s = base;
  json& serving = s["serving"];
  serving["mode"] = "simulate";
  serving.erase("steady_state");
  json& w = serving["workload"];
  if (!w.is_object()) w = json::object();
  // Open-loop replay: a concurrency-limited run is replayed at the request
  // rate it achieved (the simulator has no closed-loop clients).
  const double rate = run.rate_qps > 0 ? run.rate_qps : run.requests_per_s;
  w["arrival"] = {{"process", "poisson"}, {"rate_qps", rate}};
  w["num_requests"] = std::min<int64_t>(std::max<int64_t>(run.requests, 50), kMaxReplayRequests);
  if (run.prompt_tokens_mean > 0)
    w["prompt_tokens"] = {{"dist", "fixed"}, {"value", std::max<int64_t>(1, std::llround(run.prompt_tokens_mean))}};
  if (run.output_tokens_mean > 0)
    w["output_tokens"] = {{"dist", "fixed"}, {"value", std::max<int64_t>(2, std::llround(run.output_tokens_mean))}};
  if (!s.contains("cost_model") || !s["cost_model"].is_object()) s["cost_model"] = json::object();
  if (calibration.is_null()) s["cost_model"].erase("calibration");
  else s["cost_model"]["calibration"] = calibration;
  return s;
}

json fit_cluster_calibration(const json& base, const std::vector<BenchRun>& runs, const std::string& id,
                             const std::string& source) {
  if (runs.empty()) fail(error_code::kMissingKey, "", "a fit needs at least one benchmark run");
  std::vector<size_t> all, fit_set, held_out;
  for (size_t i = 0; i < runs.size(); ++i) {
    all.push_back(i);
    (runs.size() >= 3 && i % 3 == 2 ? held_out : fit_set).push_back(i);
  }
  int evaluations = 0;
  const std::vector<double> start = {0, 0, 0, 0};
  json held_report = nullptr;
  std::vector<double> start_all = start;
  if (!held_out.empty()) {
    const FitFactors f = minimize(base, runs, fit_set, start, id, &evaluations);
    const json cal = f.calibration(id, source);
    std::vector<double> errs;
    json rows = json::array();
    for (size_t i : held_out) {
      const Predicted before = predict(base, runs[i], nullptr), after = predict(base, runs[i], cal);
      rows.push_back(error_row(runs[i], before, after, true));
      errs.push_back(signed_error(after.ttft_ms, runs[i].ttft_mean_ms));
      errs.push_back(signed_error(after.tpot_ms, runs[i].tpot_mean_ms));
    }
    held_report = {{"factors_fitted_without_them", cal["factors"]}, {"runs", rows}, {"median_abs_error", median_abs(errs)}};
    start_all = {f.log_compute, f.log_memory, f.log_comm, f.host_ms};
  }
  const FitFactors f = minimize(base, runs, all, start_all, id, &evaluations);
  json out = f.calibration(id, source);
  json rows = json::array();
  std::vector<double> before_errs, after_errs;
  for (size_t i : all) {
    const Predicted before = predict(base, runs[i], nullptr), after = predict(base, runs[i], out);
    rows.push_back(error_row(runs[i], before, after, false));
    for (const std::string k : {"ttft", "tpot"}) {
      before_errs.push_back(rows.back()["error_uncalibrated"][k].get<double>());
      after_errs.push_back(rows.back()["error_calibrated"][k].get<double>());
    }
  }
  json files = json::array();
  for (const BenchRun& r : runs) files.push_back(r.to_json());
  out["fit"] = {{"method", "Nelder-Mead on Huber(log pred/meas) of mean TTFT and TPOT, weak priors toward no correction"},
                {"base_scenario", base.value("id", "custom")},
                {"runs", files},
                {"evaluations", evaluations},
                {"in_sample", {{"runs", rows},
                               {"median_abs_error_uncalibrated", median_abs(before_errs)},
                               {"median_abs_error_calibrated", median_abs(after_errs)}}},
                {"held_out", held_report}};
  return out;
}

}  // namespace sightline::api
