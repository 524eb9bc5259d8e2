#pragma once
// A capacity search over a pool of identical replicas: what can be learnt
// from one of them. The service rate of a pool whose replicas never wait for
// one another is k times one replica's (probe_replicas); under round robin,
// every candidate rate is decided on one replica fed every k-th arrival
// (split_replicas, one_replica_of). Why each is exact: capacity_pool.cpp.
#include <cstdint>
#include <memory>
#include <vector>

#include "scenario/simulation_spec.hpp"
#include "serve/simulation.hpp"
#include "serve/steady_state.hpp"

namespace sightline::serve {

// The replicas the service-rate probe's one replica stands for (1: probe the whole cluster).
int probe_replicas(const SimulationSpec& spec);
// The replicas a rate is split over, each run as one replica at rate / k (1: run the whole cluster).
int split_replicas(const SimulationSpec& spec);
// That replica: one of the pool, its arrival process the stream's every k-th
// arrival (the caller divides the rate by k).
std::shared_ptr<SimulationSpec> one_replica_of(const SimulationSpec& spec, int k);

// Each SLO condition's variance of its share over windows of `m` consecutive
// requests of [from, to) of `q` (in arrival order); empty when fewer than 10
// windows fit.
std::vector<double> window_share_variance(const OutcomeView& q, int64_t from, int64_t to, int64_t m,
                                          const SloSpec& slo);
// hold_margin (steady_state.hpp) for a pool's run that gives each of its k
// replicas a window of the split replica's run: the binding condition's
// estimate minus t sqrt(se^2 + v_m / k), minus its share, with v_m the
// condition's `window_var` (windows of hold horizon / k requests).
double pool_hold_margin(const SteadyStateReport& r, const std::vector<double>& window_var, int k, const SteadyStateOptions& o);

}  // namespace sightline::serve
