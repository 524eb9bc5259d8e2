#include "serve/router.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

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

// The candidate with the least load, ties to the earliest candidate. The
// loads sit in an ordered index (load, position among the candidates), one per
// model; a replica the simulator reports changed is re-read at the next pick.
// Each pick and each change costs O(log candidates): routing stays flat with
// 8,192 replicas (a scan of every candidate per arrival made such runs
// O(replicas) per event).
class LeastLoadRouter : public Router {
 public:
  int pick(const std::vector<int>& candidates, int model, const ReplicaLoads& loads) override {
    Index& ix = index(candidates, model, loads);
    for (int pos : ix.dirty) {
      ix.order.erase({ix.load[static_cast<size_t>(pos)], pos});
      ix.load[static_cast<size_t>(pos)] = load_of(candidates[static_cast<size_t>(pos)], model, loads);
      ix.order.insert({ix.load[static_cast<size_t>(pos)], pos});
      ix.is_dirty[static_cast<size_t>(pos)] = 0;
    }
    ix.dirty.clear();
    return candidates[static_cast<size_t>(ix.order.begin()->second)];
  }

  void changed(int replica) override {
    for (auto& [model, ix] : indexes_) {
      if (replica < 0 || static_cast<size_t>(replica) >= ix.pos_of.size()) continue;
      const int pos = ix.pos_of[static_cast<size_t>(replica)];
      if (pos < 0 || ix.is_dirty[static_cast<size_t>(pos)]) continue;
      ix.is_dirty[static_cast<size_t>(pos)] = 1;
      ix.dirty.push_back(pos);
    }
  }

 protected:
  virtual double load_of(int replica, int model, const ReplicaLoads& loads) const = 0;

 private:
  struct Index {
    const std::vector<int>* candidates = nullptr;
    size_t size = 0;
    std::vector<int> pos_of;  // replica -> position among the candidates, or -1
    std::vector<double> load;  // by position, as last read
    std::set<std::pair<double, int>> order;
    std::vector<char> is_dirty;
    std::vector<int> dirty;
  };

  // The model's index over these candidates, built (every load read) on first use.
  Index& index(const std::vector<int>& candidates, int model, const ReplicaLoads& loads) {
    Index& ix = indexes_[model];
    if (ix.candidates == &candidates && ix.size == candidates.size()) return ix;
    ix = Index{};
    ix.candidates = &candidates;
    ix.size = candidates.size();
    int top = 0;
    for (int c : candidates) top = std::max(top, c);
    ix.pos_of.assign(static_cast<size_t>(top) + 1, -1);
    ix.load.resize(candidates.size());
    ix.is_dirty.assign(candidates.size(), 0);
    for (size_t i = 0; i < candidates.size(); ++i) {
      const int c = candidates[i];
      if (ix.pos_of[static_cast<size_t>(c)] < 0) ix.pos_of[static_cast<size_t>(c)] = static_cast<int>(i);
      ix.load[i] = load_of(c, model, loads);
      ix.order.insert({ix.load[i], static_cast<int>(i)});
    }
    return ix;
  }

  std::map<int, Index> indexes_;
};

class LeastOutstandingRouter : public LeastLoadRouter {
 protected:
  double load_of(int replica, int, const ReplicaLoads& loads) const override {
    return static_cast<double>(loads.outstanding(replica));
  }
};

class LeastKvLoadRouter : public LeastLoadRouter {
 protected:
  double load_of(int replica, int model, const ReplicaLoads& loads) const override { return loads.kv_load(replica, model); }
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
