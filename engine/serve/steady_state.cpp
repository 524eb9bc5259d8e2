#include "serve/steady_state.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "serve/offered_load.hpp"
#include "serve/slo_shares.hpp"

namespace sightline::serve {

namespace {

// Multiples of Little's L (the mean number of requests in the system): the
// warm-up skips 3 turnovers of the system's contents, the cool-down 1 (after
// the last arrival the load falls away), and a batch spans 2 so that batch
// means are close to independent.
constexpr double kWarmupTurnovers = 3.0;
constexpr double kCooldownTurnovers = 1.0;
constexpr double kBatchTurnovers = 2.0;
constexpr int64_t kMinWarmup = 50;
// Batches (and the warm-up) span this many autocorrelation times, so batch
// means are close to independent.
constexpr double kBatchCorrelations = 2.0;
constexpr size_t kMaxAutocorrelationPoints = 2000;
constexpr int64_t kMinCooldown = 10;
// A batch sees on average this many SLO misses at the target attainment, so
// its fraction is not all-or-nothing.
constexpr double kMissesPerBatch = 20.0;
constexpr int64_t kMaxBatchForAttainment = 1000;
// Growth of the in-system count that is too small to matter (requests, and
// share of L): below both, a statistically significant trend is ignored.
constexpr double kNegligibleGrowth = 2.0;
constexpr double kIndifferenceShare = 0.25;
// One-sided 75% normal quantile: the level a narrow interval is decided at.
constexpr double kNarrowLevelZ = 0.6744897501960817;
constexpr double kNegligibleGrowthShare = 0.25;

constexpr double kRerunMargin = 1.25;

int64_t ceil_at_least(double v, int64_t floor_value) {
  return std::max<int64_t>(floor_value, static_cast<int64_t>(std::ceil(v)));
}

int64_t attainment_batch(double attainment) {
  const double miss = 1.0 - attainment;
  return miss > 0 ? std::min<int64_t>(kMaxBatchForAttainment, ceil_at_least(kMissesPerBatch / miss, 1)) : kMaxBatchForAttainment;
}

}  // namespace

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::Meets: return "meets";
    case Verdict::Fails: return "fails";
    case Verdict::Uncertain: return "uncertain";
  }
  return "uncertain";
}

