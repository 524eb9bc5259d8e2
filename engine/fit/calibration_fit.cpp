#include "fit/calibration_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "fit/bench_server_settings.hpp"
#include "core/error.hpp"
#include "core/least_squares.hpp"
#include "perf/cluster_calibration.hpp"

namespace sightline::fit {

namespace {

// Parameters as the optimizer sees them: logs of the efficiency scales (so they
// stay positive and symmetric around 1), the host time per step in ms, and a
// constant per-request latency in ms that the client measures on top of the
// server (network, HTTP, tokenizer): it adds to every TTFT (and E2E) but to no
// step, so it is not absorbed into efficiency or host time. 0 is "no
// correction" for every one of them.
constexpr size_t kParameters = 5;
const char* const kFactorNames[kParameters] = {"compute_efficiency_scale", "memory_efficiency_scale",
                                               "comm_efficiency_scale", "host_us_per_step", "request_latency_ms"};
constexpr size_t kHost = 3;
constexpr size_t kRequest = 4;

// The per-request latency a parameter vector adds to TTFT (never negative).
double request_latency_ms(const std::vector<double>& x) { return std::max(0.0, x[kRequest]); }

json calibration_of(const std::vector<double>& x, const std::string& id, const std::string& source) {
  ClusterCalibration c;
  c.id = id;
  c.source = source;
  // Clamped to what the reader accepts (perf/cluster_calibration.hpp).
  auto scale = [](double log_scale) { return kEfficiencyScaleRange.clamp(std::exp(log_scale)); };
  c.compute_efficiency_scale = scale(x[0]);
  c.memory_efficiency_scale = scale(x[1]);
  c.comm_efficiency_scale = scale(x[2]);
  c.host_us_per_step = kHostUsPerStepRange.clamp(x[kHost] * 1e3);
  // Applied by the replay itself (jobs/client_request_latency), as `run` applies it.
  c.request_latency_ms = kRequestLatencyMsRange.clamp(request_latency_ms(x));
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

// The replay's statistic for a target, as the client measures it: a replay
// with a calibration includes its per-request latency in TTFT and E2E (the
// same job `run --calibration` runs).
double predicted(const Replay& p, const FitTarget& t) {
  auto it = p.value.find(t.statistic);
  return it == p.value.end() ? 0 : it->second;
}

// Each residual is weighted by the precision of its replayed statistic: a
// loaded run's mean TTFT moves by a percent or more with the luck of the
// arrival draw, a mean TPOT over thousands of steps barely moves; and, where
// the file records the spread of its requests, by the measured mean's own
// precision (a closed loop's replay has no spread of its own). Weighting by
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
  const FitOptions* options = nullptr;
  int64_t replays_done = 0;
  int64_t replays_bound = 1;  // set with max_evaluations (cap_evaluations)
  int64_t units_per_evaluation = 1;  // the estimated work of replaying every run once
};

// One replay of run `i` for the fit, counted for the caller's progress.
Replay replay_counted(Problem& pb, size_t i, const json& calibration) {
  Replay p = replay_run(pb.base, pb.runs[i], calibration);
  ++pb.replays_done;
  if (pb.options && pb.options->on_progress)
    pb.options->on_progress(std::min(1.0, static_cast<double>(pb.replays_done) / static_cast<double>(pb.replays_bound)));
  return p;
}

std::vector<double> residuals(Problem& pb, const std::vector<size_t>& subset, const std::vector<double>& x) {
  const json cal = calibration_of(x, pb.id, "fit");
  std::vector<double> r;
  for (size_t i : subset) {
    const Replay p = replay_counted(pb, i, cal);
    const RunData& d = pb.data[i];
    for (size_t k = 0; k < d.targets.size(); ++k)
      r.push_back(d.weights[k] *
                  huber_residual(log_error(predicted(p, d.targets[k]), d.targets[k].measured), 0.2));
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

// Levenberg–Marquardt on the factors in `free` (the others stay at 0, no
// correction), from `start`, with weak priors toward no correction (σ = 10 in
// log scale, 1 s of host time per step).
LeastSquaresResult minimize_free(Problem& pb, const std::vector<size_t>& subset, const std::vector<double>& start,
                                 const std::vector<bool>& free) {
  // 2% of a scale; 50 µs of host time; 0.5 ms per request.
  static const double kStep[kParameters] = {0.02, 0.02, 0.02, 0.05, 0.5};
  static const double kSigma[kParameters] = {10, 10, 10, 1000, 10000};
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

// The residual variance of a fit with `free_count` free factors, never below
// the noise floor of the replayed statistics (1 in weighted units).
double residual_variance(const LeastSquaresResult& ls, size_t free_count) {
  double ss = 0;
  for (double r : ls.residuals) ss += r * r;
  const size_t m = ls.residuals.size();
  return m > free_count ? std::max(1.0, ss / static_cast<double>(m - free_count)) : 1.0;
}

// Standard errors of the factors in `keep` from the data Jacobian restricted
// to their columns, scaled by the residual variance (+inf: singular).
std::vector<double> standard_errors(const LeastSquaresResult& ls, const std::vector<bool>& keep, double s2) {
  std::vector<size_t> cols;
  for (size_t j = 0; j < kParameters; ++j)
    if (keep[j]) cols.push_back(j);
  std::vector<std::vector<double>> jr;
  for (const auto& row : ls.jacobian) {
    std::vector<double> r;
    for (size_t j : cols) r.push_back(j < row.size() ? row[j] : 0.0);
    jr.push_back(r);
  }
  const auto cov = normal_inverse(jr, cols.size());
  std::vector<double> se(kParameters, std::numeric_limits<double>::infinity());
  for (size_t k = 0; k < cols.size(); ++k) se[cols[k]] = std::sqrt(cov[k][k] * s2);
  return se;
}

double excess(size_t j, double x, double se) {
  if (!std::isfinite(se)) return std::numeric_limits<double>::infinity();
  const double bound = j == kHost ? std::max(0.05, 0.25 * std::fabs(x)) : j == kRequest ? std::max(1.0, 0.25 * std::fabs(x)) : 0.25;
  return se / bound;
}

// Fits every factor, then chooses the ones the runs identify from the
// Jacobian's rank and conditioning: while some factor's standard error is past
// its bound, the worst one is held at "no correction" and the rest are judged
// again (no replay needed). If any was held, the rest are refitted once.
Identified fit_identified(Problem& pb, const std::vector<size_t>& subset, const std::vector<double>& start) {
  Identified out;
  out.why.assign(kParameters, "");
  LeastSquaresResult ls = minimize_free(pb, subset, start, std::vector<bool>(kParameters, true));
  std::vector<bool> keep = ls.seen;
  for (size_t j = 0; j < kParameters; ++j)
    if (!keep[j]) out.why[j] = "these runs do not depend on it";
  // Every subset of the factors the runs see, judged on the one Jacobian (no
  // replays): the largest subset, smaller than the number of figures, whose
  // every factor is within its bound, the best conditioned (smallest worst
  // excess) among those of that size.
  const std::vector<bool> seen = keep;
  std::vector<bool> best(kParameters, false);
  size_t best_size = 0;
  double best_excess = std::numeric_limits<double>::infinity();
  for (unsigned mask = 1; mask < (1u << kParameters); ++mask) {
    std::vector<bool> subset_keep(kParameters, false);
    size_t n = 0;
    for (size_t j = 0; j < kParameters; ++j)
      if ((mask >> j) & 1u) {
        if (!seen[j]) goto next_subset;
        subset_keep[j] = true;
        ++n;
      }
    // At least one figure more than factors: with none to spare the misfit,
    // and so the standard errors, cannot be known.
    if (n >= ls.residuals.size()) continue;
    {
      const std::vector<double> se = standard_errors(ls, subset_keep, residual_variance(ls, n));
      double worst = 0;
      for (size_t j = 0; j < kParameters; ++j)
        if (subset_keep[j]) worst = std::max(worst, excess(j, ls.x[j], se[j]));
      if (worst <= 1 && (n > best_size || (n == best_size && worst < best_excess))) {
        best = subset_keep;
        best_size = n;
        best_excess = worst;
      }
    }
  next_subset:;
  }
  {
    const std::vector<double> se_all = standard_errors(ls, seen, residual_variance(ls, best_size));
    for (size_t j = 0; j < kParameters; ++j)
      if (seen[j] && !best[j])
        out.why[j] = std::isfinite(se_all[j]) ? "too uncertain in these runs (standard error past ±25%)"
                                              : "confounded with other factors in these runs (singular Jacobian)";
  }
  keep = best;
  std::vector<double> x = ls.x;
  if (keep != ls.seen && std::count(keep.begin(), keep.end(), true) > 0) {
    for (size_t j = 0; j < kParameters; ++j)
      if (!keep[j]) x[j] = 0;
    ls = minimize_free(pb, subset, x, keep);
    x = ls.x;
  }
  const size_t n = static_cast<size_t>(std::count(keep.begin(), keep.end(), true));
  out.residual_variance = residual_variance(ls, n);
  const std::vector<double> se = standard_errors(ls, keep, out.residual_variance);
  for (size_t j = 0; j < kParameters; ++j) {
    out.determined[j] = keep[j] && excess(j, x[j], se[j]) <= 1;
    if (keep[j] && !out.determined[j]) out.why[j] = "too uncertain after the refit (standard error past ±25%)";
    out.se[j] = out.determined[j] ? se[j] : 0;
    if (!out.determined[j]) x[j] = 0;
  }
  out.x = x;
  out.converged = ls.converged;
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
  json row = {
      {"file", run.file}, {"where", run.where}, {"format", run.format}, {"held_out", held_out}, {"figures", figures}};
  // A replay stopped at its benchmark's end: the requests it completed by then against the run's.
  if (run.stop_s > 0)
    row["requests_completed"] = {
        {"measured", run.sent - run.cut}, {"uncalibrated", d.before.completed}, {"calibrated", after.completed}};
  return row;
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
// The fewest replays of each run a fit needs: the uncalibrated and
// calibrated replays, then at least two iterations of (factors + 1) replays in
// each of up to two rounds per fit.
int64_t replays_needed(bool held_out) {
  const int64_t fits = held_out ? 2 : 1;
  return 3 + fits * 2 * static_cast<int64_t>(kParameters + 1) * 2;
}

void cap_evaluations(Problem& pb, const FitOptions& options, bool held_out) {
  const int64_t fits = held_out ? 2 : 1;
  const int64_t needed = replays_needed(held_out);
  int64_t per_evaluation = 0;
  size_t estimated = 0;
  for (const BenchRun& r : pb.runs) {
    per_evaluation += std::max<int64_t>(1, replay_work_units(pb.base, r));
    ++estimated;
    // Stop estimating once the budget is known to be short: the estimate itself stays bounded.
    if (per_evaluation * needed > options.max_work_units)
      fail(error_code::kLimitExceeded, "",
           "fit: replaying " + std::string(estimated < pb.runs.size() ? "the first " : "these ") +
               std::to_string(estimated) + " of the " + std::to_string(pb.runs.size()) + " runs once takes up to " +
               std::to_string(per_evaluation) + " work units, and a fit needs at least " + std::to_string(needed) +
               " replays (" + std::to_string(per_evaluation * needed) + " units), over the budget of " +
               std::to_string(options.max_work_units) + " units (about 60 s of CPU): give fewer runs or raise --max-work-units");
  }
  pb.units_per_evaluation = per_evaluation;
  const int64_t allowed = options.max_work_units / per_evaluation;
  pb.max_evaluations = static_cast<int>(std::min<int64_t>(60, (allowed - 3) / (fits * 2)));
  pb.options = &options;
  pb.replays_bound = static_cast<int64_t>(pb.runs.size()) * (3 + fits * 2 * pb.max_evaluations);
}

// The uncalibrated replay of every run: the report's "before", each
// statistic's precision, and a refusal for a run the base cannot serve (a
// calibration fitted to a replay that completes nothing would be noise).
void replay_uncalibrated(Problem& pb) {
  for (size_t i = 0; i < pb.runs.size(); ++i) {
    const BenchRun& run = pb.runs[i];
    RunData d;
    d.targets = fit_targets(run);
    if (d.targets.empty())
      fail(error_code::kMissingKey, run.where, run.file + run.where + ": the run has no figure a fit can compare with");
    d.before = replay_counted(pb, i, nullptr);
    if (d.before.completed <= 0)
      fail(error_code::kConstraint, run.requests_source,
           run.file + run.where + ": replayed on " + pb.base.name +
               " without calibration, this run completes no request (the base cannot serve this load); no "
               "calibration is written");
    check_stopped_count(pb.base.name, run, d.before.completed);
    for (const FitTarget& t : d.targets) {
      if (!(predicted(d.before, t) > 0))
        fail(error_code::kConstraint, t.source,
             run.file + run.where + ": replayed on " + pb.base.name + ", this run gives no " + t.statistic +
                 " to compare with " + t.metric + "; no calibration is written");
      // The difference's standard error: the replay's and, where the file records its spread, the measurement's.
      auto se = d.before.rel_se.find(t.statistic);
      const double replay_se = se == d.before.rel_se.end() ? 0.0 : se->second;
      d.weights.push_back(1 / std::max(std::hypot(replay_se, t.measured_rel_se), kMinRelativeError));
    }
    pb.data.push_back(std::move(d));
  }
}

json factors_report(const Identified& f) {
  json se = json::object(), held = json::object(), fitted = json::array();
  for (size_t j = 0; j < kParameters; ++j) {
    if (f.determined[j]) {
      fitted.push_back(kFactorNames[j]);
      se[kFactorNames[j]] = j == kHost ? f.se[j] * 1e3 : j == kRequest ? f.se[j] : std::exp(f.x[j]) * f.se[j];
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

namespace {

// Runs replayed with a calibration, as report rows with the median |error| of
// their figures, calibrated and not.
struct ErrorTable {
  json rows = json::array();
  std::vector<double> before, after;
  void add(json row) {
    for (const json& fig : row["figures"]) {
      before.push_back(fig["error_uncalibrated"].get<double>());
      after.push_back(fig["error_calibrated"].get<double>());
    }
    rows.push_back(std::move(row));
  }
};

// Leave-one-run-out: for each run, the factors the full fit determined are
// refitted without it, from the full fit (two Levenberg–Marquardt iterations at
// most: near the optimum that is the usual one-step approximation of a full
// refit), and the run is predicted. Every refit counts in the work budget; when
// what is left of it cannot pay for them the report says so instead.
json leave_one_run_out(Problem& pb, const Identified& full, const FitOptions& options) {
  const size_t n = pb.runs.size();
  const int free = static_cast<int>(std::count(full.determined.begin(), full.determined.end(), true));
  if (n < 3) return {{"skipped", "leave-one-run-out needs at least 3 runs"}};
  // Spent so far: the fits' evaluations plus the uncalibrated, held-out and in-sample replays.
  const int64_t spent = (pb.evaluations + 3) * pb.units_per_evaluation;
  const int64_t left = options.max_work_units - spent;
  int per_refit = 2 * (free + 1) + 1;
  const auto cost = [&](int evals) { return static_cast<int64_t>(n) * (evals + 1) * pb.units_per_evaluation; };
  if (cost(per_refit) > left) per_refit = free + 2;  // one iteration
  if (cost(per_refit) > left)
    return {{"skipped", "the work budget left after the fit (" + std::to_string(std::max<int64_t>(0, left)) +
                            " units) cannot pay for " + std::to_string(n) + " refits (" + std::to_string(cost(per_refit)) +
                            " units): raise --max-work-units"}};
  const int saved = pb.max_evaluations;
  pb.max_evaluations = per_refit;
  ErrorTable t;
  for (size_t i = 0; i < n; ++i) {
    std::vector<size_t> rest;
    for (size_t k = 0; k < n; ++k)
      if (k != i) rest.push_back(k);
    std::vector<double> x = minimize_free(pb, rest, full.x, full.determined).x;
    for (size_t j = 0; j < kParameters; ++j)
      if (!full.determined[j]) x[j] = 0;
    t.add(error_row(pb.runs[i], pb.data[i], replay_run(pb.base, pb.runs[i], calibration_of(x, pb.id, "fit")), true));
  }
  pb.max_evaluations = saved;
  return {{"method", "each run predicted by the determined factors refitted without it (at most " +
                         std::to_string(per_refit) + " evaluations per refit, from the full fit)"},
          {"runs", t.rows},
          {"median_abs_error_uncalibrated", median_abs(t.before)},
          {"median_abs_error", median_abs(t.after)}};
}

// What a calibration was fitted on, for `run --calibration` to tell a scenario
// outside it (jobs/calibration_range): the base's model, GPU and stack, each
// replayed model, and the range of the runs' load and lengths.
json fitted_on(const FitBase& base, const std::vector<BenchRun>& runs) {
  json models = json::array();
  auto add_model = [&](const std::string& m) {
    if (!m.empty() && std::find(models.begin(), models.end(), json(m)) == models.end()) models.push_back(m);
  };
  add_model(base.doc.value("model", json("")).is_string() ? base.doc.value("model", std::string()) : std::string());
  double rate_lo = 1e300, rate_hi = 0, prompt_lo = 1e300, prompt_hi = 0, out_lo = 1e300, out_hi = 0;
  int64_t conc_lo = std::numeric_limits<int64_t>::max(), conc_hi = 0;
  for (const BenchRun& r : runs) {
    if (!r.replay_model.empty()) add_model(r.replay_model);
    if (r.load == "closed_loop") {
      conc_lo = std::min(conc_lo, r.concurrency);
      conc_hi = std::max(conc_hi, r.concurrency);
      // The rate it achieved is a load point too: an open-loop scenario at that rate is within the range.
      if (const BenchFigure* f = r.figure("requests_per_s"); f && f->value > 0) {
        rate_lo = std::min(rate_lo, f->value);
        rate_hi = std::max(rate_hi, f->value);
      }
    } else if (r.load == "rate" && r.rate_qps > 0) {
      rate_lo = std::min(rate_lo, r.rate_qps);
      rate_hi = std::max(rate_hi, r.rate_qps);
    }
    if (r.prompt_tokens_mean) {
      prompt_lo = std::min(prompt_lo, *r.prompt_tokens_mean);
      prompt_hi = std::max(prompt_hi, *r.prompt_tokens_mean);
    }
    if (r.output_tokens_mean) {
      out_lo = std::min(out_lo, *r.output_tokens_mean);
      out_hi = std::max(out_hi, *r.output_tokens_mean);
    }
  }
  auto range = [](double lo, double hi) { return lo <= hi ? json::array({lo, hi}) : json(nullptr); };
  const json* hw = base.doc.contains("hardware") && base.doc["hardware"].is_object() ? &base.doc["hardware"] : nullptr;
  const json* cm = base.doc.contains("cost_model") && base.doc["cost_model"].is_object() ? &base.doc["cost_model"] : nullptr;
  return {{"models", models},
          {"gpu", hw && (*hw).contains("gpu") ? (*hw)["gpu"] : json(nullptr)},
          {"software_stack", cm && (*cm).contains("software_stack") ? (*cm)["software_stack"] : json(nullptr)},
          {"rate_qps", range(rate_lo, rate_hi)},
          {"concurrency", conc_lo <= conc_hi ? json::array({conc_lo, conc_hi}) : json(nullptr)},
          {"prompt_tokens", range(prompt_lo, prompt_hi)},
          {"output_tokens", range(out_lo, out_hi)}};
}

}  // namespace

json fit_cluster_calibration(const FitBase& base, const std::vector<BenchRun>& runs, const std::string& id,
                             const std::string& source, const FitOptions& options) {
  if (runs.empty()) fail(error_code::kMissingKey, "", "a fit needs at least one benchmark run");
  bench::check_held_settings(runs);  // one kernel set per fit: its factors measure one
  // Every `holdout_every`-th run is held out of a first fit whose error on them is reported.
  std::vector<size_t> all, fit_set, held_out;
  const size_t every = static_cast<size_t>(std::max(0, options.holdout_every));
  for (size_t i = 0; i < runs.size(); ++i) {
    all.push_back(i);
    (every >= 2 && runs.size() >= every && i % every == every - 1 ? held_out : fit_set).push_back(i);
  }
  // Every run replays as many requests as it completed where the budget pays
  // for twice the fewest replays a fit needs, else the largest runs are cut.
  std::vector<BenchRun> sized = runs;
  const std::vector<std::string> cut =
      size_replays(base, sized, options.max_work_units / (2 * replays_needed(!held_out.empty())));
  Problem pb{base, sized, {}, id};
  cap_evaluations(pb, options, !held_out.empty());
  replay_uncalibrated(pb);
  const std::vector<double> start(kParameters, 0.0);
  json held_report = nullptr;
  // Why there is no held-out report (null where runs were held out, or none were asked for).
  json held_skipped = nullptr;
  if (every >= 2 && held_out.empty())
    held_skipped = "holding out every " + std::to_string(every) + "-th run leaves none out of these " +
                   std::to_string(runs.size()) + " runs";
  std::vector<double> start_all = start;
  if (!held_out.empty()) {
    const Identified f = fit_identified(pb, fit_set, start);
    const json cal = calibration_of(f.x, id, source);
    ErrorTable t;
    for (size_t i : held_out) t.add(error_row(runs[i], pb.data[i], replay_counted(pb, i, cal), true));
    held_report = {{"every", every},
                   {"factors_fitted_without_them", cal["factors"]},
                   {"request_latency_ms_fitted_without_them", request_latency_ms(f.x)},
                   {"runs", t.rows},
                   {"median_abs_error_uncalibrated", median_abs(t.before)},
                   {"median_abs_error", median_abs(t.after)}};
    start_all = f.x;
  }
  const Identified f = fit_identified(pb, all, start_all);
  if (std::none_of(f.determined.begin(), f.determined.begin() + kRequest, [](bool b) { return b; }))
    fail(error_code::kConstraint, "",
         runs[0].file + (runs.size() > 1 ? " and the other files" : std::string()) +
             ": these runs determine none of the calibration's factors (" + f.why[0] +
             " for compute; see docs/calibrate-from-benchmarks.md for runs that do); no calibration is written");
  json out = calibration_of(f.x, id, source);
  ErrorTable in_sample;
  for (size_t i : all) in_sample.add(error_row(runs[i], pb.data[i], replay_counted(pb, i, out), false));
  const json loo = leave_one_run_out(pb, f, options);
  json files = json::array();
  for (const BenchRun& r : sized) {
    files.push_back(r.to_json());
    files.back()["replayed_requests"] = replay_requests(r);
    files.back()["replayed_arrival"] = scenario_for_bench_run(base.doc, r, nullptr)["serving"]["workload"]["arrival"];
  }
  json warnings = plausibility_warnings(out["factors"]);
  for (const std::string& w : cut) warnings.push_back(w);
  const json fr = factors_report(f);
  out["fit"] = {{"method", "Levenberg-Marquardt on Huber(log pred/meas) of TTFT and TPOT (a closed batch: output "
                           "throughput), weak priors toward no correction; undetermined factors held at no correction"},
                {"base_scenario", base.name},
                {"fitted_on", fitted_on(base, runs)},
                {"runs", files},
                {"evaluations", pb.evaluations},
                {"max_evaluations_per_fit", pb.max_evaluations},
                {"converged", f.converged},
                {"fitted", fr["fitted"]},
                {"held_at_no_correction", fr["held_at_no_correction"]},
                {"standard_errors", fr["standard_errors"]},
                // The same as factors.request_latency_ms (what `run` applies), kept for readers of the report.
                {"request_latency_ms", request_latency_ms(f.x)},
                {"residual_variance", fr["residual_variance"]},
                {"warnings", warnings},
                {"in_sample", {{"runs", in_sample.rows},
                               {"median_abs_error_uncalibrated", median_abs(in_sample.before)},
                               {"median_abs_error_calibrated", median_abs(in_sample.after)}}},
                {"held_out", held_report},
                {"held_out_skipped", held_skipped},
                {"leave_one_run_out", loo}};
  return out;
}

}  // namespace sightline::fit
