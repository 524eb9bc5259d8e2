#include "serve/router_loads.hpp"

#include <algorithm>

namespace sightline::serve {

double RouterLoads::kv_load(int replica, int model) const {
  ++reads_;
  capacity_read_ = true;
  const ModelEngine& e = replicas_[static_cast<size_t>(replica)].engines[static_cast<size_t>(model)];
  return static_cast<double>(e.kv.pool.used() + kv_.blocks_for(e.kv, e.queued_tokens)) /
         static_cast<double>(std::max<int64_t>(1, e.kv.pool.total()));
}

int64_t RouterLoads::cached_prefix_tokens(int replica, const RequestSpec& r) const {
  ++reads_;
  const ModelEngine& e = replicas_[static_cast<size_t>(replica)].engines[static_cast<size_t>(r.model)];
  return kv_.probe(e.kv, r, r.prompt).blocks() * block_size_;
}

double RouterLoads::kv_route_cost(int replica, const RequestSpec& r) const {
  ++reads_;
  const ModelEngine& e = replicas_[static_cast<size_t>(replica)].engines[static_cast<size_t>(r.model)];
  const PrefixProbe p = kv_.probe(e.kv, r, r.prompt);
  const double per_token = prefill_s_per_token_[static_cast<size_t>(e.cost)];
  const double compute = static_cast<double>(r.prompt - p.blocks() * block_size_);
  const double reload = per_token > 0 ? p.reload_s / per_token : 0.0;
  const double in_use = static_cast<double>((e.kv.pool.used() - e.kv.pool.evictable()) * block_size_);
  return compute + reload + static_cast<double>(e.queued_tokens) + in_use;
}

}  // namespace sightline::serve
