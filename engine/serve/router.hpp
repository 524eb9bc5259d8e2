#pragma once
// Global routing: which replica of a pool an arriving (or handed-off) request
// goes to. One router instance serves one set of candidate replicas, so
// stateful policies (round robin) keep one turn per set. Policies are chosen
// by name from a string-keyed registry of factories.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sightline::serve {

// What a router may read about the replicas, supplied by the simulator.
class ReplicaLoads {
 public:
  virtual ~ReplicaLoads() = default;
  virtual int64_t outstanding(int replica) const = 0;  // routed here and not yet finished or handed off
  // Share of the KV blocks of `model`'s engine in use or asked for by its waiting prompts.
  virtual double kv_load(int replica, int model) const = 0;
};

class Router {
 public:
  virtual ~Router() = default;
  // `candidates` is non-empty; `model` is the request's model index.
  virtual int pick(const std::vector<int>& candidates, int model, const ReplicaLoads& loads) = 0;
  // The simulator says a replica's loads may have changed since the last pick
  // (an event touched it); load-keyed routers re-read only such replicas, so a
  // pick costs O(log replicas), not a scan of every candidate.
  virtual void changed(int /*replica*/) {}
};

struct RouterFactory {
  const char* name;  // the name in serving.cluster.router (the `routers()` registry)
  std::unique_ptr<Router> (*make)();
};
const std::vector<RouterFactory>& router_factories();

// The router called `name`; an unknown name fails with a located error at
// `path` that lists the valid names.
std::unique_ptr<Router> make_router(const std::string& name, const std::string& path);

}  // namespace sightline::serve
