#pragma once
// The paged KV block pool of one model on one replica, with a prefix cache:
// full blocks of a shared prompt prefix are published under an exact key,
// reference-counted by the requests that use them, and kept after their last
// user finishes until an allocation needs the room (least recently released
// first). Over-allocation is impossible by construction and also checked.
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace sightline::serve {

// Blocks in use and cached prefix blocks summed over every pool that reports
// here: the simulator's occupancy counters read these instead of walking the
// replicas on each clock advance.
struct BlockUsage {
  int64_t used_blocks = 0;
  int64_t cached_blocks = 0;
};

class BlockPool {
 public:
  BlockPool() = default;
  explicit BlockPool(int64_t total_blocks);

  int64_t total() const { return total_; }
  int64_t used() const { return private_used_ + live_entries_; }  // cached blocks count as used
  int64_t free() const { return total_ - used(); }
  int64_t evictable() const { return evictable_; }
  int64_t allocatable() const { return free() + evictable_; }
  int64_t peak_used() const { return peak_used_; }
  int64_t evictions() const { return evictions_; }
  int64_t cached_blocks() const { return live_entries_; }

  // Every later change of used() and cached_blocks() is also added to `usage`
  // (which must outlive the pool); the pool's present counts are added now.
  void report_to(BlockUsage* usage);

  // Private blocks: false (and nothing taken) when fewer than n can be made free.
  bool take(int64_t n);
  void give(int64_t n);

  // Prefix cache.
  int32_t lookup(uint64_t key) const;      // entry id or -1
  bool is_unreferenced(int32_t entry) const;
  void acquire(int32_t entry);             // a request starts using a cached block
  void release(int32_t entry);             // ... stops; at zero users it becomes evictable
  int32_t publish(uint64_t key);           // one private block becomes a cached entry used once; -1 if the key exists

 private:
  struct Entry {
    uint64_t key = 0;
    int32_t refs = 0;
    int32_t prev = -1, next = -1;  // LRU list of unreferenced entries
    bool live = false;
  };
  void lru_push_back(int32_t id);
  void lru_remove(int32_t id);
  void evict_one();
  void note_peak();
  void count(int64_t private_delta, int64_t entry_delta);

  int64_t total_ = 0;
  int64_t private_used_ = 0;
  int64_t live_entries_ = 0;
  int64_t evictable_ = 0;
  int64_t peak_used_ = 0;
  int64_t evictions_ = 0;
  std::vector<Entry> entries_;
  std::vector<int32_t> free_ids_;
  std::unordered_map<uint64_t, int32_t> index_;  // lookups only; never iterated
  int32_t lru_head_ = -1, lru_tail_ = -1;
  BlockUsage* usage_ = nullptr;
};

}  // namespace sightline::serve
