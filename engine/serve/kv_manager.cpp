#include "serve/kv_manager.hpp"

#include "core/error.hpp"

namespace sightline::serve {

namespace {
[[noreturn]] void invariant(const char* what) {
  fail(error_code::kInternal, "", std::string("KV block manager invariant violated: ") + what);
}
}  // namespace

BlockPool::BlockPool(int64_t total_blocks) : total_(total_blocks) {}

void BlockPool::report_to(BlockUsage* usage) {
  usage_ = usage;
  if (usage_) {
    usage_->used_blocks += used();
    usage_->cached_blocks += live_entries_;
  }
}

void BlockPool::count(int64_t private_delta, int64_t entry_delta) {
  private_used_ += private_delta;
  live_entries_ += entry_delta;
  if (usage_) {
    usage_->used_blocks += private_delta + entry_delta;
    usage_->cached_blocks += entry_delta;
  }
}

void BlockPool::note_peak() {
  const int64_t u = used();
  if (u > total_) invariant("more blocks in use than exist");
  if (u > peak_used_) peak_used_ = u;
}

bool BlockPool::take(int64_t n) {
  if (n <= 0) return true;
  if (allocatable() < n) return false;
  while (free() < n) evict_one();
  count(n, 0);
  note_peak();
  return true;
}

void BlockPool::give(int64_t n) {
  if (n < 0 || n > private_used_) invariant("releasing blocks that were not allocated");
  count(-n, 0);
}

int32_t BlockPool::lookup(uint64_t key) const {
  auto it = index_.find(key);
  return it == index_.end() ? -1 : it->second;
}

bool BlockPool::is_unreferenced(int32_t entry) const { return entries_[static_cast<size_t>(entry)].refs == 0; }

void BlockPool::acquire(int32_t id) {
  Entry& e = entries_[static_cast<size_t>(id)];
  if (!e.live) invariant("acquiring an evicted block");
  if (e.refs == 0) lru_remove(id);
  ++e.refs;
}

void BlockPool::release(int32_t id) {
  Entry& e = entries_[static_cast<size_t>(id)];
  if (!e.live || e.refs <= 0) invariant("releasing an unreferenced cached block");
  if (--e.refs == 0) lru_push_back(id);
}

int32_t BlockPool::publish(uint64_t key) {
  if (index_.count(key)) return -1;
  if (private_used_ <= 0) invariant("publishing without a private block");
  int32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<int32_t>(entries_.size());
    entries_.emplace_back();
  }
  Entry& e = entries_[static_cast<size_t>(id)];
  e.key = key;
  e.refs = 1;
  e.prev = e.next = -1;
  e.live = true;
  index_.emplace(key, id);
  count(-1, 1);
  return id;
}

void BlockPool::lru_push_back(int32_t id) {
  Entry& e = entries_[static_cast<size_t>(id)];
  e.prev = lru_tail_;
  e.next = -1;
  if (lru_tail_ >= 0) entries_[static_cast<size_t>(lru_tail_)].next = id;
  else lru_head_ = id;
  lru_tail_ = id;
  ++evictable_;
}

void BlockPool::lru_remove(int32_t id) {
  Entry& e = entries_[static_cast<size_t>(id)];
  if (e.prev >= 0) entries_[static_cast<size_t>(e.prev)].next = e.next;
  else lru_head_ = e.next;
  if (e.next >= 0) entries_[static_cast<size_t>(e.next)].prev = e.prev;
  else lru_tail_ = e.prev;
  e.prev = e.next = -1;
  --evictable_;
}

void BlockPool::evict_one() {
  if (lru_head_ < 0) invariant("nothing to evict");
  const int32_t id = lru_head_;
  lru_remove(id);
  Entry& e = entries_[static_cast<size_t>(id)];
  index_.erase(e.key);
  e.live = false;
  count(0, -1);
  ++evictions_;
  free_ids_.push_back(id);
}

}  // namespace sightline::serve
