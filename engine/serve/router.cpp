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

// The cache-aware routers read the request (pick_request); a bare pick, with
// only the model known, goes to the fewest outstanding.
class CacheAwareRouter : public Router {
 public:
  int pick(const std::vector<int>& candidates, int model, const ReplicaLoads& loads) override {
    return fewest_.pick(candidates, model, loads);
  }
  void changed(int replica) override { fewest_.changed(replica); }

 protected:
  LeastOutstandingRouter fewest_;
};

// prefix_affinity: the candidate holding the longest prefix of the prompt
// (HBM and offload tiers), among those whose outstanding requests are within
// load_bound x the candidates' mean + 1 (consistent hashing with bounded
// loads: a hot prefix spills to other replicas instead of queueing on one);
// ties, and prompts no replica holds, to the fewest outstanding. A scan of
// the candidates per arrival: O(replicas x prefix blocks), meant for the
// tens of replicas such routers front, not for thousands.
class PrefixAffinityRouter : public CacheAwareRouter {
 public:
  explicit PrefixAffinityRouter(double load_bound) : load_bound_(load_bound) {}
  int pick_request(const std::vector<int>& candidates, const RequestSpec& r, const ReplicaLoads& loads) override {
    double mean = 0;
    for (int c : candidates) mean += static_cast<double>(loads.outstanding(c));
    mean /= static_cast<double>(candidates.size());
    const double bound = load_bound_ * mean + 1.0;
    int best = -1;
    int64_t best_tokens = 0, best_load = 0;
    for (int c : candidates) {
      const int64_t load = loads.outstanding(c);
      if (static_cast<double>(load) > bound) continue;
      const int64_t tokens = loads.cached_prefix_tokens(c, r);
      if (tokens > best_tokens || (tokens == best_tokens && tokens > 0 && load < best_load)) {
        best = c;
        best_tokens = tokens;
        best_load = load;
      }
    }
    return best >= 0 ? best : fewest_.pick(candidates, r.model, loads);
  }

 private:
  double load_bound_;
};

// session_affinity: a session's later turns follow its first (sticky
// sessions, as a gateway's session-id hash does); first turns and single
// requests go to the fewest outstanding.
class SessionAffinityRouter : public CacheAwareRouter {
 public:
  int pick_request(const std::vector<int>& candidates, const RequestSpec& r, const ReplicaLoads& loads) override {
    if (r.session < 0) return fewest_.pick(candidates, r.model, loads);
    const size_t s = static_cast<size_t>(r.session);
    if (s >= home_.size()) home_.resize(s + 1, -1);
    if (home_[s] < 0 || std::find(candidates.begin(), candidates.end(), home_[s]) == candidates.end())
      home_[s] = fewest_.pick(candidates, r.model, loads);
    return home_[s];
  }

 private:
  std::vector<int> home_;  // by session: its replica, -1 before its first turn
};

// kv_aware: the least cost, in prompt-token equivalents: the prompt tokens the
// replica would compute, plus the tokens it would reload from offload tiers
// weighted by reload time over prefill time, plus its load (queued prompt
// tokens and KV tokens in use). Dynamo's KV router weighs the same two
// things, the blocks to prefill after the cache overlap and the active
// (decoding) blocks, with --kv-overlap-score-weight 1 by default
// (ai-dynamo/dynamo, docs/architecture/kv_cache_routing.md); ties to the
// earliest candidate.
class KvAwareRouter : public CacheAwareRouter {
 public:
  int pick_request(const std::vector<int>& candidates, const RequestSpec& r, const ReplicaLoads& loads) override {
    int best = candidates.front();
    double best_cost = 0;
    bool first = true;
    for (int c : candidates) {
      const double cost = loads.kv_route_cost(c, r);
      if (first || cost < best_cost) {
        best = c;
        best_cost = cost;
        first = false;
      }
    }
    return best;
  }
};

template <class T>
std::unique_ptr<Router> make(const RouterOptions&) {
  return std::make_unique<T>();
}

std::unique_ptr<Router> make_prefix_affinity(const RouterOptions& o) {
  return std::make_unique<PrefixAffinityRouter>(o.load_bound);
}

}  // namespace

const std::vector<RouterFactory>& router_factories() {
  static const std::vector<RouterFactory> r = {
      {"round_robin", make<RoundRobinRouter>},
      {"least_outstanding", make<LeastOutstandingRouter>},
      {"least_kv_load", make<LeastKvLoadRouter>},
      {"prefix_affinity", make_prefix_affinity},
      {"session_affinity", make<SessionAffinityRouter>},
      {"kv_aware", make<KvAwareRouter>},
  };
  return r;
}

std::unique_ptr<Router> make_router(const std::string& name, const std::string& path, const RouterOptions& o) {
  return find_by_name(router_factories(), name, path, "router").make(o);
}

}  // namespace sightline::serve
