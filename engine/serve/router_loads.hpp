#pragma once
// What the routers read of the simulator's replicas (ReplicaLoads,
// router.hpp): outstanding requests, KV load, cached prefixes and the
// KV-aware cost, read from the replicas and the KV manager as they are, with
// the count of reads (a complexity property the tests hold) and whether a
// read looked at the KV pools' size (limit_facts).
#include <cstdint>
#include <utility>
#include <vector>

#include "serve/kv_manager.hpp"
#include "serve/router.hpp"
#include "serve/sim_state.hpp"

namespace sightline::serve {

class RouterLoads final : public ReplicaLoads {
 public:
  RouterLoads(const std::vector<Replica>& replicas, const KvManager& kv, int64_t block_size)
      : replicas_(replicas), kv_(kv), block_size_(block_size) {}

  int64_t outstanding(int replica) const override {
    ++reads_;
    return replicas_[static_cast<size_t>(replica)].outstanding;
  }
  double kv_load(int replica, int model) const override;
  int64_t cached_prefix_tokens(int replica, const RequestSpec& r) const override;
  double kv_route_cost(int replica, const RequestSpec& r) const override;

  // kv_aware: each cost entry's prefill time per token (the weight of a
  // reload against recomputing), priced once at the start.
  void set_prefill_s_per_token(std::vector<double> s) { prefill_s_per_token_ = std::move(s); }
  int64_t reads() const { return reads_; }                // loads read, in all
  bool capacity_read() const { return capacity_read_; }  // a read looked at the KV pools' size

 private:
  const std::vector<Replica>& replicas_;
  const KvManager& kv_;
  int64_t block_size_;
  std::vector<double> prefill_s_per_token_;
  mutable int64_t reads_ = 0;
  mutable bool capacity_read_ = false;
};

}  // namespace sightline::serve
