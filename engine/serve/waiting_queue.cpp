#include "serve/waiting_queue.hpp"

namespace sightline::serve {

int64_t WaitingQueue::insert(int64_t key, int32_t id, int32_t cls) {
  all_.emplace(key, id);
  if (by_class_on_) {
    class_of_.emplace(key, cls);
    by_class_[cls].emplace(key, id);
  }
  return key;
}

void WaitingQueue::erase(int64_t key) {
  all_.erase(key);
  if (!by_class_on_) return;
  auto c = class_of_.find(key);
  if (c == class_of_.end()) return;
  auto q = by_class_.find(c->second);
  if (q != by_class_.end()) {
    q->second.erase(key);
    if (q->second.empty()) by_class_.erase(q);
  }
  class_of_.erase(c);
}

const WaitingQueue::Entries* WaitingQueue::class_entries(int32_t cls) const {
  auto q = by_class_.find(cls);
  return q == by_class_.end() ? nullptr : &q->second;
}

}  // namespace sightline::serve