double student_t_quantile(int dof, double confidence) {
  // Normal quantiles for the supported levels, then the Cornish-Fisher
  // expansion in 1/dof (polynomial only, so native and wasm agree to the bit).
  double z = 1.6448536269514722;
  if (confidence <= 0.8 + 1e-9) z = 1.2815515655446004;
  else if (confidence <= 0.9 + 1e-9) z = 1.6448536269514722;
  else if (confidence <= 0.95 + 1e-9) z = 1.959963984540054;
  else z = 2.5758293035489004;
  const double v = std::max(1, dof);
  const double z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

double relaxation_requests(double rho) {
  if (rho <= 0) return 0;
  if (rho >= 1) return 1e300;
  const double gap = 1.0 - std::sqrt(rho);
  return rho / (gap * gap);
}

RunSize run_size(double in_system, double correlation, double rho, double attainment, const SteadyStateOptions& o) {
  const double relax = std::min(1e15, std::max(correlation, relaxation_requests(rho)));
  RunSize z;
  z.warmup = std::max(ceil_at_least(kWarmupTurnovers * in_system, kMinWarmup), ceil_at_least(kBatchCorrelations * relax, 0));
  z.batch = std::max({o.min_batch_requests, attainment_batch(attainment), ceil_at_least(kBatchTurnovers * in_system, 1),
                      ceil_at_least(kBatchCorrelations * relax, 0)});
  z.cooldown = ceil_at_least(kCooldownTurnovers * in_system, kMinCooldown);
  return z;
}

namespace {
// autocorrelation_time of the n values at(0), ..., at(n - 1), read only at
// the points it keeps: the judge's series need no copy of their own (two
// arrays of 8 B per request, at the end of a 1M-request run, its peak).
template <class At>
double autocorrelation_time_of(size_t n, At at) {
  if (n < 8) return 1.0;
  const size_t k = std::max<size_t>(1, (n + kMaxAutocorrelationPoints - 1) / kMaxAutocorrelationPoints);
  std::vector<double> y;
  for (size_t i = 0; i < n; i += k) y.push_back(at(i));
  const size_t m = y.size();
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(m);
  for (double& v : y) v -= mean;
  double c0 = 0;
  for (double v : y) c0 += v * v;
  if (c0 <= 0) return static_cast<double>(k);
  const auto rho_at = [&](size_t lag) {
    double c = 0;
    for (size_t i = 0; i + lag < m; ++i) c += y[i] * y[i + lag];
    return c / c0;
  };
  // tau = -1 + 2 * sum of the pair sums Gamma_j = rho(2j) + rho(2j+1) while they stay positive.
  double tau = -1.0;
  for (size_t j = 0; 2 * j + 1 < m / 2; ++j) {
    const double gamma = rho_at(2 * j) + rho_at(2 * j + 1);
    if (gamma <= 0) break;
    tau += 2 * gamma;
  }
  return std::max(1.0, tau) * static_cast<double>(k);
}
}  // namespace

double autocorrelation_time(const std::vector<double>& x) {
  return autocorrelation_time_of(x.size(), [&](size_t i) { return x[i]; });
}

int64_t extended_run_requests(const SteadyStateReport& r, int64_t requests, int64_t max_requests) {
  // The rerun re-measures L and the autocorrelation time, which rarely come
  // out lower: a margin keeps it from falling just short of its own need.
  const int64_t with_margin = static_cast<int64_t>(std::ceil(kRerunMargin * static_cast<double>(r.needed_requests)));
  return std::min(max_requests, std::max(with_margin, 2 * requests));
}

double saturated_service_rate(const OutcomeView& outcomes) {
  std::vector<TimeNs> done;
  for (const auto& r : outcomes)
    if (r.completion >= 0) done.push_back(r.completion);
  if (done.size() < 8) return 0;
  std::sort(done.begin(), done.end());
  const size_t a = done.size() / 4, b = done.size() * 3 / 4;
  const double span_s = static_cast<double>(done[b] - done[a]) * 1e-9;
  return span_s > 0 ? static_cast<double>(b - a) / span_s : 0;
}

namespace {

// Completions against arrivals over a span of arrival times (q sorted by
// arrival, done the sorted completion times).
void pace(const OutcomeView& q, const std::vector<TimeNs>& done, int64_t from, int64_t to,
          double& arrivals_qps, double& completions_qps) {
  const double span_s = window_s(q, from, to);
  arrivals_qps = static_cast<double>(to - 1 - from) / span_s;
  completions_qps = served_over(q, done, from, to) / span_s;
}

// One SLO condition's batch means judged: their mean and confidence
// half-width, the point estimate over all its requests, and its share.
struct Judged {
  double mean = 0, half = 0, point = 0, low = 0, high = 0, share = 0;
};

std::vector<Judged> judge_conditions(const std::vector<std::vector<double>>& att, const std::vector<double>& good_total,
                                     const std::vector<double>& count_total, const std::vector<SloCondition>& conditions,
                                     int batches, double t) {
  const size_t nc = conditions.size();
  std::vector<Judged> judged(nc);
  for (size_t k = 0; k < nc; ++k) {
    Judged& j = judged[k];
    for (double a : att[k]) j.mean += a;
    j.mean /= batches;
    double ss = 0;
    for (double a : att[k]) ss += (a - j.mean) * (a - j.mean);
    j.half = t * std::sqrt(ss / (batches - 1) / batches);
    j.point = count_total[k] > 0 ? good_total[k] / count_total[k] : 1.0;
    j.low = std::max(0.0, j.mean - j.half);
    j.high = std::min(1.0, j.mean + j.half);
    j.share = conditions[k].share;
  }
  return judged;
}

// Growth of the in-system count across the window: arrivals minus
// completions between the window's first and last arrival, which is the
// change in the number of requests in the system over that span. In a
// stable system it stays of the order of the system's own fluctuation
// (a few sqrt(L)) however long the window; in an overloaded one it grows in
// proportion to the window, (arrival rate - service rate) x span. Its scale
// is the Poisson standard deviation of the two counts, sqrt(arrivals +
// completions): that ignores their positive correlation, so it overstates
// the noise of a stable system (few false alarms from the slow wander of a
// continuous-batching server's occupancy, which a regression on batch means
// took for growth), and an overload of a share e of the arrival rate still
// shows once the window holds about 2 z^2 / e^2 requests (600 at 10%).
void judge_stability(SteadyStateReport& rep, const OutcomeView& q, const std::vector<TimeNs>& done,
                     int64_t lo, int64_t hi, const SteadyStateOptions& o) {
  pace(q, done, lo, hi, rep.arrival_rate_qps, rep.completion_rate_qps);
  const double expected = expected_served(q, lo, hi, o.lag_arrivals ? mean_service_ns(q, lo, hi) : 0);
  {
    const TimeNs t0 = q[static_cast<size_t>(lo)].arrival, t1 = q[static_cast<size_t>(hi - 1)].arrival;
    const auto done_by = [&](TimeNs t) { return std::upper_bound(done.begin(), done.end(), t) - done.begin(); };
    const double completions = static_cast<double>(done_by(t1) - done_by(t0));
    rep.in_system_growth = expected - completions;
    rep.in_system_growth_se = std::sqrt(expected + completions);
  }

  // One-sided at the level whose two-sided interval is `confidence`.
  const double z = student_t_quantile(1000000, o.confidence);
  const bool growing = rep.in_system_growth > z * rep.in_system_growth_se &&
                       rep.in_system_growth > std::max(kNegligibleGrowth, kNegligibleGrowthShare * rep.in_system_mean);
  rep.stable = true;
  if (growing) {
    rep.stable = false;
    rep.unstable_reason = "the number of requests in the system keeps growing";
    rep.overloaded = true;
  } else if (falls_behind(served_over(q, done, lo, hi), expected, z)) {
    rep.stable = false;
    rep.unstable_reason = "completions fall behind arrivals";
    rep.overloaded = true;
  } else if (rep.unfinished > 0) {
    rep.stable = false;
    rep.unstable_reason = "requests were dropped or never completed";
  }
}

// The verdict from every condition's judgement (t: the batch means' Student-t quantile).
void judge_verdict(SteadyStateReport& rep, const std::vector<Judged>& judged, int64_t n, double t) {
  // A pass must be shown: the interval's lower end at or above the target.
  // Once the interval is narrower than half the allowed misses, more
  // requests would only split hairs around the target, and the rate is
  // decided at a lower one-sided level (75%: the point estimate must clear
  // the target by 0.67 standard errors). Counting every such interval as a
  // miss made answers err low by 10% where the attainment falls slowly with
  // the rate (multi-LoRA adapter waits, I5.5); the point estimate alone
  // erred high there.
  // Each condition's verdict; the run meets the SLO when every one does, and
  // fails when any one does.
  const auto verdict_of = [&](const Judged& j) {
    const double zone = kIndifferenceShare * (1.0 - j.share);
    const bool narrow = j.high - j.low <= 2 * zone;
    if (!rep.stable || j.high < j.share) return Verdict::Fails;
    if (rep.needed_requests > n) return Verdict::Uncertain;  // too short to trust a pass
    if (j.low >= j.share) return Verdict::Meets;
    if (narrow) return j.mean - kNarrowLevelZ / t * j.half >= j.share ? Verdict::Meets : Verdict::Fails;
    return Verdict::Uncertain;
  };
  rep.verdict = rep.stable ? Verdict::Meets : Verdict::Fails;
  rep.shown = rep.stable && rep.needed_requests <= n;
  for (const Judged& j : judged) {
    if (j.low < j.share) rep.shown = false;
    const Verdict v = verdict_of(j);
    if (v == Verdict::Fails) rep.verdict = Verdict::Fails;
    else if (v == Verdict::Uncertain && rep.verdict != Verdict::Fails) rep.verdict = Verdict::Uncertain;
  }
}

// Requests in the system seen by each arrival (itself excluded): earlier
// arrivals minus completions so far (`done`: completion times, sorted), read
// at indices that never decrease. Poisson arrivals see time averages. Derived
// as read, not kept: a list of them was 8 bytes a request at a large run's peak.
class InSystem {
 public:
  InSystem(const OutcomeView& q, const std::vector<TimeNs>& done) : q_(q), done_(done) {}
  double at(size_t i) {
    const TimeNs t = q_[i].arrival;
    while (c_ < done_.size() && done_[c_] <= t) ++c_;
    return static_cast<double>(static_cast<int64_t>(i)) - static_cast<double>(c_);
  }

 private:
  const OutcomeView& q_;
  const std::vector<TimeNs>& done_;
  size_t c_ = 0;  // completions at or before the last arrival read
};

// A window too short to judge the SLO: the verdict is uncertain, unless an
// overload shows in the second half of the run, beyond the counts' noise
// (falls_behind). A run with no window after its warm-up is one whose fill
// has not ended: its completions trail arrivals by the time a request is
// served however stable the system, and by more while that time grows as
// batches fill (a continuous-batching step slows with its batch). So its
// completions are held to the arrivals one mean service time earlier
// whatever the workload, and they mean an overload only where admissions
// (first tokens) fall behind arrivals too: a queue waiting for admission,
// which a filling system does not grow. Compared with the arrivals of the
// same span, a pool of 72 A100s at 600 req/s (2,000 requests over 3.3 s, each
// served in about 3.4 s, P99 TTFT 75 ms) read "arrivals outrun the service
// rate (about 210 req/s)"; lagged alone, 288 of them at 2,400 req/s (82% of
// their max-QPS answer, P99 TTFT 81 ms) read the same. An overload that
// queues nowhere before admission (a decode pool behind a prefill pool) is
// left undecided here, and a run that grows (serving.steady_state) judges it
// on a window.
void judge_short_run(SteadyStateReport& rep, const OutcomeView& q, const std::vector<TimeNs>& done, const SteadyStateOptions& o) {
  const int64_t n = static_cast<int64_t>(q.size());
  rep.unstable_reason = "too few requests after the warm-up";
  rep.verdict = Verdict::Uncertain;
  if (n < 4) return;
  pace(q, done, n / 2, n, rep.arrival_rate_qps, rep.completion_rate_qps);
  const double z = student_t_quantile(1000000, o.confidence);
  auto behind = [&](const std::vector<TimeNs>& served, TimeNs lag) {
    return falls_behind(served_over(q, served, n / 2, n), expected_served(q, n / 2, n, lag), z);
  };
  std::vector<TimeNs> first;  // admissions: first tokens, sorted
  for (const auto& r : q)
    if (r.first_token >= 0) first.push_back(r.first_token);
  std::sort(first.begin(), first.end());
  const bool admissions_behind = behind(first, 0);  // no service time to lag by
  // A run whose first completion comes after its last arrival is shorter
  // than one request's latency: its completions say nothing of the pace.
  // Its first tokens still do.
  if (done.empty() || done.front() > q.back().arrival) {
    rep.overloaded = admissions_behind;
    rep.unstable_reason = rep.overloaded ? "admissions fall behind arrivals"
                                         : "no request completed while requests were arriving (the run is shorter "
                                           "than a request's latency)";
    rep.verdict = rep.overloaded ? Verdict::Fails : Verdict::Uncertain;
  } else if (admissions_behind && behind(done, mean_service_ns(q, n / 2, n))) {
    rep.unstable_reason = "completions fall behind arrivals";
    rep.overloaded = true;
    rep.verdict = Verdict::Fails;
  }
}

}  // namespace

OutcomeView arrived_by_arrival(const OutcomeView& outcomes, std::vector<RequestOutcome>& storage) {
  // In arrival order with every arrived request before the first one not
  // arrived (the usual case): a view of the arrived ones.
  size_t arrived = 0;
  bool in_order = true;
  TimeNs previous = 0;
  for (size_t i = 0; i < outcomes.size() && in_order; ++i) {
    const RequestOutcome o = outcomes[i];
    in_order = (i == 0 || !(o.arrival < previous)) && (!o.arrived || arrived == i);
    previous = o.arrival;
    if (o.arrived) ++arrived;
  }
  if (in_order) return outcomes.first(arrived);
  storage.clear();
  for (const RequestOutcome& o : outcomes)
    if (o.arrived) storage.push_back(o);
  std::stable_sort(storage.begin(), storage.end(),
                   [](const RequestOutcome& a, const RequestOutcome& b) { return a.arrival < b.arrival; });
  return storage;
}

SteadyStateReport judge_steady_state(const OutcomeView& outcomes_in, const SloSpec& slo,
                                     double in_system_guess, double correlation_guess, double rho,
                                     const SteadyStateOptions& o) {
  SteadyStateReport rep;
  std::vector<RequestOutcome> sorted;
  const OutcomeView q = arrived_by_arrival(outcomes_in, sorted);
  const int64_t n = static_cast<int64_t>(q.size());
  rep.requests = n;
  if (n == 0) {
    rep.unstable_reason = "no requests";
    rep.verdict = Verdict::Uncertain;
    return rep;
  }
  std::vector<TimeNs> done;
  done.reserve(q.size());
  for (const auto& r : q) {
    if (r.completion >= 0) done.push_back(r.completion);
    else if (!r.cut) ++rep.unfinished;  // in flight at a cut: the run's end, not the server's failure
  }
  std::sort(done.begin(), done.end());

  // Warm-up and cool-down from L: first from the caller's guess, then once
  // more from this run's own measurement of L over the window.
  const int64_t offered = offered_end(q, o), ramp = ramp_end(q, o);
  double L = std::max(0.0, in_system_guess), tau = std::max(0.0, correlation_guess);
  RunSize size;
  for (int pass = 0; pass < 2; ++pass) {
    size = run_size(L, tau, rho, slo_strictest_share(slo), o);
    const int64_t lo = std::min(std::max(size.warmup, ramp), offered), hi = offered - std::min(size.cooldown, offered - lo);
    if (hi - lo >= 8) {
      const size_t w = static_cast<size_t>(hi - lo);
      InSystem in_system(q, done), in_window_system(q, done);
      double sum = 0;
      for (size_t i = 0; i < w; ++i) sum += in_system.at(static_cast<size_t>(lo) + i);
      L = std::max(L, sum / static_cast<double>(hi - lo));
      // Misses come in clusters (a burst of long prompts, an adapter wait):
      // the SLO indicator's own autocorrelation counts as well.
      const auto in_window = [&](size_t i) { return in_window_system.at(static_cast<size_t>(lo) + i); };
      const auto hit = [&](size_t i) { return meets_slo(q[static_cast<size_t>(lo) + i], slo) ? 1.0 : 0.0; };
      tau = std::max({tau, autocorrelation_time_of(w, in_window), autocorrelation_time_of(w, hit)});
    }
  }
  rep.correlation_requests = tau;
  // The cool-down: the drain after the offered load (n - offered), then by L.
  const int64_t warm = std::min(std::max(size.warmup, ramp), offered), cool = n - offered + std::min(size.cooldown, offered - warm);
  rep.warmup_requests = warm;
  rep.cooldown_requests = cool;
  const int64_t lo = warm, hi = n - cool;
  rep.measured_requests = std::max<int64_t>(0, hi - lo);
  rep.needed_requests = size.total(o.batches);
  if (rep.measured_requests < 2 * o.min_batch_requests) {
    rep.in_system_mean = L;
    judge_short_run(rep, q.first(static_cast<size_t>(offered)), done, o);
    if (!rep.overloaded && ramp >= offered)
      rep.unstable_reason = "no session arrived after its sessions' turns' rate ramped up (a session's lifetime "
                            "from the first arrival): more sessions, or a longer run, would decide";
    return rep;
  }

  // Batch means over the window, one series per SLO condition (the joint
  // share of requests within every bound without a percentile, and each
  // bound with a percentile alone; ITL alone counts gaps, not requests).
  const int64_t window = rep.measured_requests;
  const int batches = static_cast<int>(std::max<int64_t>(2, std::min<int64_t>(o.batches, window / o.min_batch_requests)));
  const std::vector<SloCondition> conditions = slo_conditions(slo);
  const size_t nc = conditions.size();
  std::vector<std::vector<double>> att(nc, std::vector<double>(static_cast<size_t>(batches)));
  std::vector<double> good_total(nc, 0.0), count_total(nc, 0.0);
  double e2e_sum = 0;
  int64_t e2e_n = 0;
  double occ_sum = 0;
  InSystem in_system(q, done);
  for (int b = 0; b < batches; ++b) {
    const int64_t s = lo + window * b / batches, e = lo + window * (b + 1) / batches;
    std::vector<double> good(nc, 0.0), count(nc, 0.0);
    double occupancy = 0;
    for (int64_t i = s; i < e; ++i) {
      const RequestOutcome& r = q[static_cast<size_t>(i)];
      for (size_t k = 0; k < nc; ++k) count_slo_condition(r, slo, conditions[k], good[k], count[k]);
      occupancy += in_system.at(static_cast<size_t>(i));
      if (r.completion >= 0) {
        e2e_sum += static_cast<double>(r.completion - r.arrival) * 1e-9;
        ++e2e_n;
      }
    }
    for (size_t k = 0; k < nc; ++k) {
      good_total[k] += good[k];
      count_total[k] += count[k];
      att[k][static_cast<size_t>(b)] = count[k] > 0 ? good[k] / count[k] : 1.0;
    }
    occ_sum += occupancy;
  }
  rep.in_system_mean = occ_sum / static_cast<double>(window);
  rep.e2e_mean_s = e2e_n > 0 ? e2e_sum / static_cast<double>(e2e_n) : 0.0;
  const double t = student_t_quantile(batches - 1, o.confidence);

  const std::vector<Judged> judged = judge_conditions(att, good_total, count_total, conditions, batches, t);
  // The binding condition (least margin below or above its share) is the one reported.
  size_t bind = 0;
  for (size_t k = 1; k < nc; ++k)
    if (judged[k].mean - judged[k].share < judged[bind].mean - judged[bind].share) bind = k;
  if (nc > 0) {
    rep.attainment = judged[bind].point;
    rep.attainment_low = judged[bind].low;
    rep.attainment_high = judged[bind].high;
    rep.attainment_target = judged[bind].share;
    rep.binding_metrics = conditions[bind].metrics;
  }

  judge_stability(rep, q, done, lo, hi, o);

  judge_verdict(rep, judged, offered, t);
  rep.batches = batches;
  for (const Judged& j : judged) rep.estimates.push_back({j.mean, t > 0 ? j.half / t : 0.0, j.share});
  return rep;
}

namespace {
// The least over the conditions of mean - t se sqrt(own + W / H) - share:
// own 1 counts this run's own noise in the prediction (W = its window), own 0
// is the limit of an ever longer run with the same mean and variance.
double prediction_margin(const SteadyStateReport& r, int64_t horizon, const SteadyStateOptions& o, double own) {
  if (r.estimates.empty() || r.batches < 2 || horizon <= 0) return -1;
  const double t = student_t_quantile(r.batches - 1, o.confidence);
  const double spread = std::sqrt(own + static_cast<double>(r.measured_requests) / static_cast<double>(horizon));
  double margin = 1e300;
  for (const auto& e : r.estimates) margin = std::min(margin, e.mean - t * e.se * spread - e.share);
  return margin;
}
}  // namespace

double hold_margin(const SteadyStateReport& r, int64_t horizon, const SteadyStateOptions& o) {
  return prediction_margin(r, horizon, o, 1.0);
}

double hold_margin_limit(const SteadyStateReport& r, int64_t horizon, const SteadyStateOptions& o) {
  return prediction_margin(r, horizon, o, 0.0);
}

}  // namespace sightline::serve
