#include "serve/router.hpp"

#include "scenario/policy_registry.hpp"

namespace sightline::serve {

namespace {

class RoundRobinRouter : public Router {
 public:
  int pick(const std::vector<int>& candidates, int, const ReplicaLoads&) override {
    const int r = candidates[static_cast<size_t>(turn_ % static_cast<int64_t>(candidates.size()))];
    ++turn_;
    return r;
  }

 private:
  int64_t turn_ = 0;
};

// Ties go to the earliest candidate.
class LeastOutstandingRouter : public Router {
 public:
  int pick(const std::vector<int>& candidates, int, const ReplicaLoads& loads) override {
    int best = candidates.front();
    int64_t best_load = loads.outstanding(best);
    for (int c : candidates) {
      const int64_t load = loads.outstanding(c);
      if (load < best_load) {
        best_load = load;
        best = c;
      }
    }
    return best;
  }
};

class LeastKvLoadRouter : public Router {
 public:
  int pick(const std::vector<int>& candidates, int model, const ReplicaLoads& loads) override {
    int best = candidates.front();
    double best_load = 1e300;
    for (int c : candidates) {
      const double load = loads.kv_load(c, model);
      if (load < best_load) {
        best_load = load;
        best = c;
      }
    }
    return best;
  }
};

template <class T>
std::unique_ptr<Router> make() {
  return std::make_unique<T>();
}

}  // namespace

const std::vector<RouterFactory>& router_factories() {
  static const std::vector<RouterFactory> r = {
      {"round_robin", make<RoundRobinRouter>},
      {"least_outstanding", make<LeastOutstandingRouter>},
      {"least_kv_load", make<LeastKvLoadRouter>},
  };
  return r;
}

std::unique_ptr<Router> make_router(const std::string& name, const std::string& path) {
  return find_by_name(router_factories(), name, path, "router").make();
}

}  // namespace sightline::serve
