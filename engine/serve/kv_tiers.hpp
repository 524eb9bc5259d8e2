#pragma once
// KV offload tiers below HBM (serving.kv_cache.offload): host DRAM over PCIe
// or NVLink-C2C, local NVMe, a shared network store. Written back on
// eviction (SGLang HiCache's write_back policy): a prefix-cache block that HBM
// evicts moves into the first tier, a block a tier evicts (least recently
// used) into the next, and the last tier drops it. A prompt whose prefix block
// is missing from HBM but held by a tier reloads it (the tier keeps its copy,
// as a cache below a cache does). Tiers are keyed by the prefix cache's exact
// block keys, so a tier hit is the same block the prefix cache would have hit.
#include <cstdint>
#include <list>
#include <memory>
#include <unordered_map>
#include <vector>

namespace sightline::serve {

// A set of block keys with a capacity in blocks, least recently used first out.
class KeyLru {
 public:
  explicit KeyLru(int64_t capacity_blocks = 0) : capacity_(capacity_blocks) {}
  int64_t capacity() const { return capacity_; }
  int64_t size() const { return static_cast<int64_t>(index_.size()); }
  // True (and the key now most recently used) when held.
  bool touch(uint64_t key);
  bool contains(uint64_t key) const { return index_.count(key) > 0; }
  // Holds `key` as the most recently used; true with `evicted` set when
  // another key fell out to make room (a tier of capacity 0 holds nothing:
  // the key itself falls out).
  bool insert(uint64_t key, uint64_t& evicted);

 private:
  int64_t capacity_;
  std::list<uint64_t> order_;  // most recent first
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> index_;  // lookups only; never iterated
};

// What one tier did, summed over the engines that use it.
struct TierCounters {
  int64_t hit_blocks = 0;      // prefix blocks found here (and reloaded into HBM)
  int64_t stored_blocks = 0;   // blocks written here (evicted from the tier above)
  int64_t dropped_blocks = 0;  // blocks this tier evicted (into the next tier, or lost from the last)
  double reload_bytes = 0;     // per GPU, into HBM
};

// One engine's chain: its own tiers, then any shared ones (owned by the
// KvManager, one per model, the same object for every replica).
class KvTierChain {
 public:
  struct Level {
    KeyLru* lru = nullptr;
    TierCounters* counters = nullptr;
    double bytes_per_s = 0;  // per GPU
    double latency_s = 0;
  };
  void add_level(Level level) { levels_.push_back(level); }
  // A local tier this chain owns.
  void add_own(int64_t capacity_blocks, TierCounters* counters, double bytes_per_s, double latency_s);
  size_t levels() const { return levels_.size(); }
  const Level& level(size_t i) const { return levels_[i]; }

  // HBM evicted `key`: it moves down the chain.
  void demote(uint64_t key);
  // The first tier holding `key` (touched as most recently used), or -1.
  int find(uint64_t key);
  int find_const(uint64_t key) const;  // the same, touching nothing

 private:
  std::vector<Level> levels_;
  std::vector<std::unique_ptr<KeyLru>> own_;
};

}  // namespace sightline::serve
