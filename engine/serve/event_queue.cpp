#include "serve/event_queue.hpp"

#include <algorithm>

namespace sightline::serve {

namespace {
// Heap order: the earliest event at the front.
bool later(const Event& x, const Event& y) { return event_before(y, x); }
}  // namespace

void EventQueue::push(TimeNs time, int priority, int kind, int64_t a, int64_t b) {
  Event e;
  e.time = time;
  e.priority = priority;
  e.seq = next_seq_++;
  e.kind = kind;
  e.a = a;
  e.b = b;
  heap_.push_back(e);
  std::push_heap(heap_.begin(), heap_.end(), later);
}

Event EventQueue::pop() {
  std::pop_heap(heap_.begin(), heap_.end(), later);
  Event e = heap_.back();
  heap_.pop_back();
  return e;
}

}  // namespace sightline::serve
