#include "serve/capacity_pool.hpp"

#include <algorithm>
#include <cmath>

#include "serve/slo_shares.hpp"

namespace sightline::serve {

// Whether the service rate can be probed on one replica and scaled by the
// replica count: one pool of identical replicas (no prefill/decode split),
// replicas that never wait for one another (no attention data-parallel group
// in lockstep at every MoE layer), more than one of them. When every request
// arrives at once, every router (round robin, least outstanding, least KV
// load) hands identical replicas equal shares of the queue, so each stays
// busy until the queue's last quarter and the cluster completes requests at
// k times one replica's saturated rate: nothing is shared between replicas
// but the router. Probing the whole cluster instead costs k times as much
// work (72 replicas x 4 batches each was most of the page's budget) and its
// inter-quartile span mixes 72 replicas' fill and drain phases.
int probe_replicas(const SimulationSpec& spec) {
  const auto& pools = spec.cluster.pools;
  if (pools.size() != 1 || spec.cluster.disaggregated || pools[0].role != PoolRole::Mixed) return 1;
  if (spec.moe.attention_data_parallel > 1) return 1;
  return std::max(1, pools[0].replicas);
}

// Whether every candidate rate can be decided on one replica fed the share of
// the traffic the router gives it (the replica count; 1 when it cannot). With
// round robin over a pool that probe_replicas() accepts, replica j receives
// arrivals j, j + k, j + 2k, ... of the whole stream. Request lengths, prefix
// groups and adapters are drawn independently of the arrival times and of
// one another (workload.cpp), so each replica's requests are as iid as the
// stream's; and the gap between every k-th arrival of a renewal stream with
// gamma(shape a) gaps is the sum of k of them: gamma(shape k a), the same
// mean over k and a coefficient of variation 1/sqrt(k) as large (Poisson: a =
// 1, Erlang-k; fixed gaps stay fixed). So in law each replica is the one
// simulated here, and the pool's attainment (every replica's requests, in
// equal numbers) has the same expectation. Not for routers that read loads
// or caches (their split depends on the replicas' state), a client-side cap
// on requests in flight or a shared offload tier (both couple replicas), a
// trace (its gaps are not a renewal stream) or a colocated second model (two
// streams routed on their own). The replicas' runs are correlated through the
// common arrival stream (a burst reaches all of them), which the hold
// prediction's horizon treats as independent replicas: the attainment's
// sampling noise of one replica's run of H requests, for a pool's run of H.
int split_replicas(const SimulationSpec& spec) {
  const int k = probe_replicas(spec);
  if (k <= 1 || spec.cluster.router != RouterKind::RoundRobin || spec.colocated.enabled || spec.workload.sessions.enabled) return 1;
  const ArrivalSpec& a = spec.workload.arrival;
  const bool renewal = a.process == ArrivalProcess::Poisson || a.process == ArrivalProcess::Gamma || a.process == ArrivalProcess::Fixed;
  if (!renewal || a.max_concurrency > 0) return 1;
  for (const auto& tier : spec.kv.offload_tiers)
    if (tier.shared) return 1;
  return k;
}

// One replica of the pool fed every k-th arrival (see split_replicas): its
// arrival process at 1/k of the rate (the caller divides), gamma gaps of
// shape k times the stream's.
std::shared_ptr<SimulationSpec> one_replica_of(const SimulationSpec& spec, int k) {
  auto one = std::make_shared<SimulationSpec>(spec);
  one->cluster.pools[0].replicas = 1;
  ArrivalSpec& a = one->workload.arrival;
  if (a.process == ArrivalProcess::Poisson) {
    a.process = ArrivalProcess::Gamma;
    a.cv = 1.0;
  }
  if (a.process == ArrivalProcess::Gamma) a.cv /= std::sqrt(static_cast<double>(k));
  return one;
}

// The pool's run of H requests gives each of its k replicas about H / k
// consecutive requests of its own stream. The replicas' lengths are
// independent, so the pool's share over H has the variance of one replica's
// share over H / k requests divided by k, and that is measured directly: the
// spread of the share over windows of H / k requests of the split replica's
// run. The general rule (hold_margin: sigma^2 / H from batch means) bounds
// the same variance from above, since m Var(share over m) grows with m for
// positively correlated requests, but far from it when H / k is short against
// the autocorrelation time: I2.3 on 72 A100s gives each replica 167 requests
// of a 12,000-request run, against a correlation time of about 700, and
// sigma^2 / H refuted rates whose replications met 0.963 (2026-11-29). The
// replicas are not wholly independent (a burst of the common arrival stream
// reaches all of them), but each sees 1/k of its fluctuation.
std::vector<double> window_share_variance(const OutcomeView& q, int64_t from, int64_t to, int64_t m,
                                          const SloSpec& slo) {
  constexpr int64_t kMinWindows = 10;
  const int64_t windows = m > 0 ? (to - from) / m : 0;
  if (windows < kMinWindows) return {};
  const std::vector<SloCondition> conditions = slo_conditions(slo);
  std::vector<double> var(conditions.size(), 0.0);
  for (size_t k = 0; k < conditions.size(); ++k) {
    std::vector<double> shares;
    for (int64_t w = 0; w < windows; ++w) {
      double within = 0, count = 0;
      for (int64_t i = from + w * m; i < from + (w + 1) * m; ++i)
        count_slo_condition(q[static_cast<size_t>(i)], slo, conditions[k], within, count);
      shares.push_back(count > 0 ? within / count : 1.0);
    }
    double mean = 0;
    for (double x : shares) mean += x;
    mean /= static_cast<double>(windows);
    for (double x : shares) var[k] += (x - mean) * (x - mean);
    var[k] /= static_cast<double>(windows - 1);
  }
  return var;
}

double pool_hold_margin(const SteadyStateReport& r, const std::vector<double>& window_var, int k, const SteadyStateOptions& o) {
  if (r.estimates.empty() || r.batches < 2 || window_var.size() != r.estimates.size() || k < 1) return -1;
  const double t = student_t_quantile(r.batches - 1, o.confidence);
  double margin = 1e300;
  for (size_t c = 0; c < r.estimates.size(); ++c) {
    const auto& e = r.estimates[c];
    margin = std::min(margin, e.mean - t * std::sqrt(e.se * e.se + window_var[c] / k) - e.share);
  }
  return margin;
}

}  // namespace sightline::serve
