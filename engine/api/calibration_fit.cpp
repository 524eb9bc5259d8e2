#include "api/calibration_fit.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/least_squares.hpp"
#include "perf/cluster_calibration.hpp"

namespace sightline::api {

namespace {

// Parameters as the optimizer sees them: logs of the efficiency scales (so they
// stay positive and symmetric around 1) and the host time per step in ms.
// 0 is "no correction" for every one of them.
constexpr size_t kParameters = 4;
const char* const kFactorNames[kParameters] = {"compute_efficiency_scale", "memory_efficiency_scale",
                                               "comm_efficiency_scale", "host_us_per_step"};
constexpr size_t kHost = 3;

json calibration_of(const std::vector<double>& x, const std::string& id, const std::string& source) {
  ClusterCalibration c;
  c.id = id;
  c.source = source;
  auto scale = [](double log_scale) { return std::min(20.0, std::max(0.05, std::exp(log_scale))); };
  c.compute_efficiency_scale = scale(x[0]);
  c.memory_efficiency_scale = scale(x[1]);
  c.comm_efficiency_scale = scale(x[2]);
  c.host_us_per_step = std::min(1e6, std::max(0.0, x[kHost] * 1e3));
  return c.to_json();
}

// Huber's loss as a residual: ½ρ² equals Huber(r) (quadratic within ±delta,
// linear beyond), so least squares on ρ is a robust fit that one bad run
// cannot drag far.
double huber_residual(double r, double delta) {
  const double a = std::fabs(r);
  if (a <= delta) return r;
  return (r < 0 ? -1 : 1) * std::sqrt(2 * delta * (a - 0.5 * delta));
}

double log_error(double pred, double meas) { return pred > 0 ? std::log(pred / meas) : 10.0; }
double signed_error(double pred, double meas) { return meas > 0 ? pred / meas - 1 : 0; }

double predicted(const Replay& p, const FitTarget& t) {
  auto it = p.value.find(t.statistic);
  return it == p.value.end() ? 0 : it->second;
}

// Each residual is weighted by the precision of its replayed statistic: a
// loaded run's mean TTFT moves by a percent or more with the luck of the
// arrival draw, a mean TPOT over thousands of steps barely moves. Weighting by
// 1 / standard error (floored at 0.1%) is weighted least squares.
constexpr double kMinRelativeError = 1e-3;

struct RunData {
  std::vector<FitTarget> targets;
  std::vector<double> weights;
  Replay before;
};

struct Problem {
  const FitBase& base;
  const std::vector<BenchRun>& runs;
  std::vector<RunData> data;
  std::string id;
  int max_evaluations = 60;
  int evaluations = 0;
};

std::vector<double> residuals(const Problem& pb, const std::vector<size_t>& subset, const std::vector<double>& x) {
  const json cal = calibration_of(x, pb.id, "fit");
  std::vector<double> r;
  for (size_t i : subset) {
    const Replay p = replay_run(pb.base, pb.runs[i], cal);
    const RunData& d = pb.data[i];
    for (size_t k = 0; k < d.targets.size(); ++k)
      r.push_back(d.weights[k] * huber_residual(log_error(predicted(p, d.targets[k]), d.targets[k].measured), 0.2));
  }
  return r;
}

// The fitted factors with what the runs say about each.
struct Identified {
  std::vector<double> x = std::vector<double>(kParameters, 0.0);
  std::vector<bool> determined = std::vector<bool>(kParameters, false);
  std::vector<double> se = std::vector<double>(kParameters, 0.0);  // standard error (log scale; ms for host)
  std::vector<std::string> why;                                   // per factor, when held at its prior
  double residual_variance = 1;
  bool converged = false;
};

// A factor is determined when its standard error, scaled by the misfit, is
// within ±25% of a scale or ±25% of the host time (at least 50 µs).
bool well_determined(size_t j, double x, double se) {
  if (!std::isfinite(se)) return false;
  return j == kHost ? se <= std::max(0.05, 0.25 * std::fabs(x)) : se <= 0.25;
}

// Levenberg–Marquardt on the factors in `free` (the others stay at 0, no
// correction), from `start`, with weak priors toward no correction (σ = 10 in
// log scale, 1 s of host time per step).
LeastSquaresResult minimize_free(Problem& pb, const std::vector<size_t>& subset, const std::vector<double>& start,
                                 const std::vector<bool>& free) {
  static const double kStep[kParameters] = {0.02, 0.02, 0.02, 0.05};  // 2% of a scale; 50 µs of host time
  static const double kSigma[kParameters] = {10, 10, 10, 1000};
  std::vector<size_t> index;
  LeastSquaresOptions o;
  std::vector<double> x0;
  for (size_t j = 0; j < kParameters; ++j)
    if (free[j]) {
      index.push_back(j);
      x0.push_back(start[j]);
      o.difference_step.push_back(kStep[j]);
      o.prior_mean.push_back(0);
      o.prior_sigma.push_back(kSigma[j]);
    }
  o.x_tolerance = 0.05;  // stop at steps below 0.1% of a scale, 2.5 µs
  o.max_evaluations = pb.max_evaluations;
  auto expand = [&](const std::vector<double>& xr) {
    std::vector<double> x(kParameters, 0.0);
    for (size_t k = 0; k < index.size(); ++k) x[index[k]] = xr[k];
    return x;
  };
  LeastSquaresResult ls = levenberg_marquardt([&](const std::vector<double>& xr) { return residuals(pb, subset, expand(xr)); },
                                              x0, o);
  pb.evaluations += ls.evaluations;
  // Back to all factors: x in full, the Jacobian's columns and `seen` per factor.
  const std::vector<double> xr = ls.x;
  ls.x = expand(xr);
  std::vector<bool> seen(kParameters, false);
  for (size_t k = 0; k < index.size(); ++k) seen[index[k]] = ls.seen[k];
  ls.seen = seen;
  for (auto& row : ls.jacobian) {
    std::vector<double> full(kParameters, 0.0);
    for (size_t k = 0; k < index.size() && k < row.size(); ++k) full[index[k]] = row[k];
    row = full;
  }
  return ls;
}

// Fits, then holds at "no correction" every factor the runs leave
// undetermined (unseen, or a standard error past the bound: a rank-deficient
// or ill-conditioned Jacobian) and refits the rest once.
Identified fit_identified(Problem& pb, const std::vector<size_t>& subset, const std::vector<double>& start) {
  Identified out;
  out.why.assign(kParameters, "");
  std::vector<bool> free(kParameters, true);
  std::vector<double> x = start;
  for (int round = 0; round < 2; ++round) {
    const LeastSquaresResult ls = minimize_free(pb, subset, x, free);
    x = ls.x;
    out.converged = ls.converged;
    size_t nfree = 0;
    for (size_t j = 0; j < kParameters; ++j) nfree += free[j] && ls.seen[j];
    double ss = 0;
    for (double r : ls.residuals) ss += r * r;
    const size_t m = ls.residuals.size();
    // Standard errors include the misfit: scaled by the residual variance
    // (never below the noise floor of the replayed means).
    out.residual_variance = m > nfree ? std::max(1.0, ss / static_cast<double>(m - nfree)) : 1.0;
    const auto cov = normal_inverse(ls.jacobian, kParameters);
    bool dropped = false;
    for (size_t j = 0; j < kParameters; ++j) {
      if (!free[j]) continue;
      const double se = std::sqrt(cov[j][j] * out.residual_variance);
      const double value = x[j];
      if (ls.seen[j] && well_determined(j, value, se)) {
        out.determined[j] = true;
        out.se[j] = se;
        continue;
      }
      out.determined[j] = false;
      out.why[j] = !ls.seen[j] ? "these runs do not depend on it"
                   : !std::isfinite(se) ? "confounded with another factor in these runs (singular Jacobian)"
                                        : "too uncertain in these runs (standard error past ±25%)";
      free[j] = false;
      x[j] = 0;
      dropped = true;
    }
    if (!dropped || std::none_of(free.begin(), free.end(), [](bool b) { return b; })) break;
    if (round == 1) {
      // Still dropping after the refit: hold those too; the rest keep their refitted values.
      break;
    }
    std::fill(out.determined.begin(), out.determined.end(), false);
  }
  for (size_t j = 0; j < kParameters; ++j)
    if (!out.determined[j]) x[j] = 0;
  out.x = x;
  return out;
}

json error_row(const BenchRun& run, const RunData& d, const Replay& after, bool held_out) {
  json figures = json::array();
  for (const FitTarget& t : d.targets)
    figures.push_back({{"metric", t.metric},
                       {"source", t.source},
                       {"measured", t.measured},
                       {"uncalibrated", predicted(d.before, t)},
                       {"calibrated", predicted(after, t)},
                       {"error_uncalibrated", signed_error(predicted(d.before, t), t.measured)},
                       {"error_calibrated", signed_error(predicted(after, t), t.measured)}});
  return {{"file", run.file}, {"where", run.where}, {"format", run.format}, {"held_out", held_out}, {"figures", figures}};
}

double median_abs(std::vector<double> v) {
  if (v.empty()) return 0;
  for (double& x : v) x = std::fabs(x);
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

namespace {

// The fit's evaluations within the work budget: each evaluation replays every
// run of its subset, whose estimated work is known before the first replay.
void cap_evaluations(Problem& pb, const FitOptions& options, bool held_out) {
  int64_t per_evaluation = 0;
  for (const BenchRun& r : pb.runs) per_evaluation += std::max<int64_t>(1, replay_work_units(pb.base, r));
  const int64_t allowed = options.max_work_units / per_evaluation;
  // The uncalibrated and calibrated replays, then up to two rounds per fit.
  const int64_t fits = held_out ? 2 : 1;
  const int64_t needed = 3 + fits * 2 * static_cast<int64_t>(kParameters + 1) * 2;
  if (allowed < needed)
    fail(error_code::kLimitExceeded, "",
         "fit: replaying these " + std::to_string(pb.runs.size()) + " runs once takes up to " +
             std::to_string(per_evaluation) + " work units, and a fit needs at least " + std::to_string(needed) +
             " replays of them (" + std::to_string(per_evaluation * needed) + " units) but the budget is " +
             std::to_string(options.max_work_units) + " units: give fewer runs or raise --max-work-units");
  pb.max_evaluations = static_cast<int>(std::min<int64_t>(60, (allowed - 3) / (fits * 2)));
}

// The uncalibrated replay of every run: the report's "before", each
// statistic's precision, and a refusal for a run the base cannot serve (a
// calibration fitted to a replay that completes nothing would be noise).
void replay_uncalibrated(Problem& pb) {
  for (const BenchRun& run : pb.runs) {
    RunData d;
    d.targets = fit_targets(run);
    if (d.targets.empty())
      fail(error_code::kMissingKey, run.where, run.file + run.where + ": the run has no figure a fit can compare with");
    d.before = replay_run(pb.base, run, nullptr);
    if (d.before.completed <= 0)
      fail(error_code::kConstraint, run.requests_source,
           run.file + run.where + ": replayed on " + pb.base.name +
               " without calibration, this run completes no request (the base cannot serve this load); no "
               "calibration is written");
    for (const FitTarget& t : d.targets) {
      if (!(predicted(d.before, t) > 0))
        fail(error_code::kConstraint, t.source,
             run.file + run.where + ": replayed on " + pb.base.name + ", this run gives no " + t.statistic +
                 " to compare with " + t.metric + "; no calibration is written");
      auto se = d.before.rel_se.find(t.statistic);
      d.weights.push_back(1 / std::max(se == d.before.rel_se.end() ? 0.0 : se->second, kMinRelativeError));
    }
    pb.data.push_back(std::move(d));
  }
}

json factors_report(const Identified& f) {
  json se = json::object(), held = json::object(), fitted = json::array();
  for (size_t j = 0; j < kParameters; ++j) {
    if (f.determined[j]) {
      fitted.push_back(kFactorNames[j]);
      se[kFactorNames[j]] = j == kHost ? f.se[j] * 1e3 : std::exp(f.x[j]) * f.se[j];
    } else {
      se[kFactorNames[j]] = nullptr;
      held[kFactorNames[j]] = f.why[j];
    }
  }
  return {{"fitted", fitted}, {"held_at_no_correction", held}, {"standard_errors", se},
          {"residual_variance", f.residual_variance}};
}

// Factors far from 1 are a sign that the model lacks a term the runs need
// (client latency, a different stack), not a calibration to trust blindly.
json plausibility_warnings(const json& factors) {
  json w = json::array();
  for (size_t j = 0; j < kHost; ++j) {
    const double v = factors[kFactorNames[j]].get<double>();
    if (v < 0.25 || v > 4)
      w.push_back(std::string(kFactorNames[j]) + " = " + std::to_string(v) +
                  " is outside [0.25, 4]: the runs may measure something the model does not (client or network "
                  "latency, another engine); check the held-out error before using it");
  }
  const double host = factors["host_us_per_step"].get<double>();
  if (host > 20000)
    w.push_back("host_us_per_step = " + std::to_string(host) + " µs is over 20 ms per step: implausible for a serving engine");
  return w;
}

}  // namespace

json fit_cluster_calibration(const FitBase& base, const std::vector<BenchRun>& runs, const std::string& id,
                             const std::string& source, const FitOptions& options) {
  if (runs.empty()) fail(error_code::kMissingKey, "", "a fit needs at least one benchmark run");
  std::vector<size_t> all, fit_set, held_out;
  for (size_t i = 0; i < runs.size(); ++i) {
    all.push_back(i);
    (runs.size() >= 3 && i % 3 == 2 ? held_out : fit_set).push_back(i);
  }
  Problem pb{base, runs, {}, id};
  cap_evaluations(pb, options, !held_out.empty());
  replay_uncalibrated(pb);
  const std::vector<double> start(kParameters, 0.0);
  json held_report = nullptr;
  std::vector<double> start_all = start;
  if (!held_out.empty()) {
    const Identified f = fit_identified(pb, fit_set, start);
    const json cal = calibration_of(f.x, id, source);
    std::vector<double> before_errs, after_errs;
    json rows = json::array();
    for (size_t i : held_out) {
      rows.push_back(error_row(runs[i], pb.data[i], replay_run(base, runs[i], cal), true));
      for (const json& fig : rows.back()["figures"]) {
        before_errs.push_back(fig["error_uncalibrated"].get<double>());
        after_errs.push_back(fig["error_calibrated"].get<double>());
      }
    }
    held_report = {{"factors_fitted_without_them", cal["factors"]},
                   {"runs", rows},
                   {"median_abs_error_uncalibrated", median_abs(before_errs)},
                   {"median_abs_error", median_abs(after_errs)}};
    start_all = f.x;
  }
  const Identified f = fit_identified(pb, all, start_all);
  if (std::none_of(f.determined.begin(), f.determined.end(), [](bool b) { return b; }))
    fail(error_code::kConstraint, "",
         runs[0].file + (runs.size() > 1 ? " and the other files" : std::string()) +
             ": these runs determine none of the calibration's factors (" + f.why[0] +
             " for compute; see docs/calibrate-from-benchmarks.md for runs that do); no calibration is written");
  json out = calibration_of(f.x, id, source);
  json rows = json::array();
  std::vector<double> before_errs, after_errs;
  for (size_t i : all) {
    rows.push_back(error_row(runs[i], pb.data[i], replay_run(base, runs[i], out), false));
    for (const json& fig : rows.back()["figures"]) {
      before_errs.push_back(fig["error_uncalibrated"].get<double>());
      after_errs.push_back(fig["error_calibrated"].get<double>());
    }
  }
  json files = json::array();
  for (const BenchRun& r : runs) files.push_back(r.to_json());
  const json fr = factors_report(f);
  out["fit"] = {{"method", "Levenberg-Marquardt on Huber(log pred/meas) of TTFT and TPOT (a closed batch: output "
                           "throughput), weak priors toward no correction; undetermined factors held at no correction"},
                {"base_scenario", base.name},
                {"runs", files},
                {"evaluations", pb.evaluations},
                {"max_evaluations_per_fit", pb.max_evaluations},
                {"converged", f.converged},
                {"fitted", fr["fitted"]},
                {"held_at_no_correction", fr["held_at_no_correction"]},
                {"standard_errors", fr["standard_errors"]},
                {"residual_variance", fr["residual_variance"]},
                {"warnings", plausibility_warnings(out["factors"])},
                {"in_sample", {{"runs", rows},
                               {"median_abs_error_uncalibrated", median_abs(before_errs)},
                               {"median_abs_error_calibrated", median_abs(after_errs)}}},
                {"held_out", held_report}};
  return out;
}

}  // namespace sightline::api
