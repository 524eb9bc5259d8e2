#pragma once
// Global routing: which replica of a pool an arriving (or handed-off) request
// goes to. One router instance serves one set of candidate replicas, so
// stateful policies (round robin) keep one turn per set. Policies are chosen
// by name from a string-keyed registry of factories.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "serve/workload.hpp"

namespace sightline::serve {

// What a router may read about the replicas, supplied by the simulator.
class ReplicaLoads {
 public:
  virtual ~ReplicaLoads() = default;
  virtual int64_t outstanding(int replica) const = 0;  // routed here and not yet finished or handed off
  // Share of the KV blocks of `model`'s engine in use or asked for by its waiting prompts.
  virtual double kv_load(int replica, int model) const = 0;
  // Cache-aware routing: tokens of the request's prompt whose KV the replica
  // holds (in HBM or an offload tier) from the start of the prompt.
  virtual int64_t cached_prefix_tokens(int /*replica*/, const RequestSpec& /*r*/) const { return 0; }
  // The KV-aware router's cost of sending the request there, in prompt-token
  // equivalents (router "kv_aware" in router.cpp says what it sums).
  virtual double kv_route_cost(int /*replica*/, const RequestSpec& /*r*/) const { return 0; }
};

class Router {
 public:
  virtual ~Router() = default;
  // `candidates` is non-empty; `model` is the request's model index.
  virtual int pick(const std::vector<int>& candidates, int model, const ReplicaLoads& loads) = 0;
  // The request itself (its prefix, its session): cache-aware routers read
  // it; the load balancers route by its model alone.
  virtual int pick_request(const std::vector<int>& candidates, const RequestSpec& r, const ReplicaLoads& loads) {
    return pick(candidates, r.model, loads);
  }
  // The simulator says a replica's loads may have changed since the last pick
  // (an event touched it); load-keyed routers re-read only such replicas, so a
  // pick costs O(log replicas), not a scan of every candidate.
  virtual void changed(int /*replica*/) {}
};

// Values a router may take from the scenario (serving.cluster).
struct RouterOptions {
  double load_bound = 1.25;  // prefix_affinity: router_load_bound
};

struct RouterFactory {
  const char* name;  // the name in serving.cluster.router (the `routers()` registry)
  std::unique_ptr<Router> (*make)(const RouterOptions& o);
};
const std::vector<RouterFactory>& router_factories();

// The router called `name`; an unknown name fails with a located error at
// `path` that lists the valid names.
std::unique_ptr<Router> make_router(const std::string& name, const std::string& path, const RouterOptions& o = {});

}  // namespace sightline::serve
