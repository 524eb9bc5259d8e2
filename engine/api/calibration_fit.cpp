#include "api/calibration_fit.hpp"

#include <algorithm>
#include <cmath>

#include "api/api.hpp"
#include "core/error.hpp"
#include "core/least_squares.hpp"
#include "perf/cluster_calibration.hpp"

namespace sightline::api {

namespace {

// A run is replayed with as many requests as it completed, so that the replay
// has the same share of requests that meet a warming-up or draining server;
// capped to bound the fit's work, and 100 when the file does not record it.
constexpr int64_t kMaxReplayRequests = 300;
constexpr int64_t kUnrecordedReplayRequests = 100;

struct Predicted {
  double ttft_ms = 0, tpot_ms = 0;
  // Relative standard error of each mean over the replayed requests
  // (stddev / mean / √count): how much the mean moves with the luck of the
  // arrival draw.
  double ttft_rel_se = 0, tpot_rel_se = 0;
};

// Parameters as the optimizer sees them: logs of the efficiency scales (so they
// stay positive and symmetric around 1) and the host time per step in ms.
constexpr size_t kParameters = 4;
const char* const kFactorNames[kParameters] = {"compute_efficiency_scale", "memory_efficiency_scale",
                                               "comm_efficiency_scale", "host_us_per_step"};

json calibration_of(const std::vector<double>& x, const std::string& id, const std::string& source) {
  ClusterCalibration c;
  c.id = id;
  c.source = source;
  auto scale = [](double log_scale) { return std::min(20.0, std::max(0.05, std::exp(log_scale))); };
  c.compute_efficiency_scale = scale(x[0]);
  c.memory_efficiency_scale = scale(x[1]);
  c.comm_efficiency_scale = scale(x[2]);
  c.host_us_per_step = std::min(1e6, std::max(0.0, x[3] * 1e3));
  return c.to_json();
}

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
  auto read = [&](const json& metric, double* mean, double* rel_se) {
    if (!metric["mean"].is_number()) return;
    *mean = metric["mean"].get<double>();
    const double sd = metric.value("stddev", 0.0), n = metric.value("count", 0.0);
    if (*mean > 0 && n > 0) *rel_se = sd / *mean / std::sqrt(n);
  };
  read(m["ttft_ms"], &p.ttft_ms, &p.ttft_rel_se);
  read(m["tpot_ms"], &p.tpot_ms, &p.tpot_rel_se);
  return p;
}

// Huber's loss as a residual: ½ρ² equals Huber(r) (quadratic within ±delta,
// linear beyond), so least squares on ρ is a robust fit that one bad run
// cannot drag far.
double huber_residual(double r, double delta) {
  const double a = std::fabs(r);
  if (a <= delta) return r;
  return (r < 0 ? -1 : 1) * std::sqrt(2 * delta * (a - 0.5 * delta));
}

// log(pred / meas); a metric the file does not record (0) adds nothing.
double log_error(double pred, double meas) {
  if (!(meas > 0)) return 0;
  return pred > 0 ? std::log(pred / meas) : 10.0;
}

double signed_error(double pred, double meas) { return meas > 0 ? pred / meas - 1 : 0; }

// Each residual is weighted by the precision of its mean: a loaded run's mean
// TTFT moves by a percent or more when a step boundary crosses an arrival (the
// draw's luck), while a mean TPOT over thousands of steps barely moves. Weighting
// by 1 / standard error (floored at 0.1%) is weighted least squares: the
// factors follow the figures that pin them down, not the noisiest ones.
constexpr double kMinRelativeError = 1e-3;

struct Weights {
  double ttft = 1, tpot = 1;
};

Weights weights_of(const Predicted& p) {
  return {1 / std::max(p.ttft_rel_se, kMinRelativeError), 1 / std::max(p.tpot_rel_se, kMinRelativeError)};
}

std::vector<double> residuals(const json& base, const std::vector<BenchRun>& runs, const std::vector<Weights>& weights,
                              const std::vector<size_t>& subset, const std::vector<double>& x, const std::string& id) {
  const json cal = calibration_of(x, id, "fit");
  std::vector<double> r;
  for (size_t i : subset) {
    const Predicted p = predict(base, runs[i], cal);
    r.push_back(weights[i].ttft * huber_residual(log_error(p.ttft_ms, runs[i].ttft_mean_ms), 0.2));
    r.push_back(weights[i].tpot * huber_residual(log_error(p.tpot_ms, runs[i].tpot_mean_ms), 0.2));
  }
  return r;
}

struct Fitted {
  std::vector<double> x;
  LeastSquaresResult ls;
};

// Levenberg–Marquardt from `start`, with weak priors toward "no correction"
// (σ = 10 in log scale, 1 s of host time per step): they only hold a factor the
// runs do not see; one the runs see moves to what the data say.
Fitted minimize(const json& base, const std::vector<BenchRun>& runs, const std::vector<Weights>& weights,
                const std::vector<size_t>& subset, const std::vector<double>& start, const std::string& id,
                int* evaluations) {
  LeastSquaresOptions o;
  o.difference_step = {0.02, 0.02, 0.02, 0.05};  // 2% of a scale; 50 µs of host time
  o.x_tolerance = 0.05;                          // stop at steps below 0.1% of a scale, 2.5 µs
  o.max_evaluations = 60;
  o.prior_mean = {0, 0, 0, 0};
  o.prior_sigma = {10, 10, 10, 1000};
  auto f = [&](const std::vector<double>& x) { return residuals(base, runs, weights, subset, x, id); };
  Fitted out;
  out.ls = levenberg_marquardt(f, start, o);
  out.x = out.ls.x;
  *evaluations += out.ls.evaluations;
  return out;
}

// Each factor's standard error when every measured mean is off by one standard
// error of its own (the weighted least squares reading of the fit's
// linearization): small means the runs pin the factor down; null means these
// runs do not determine it (it stays at its prior, no correction).
json identification(const Fitted& f) {
  const std::vector<std::vector<double>> cov = normal_inverse(f.ls.jacobian, kParameters);
  json out = json::object();
  for (size_t j = 0; j < kParameters; ++j) {
    const double sd = std::sqrt(cov[j][j]);  // in log-scale units (ms for host)
    json v = nullptr;
    if (f.ls.seen[j] && std::isfinite(sd)) v = j == 3 ? sd * 1e3 : std::exp(f.x[j]) * sd;
    out[kFactorNames[j]] = v;
  }
  return out;
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
  if (!run.replay_model.empty()) s["model"] = run.replay_model;  // same cluster and stack, another model
  json& serving = s["serving"];
  serving["mode"] = "simulate";
  serving.erase("steady_state");
  json& w = serving["workload"];
  if (!w.is_object()) w = json::object();
  // Open-loop replay: a concurrency-limited run is replayed at the request
  // rate it achieved (the simulator has no closed-loop clients).
  const double rate = run.rate_qps > 0 ? run.rate_qps : run.requests_per_s;
  w["arrival"] = {{"process", run.arrival}, {"rate_qps", rate}};
  if (run.arrival == "gamma") w["arrival"]["cv"] = std::min(100.0, std::max(0.01, run.arrival_cv));
  w["num_requests"] = run.requests >= 2 ? std::min(run.requests, kMaxReplayRequests) : kUnrecordedReplayRequests;
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
  // The uncalibrated replay: the report's "before" and each mean's precision.
  std::vector<Predicted> before;
  std::vector<Weights> weights;
  for (const BenchRun& run : runs) {
    before.push_back(predict(base, run, nullptr));
    weights.push_back(weights_of(before.back()));
  }
  const std::vector<double> start(kParameters, 0.0);
  json held_report = nullptr;
  std::vector<double> start_all = start;
  if (!held_out.empty()) {
    const Fitted f = minimize(base, runs, weights, fit_set, start, id, &evaluations);
    const json cal = calibration_of(f.x, id, source);
    std::vector<double> errs;
    json rows = json::array();
    for (size_t i : held_out) {
      const Predicted after = predict(base, runs[i], cal);
      rows.push_back(error_row(runs[i], before[i], after, true));
      errs.push_back(signed_error(after.ttft_ms, runs[i].ttft_mean_ms));
      errs.push_back(signed_error(after.tpot_ms, runs[i].tpot_mean_ms));
    }
    held_report = {{"factors_fitted_without_them", cal["factors"]}, {"runs", rows}, {"median_abs_error", median_abs(errs)}};
    start_all = f.x;
  }
  const Fitted f = minimize(base, runs, weights, all, start_all, id, &evaluations);
  json out = calibration_of(f.x, id, source);
  json rows = json::array();
  std::vector<double> before_errs, after_errs;
  for (size_t i : all) {
    const Predicted after = predict(base, runs[i], out);
    rows.push_back(error_row(runs[i], before[i], after, false));
    for (const std::string k : {"ttft", "tpot"}) {
      before_errs.push_back(rows.back()["error_uncalibrated"][k].get<double>());
      after_errs.push_back(rows.back()["error_calibrated"][k].get<double>());
    }
  }
  json files = json::array();
  for (const BenchRun& r : runs) files.push_back(r.to_json());
  out["fit"] = {{"method", "Levenberg-Marquardt on Huber(log pred/meas) of mean TTFT and TPOT, weak priors toward no correction"},
                {"base_scenario", base.value("id", "custom")},
                {"runs", files},
                {"evaluations", evaluations},
                {"converged", f.ls.converged},
                {"standard_errors", identification(f)},
                {"in_sample", {{"runs", rows},
                               {"median_abs_error_uncalibrated", median_abs(before_errs)},
                               {"median_abs_error_calibrated", median_abs(after_errs)}}},
                {"held_out", held_report}};
  return out;
}

}  // namespace sightline::api
