#include "serve/kv_tiers.hpp"

namespace sightline::serve {

bool KeyLru::touch(uint64_t key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  order_.splice(order_.begin(), order_, it->second);
  return true;
}

bool KeyLru::insert(uint64_t key, uint64_t& evicted) {
  if (touch(key)) return false;
  if (capacity_ <= 0) {
    evicted = key;
    return true;
  }
  bool out = false;
  if (size() >= capacity_) {
    evicted = order_.back();
    index_.erase(evicted);
    order_.pop_back();
    out = true;
  }
  order_.push_front(key);
  index_.emplace(key, order_.begin());
  return out;
}

void KvTierChain::add_own(int64_t capacity_blocks, TierCounters* counters, double bytes_per_s, double latency_s) {
  own_.push_back(std::make_unique<KeyLru>(capacity_blocks));
  levels_.push_back(Level{own_.back().get(), counters, bytes_per_s, latency_s});
}

void KvTierChain::demote(uint64_t key) {
  for (Level& l : levels_) {
    uint64_t evicted = 0;
    const bool held = l.lru->touch(key);
    if (held) return;  // already written here (a copy kept after a reload)
    ++l.counters->stored_blocks;
    if (!l.lru->insert(key, evicted)) return;
    ++l.counters->dropped_blocks;
    key = evicted;
  }
}

int KvTierChain::find(uint64_t key) {
  for (size_t i = 0; i < levels_.size(); ++i)
    if (levels_[i].lru->touch(key)) return static_cast<int>(i);
  return -1;
}

int KvTierChain::find_const(uint64_t key) const {
  for (size_t i = 0; i < levels_.size(); ++i)
    if (levels_[i].lru->contains(key)) return static_cast<int>(i);
  return -1;
}

}  // namespace sightline::serve
