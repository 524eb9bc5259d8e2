#pragma once
// A generic discrete-event queue with no LLM knowledge. Time is an int64
// nanosecond count; events are ordered by (time, priority, insertion sequence)
// in one comparator, `event_before`, so ties have exactly one rule.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace sightline::serve {

using TimeNs = int64_t;

// The clock's range: 2^62 ns (about 146 years), half of int64, so that a time
// plus one duration still fits.
inline constexpr TimeNs kMaxClockNs = TimeNs{1} << 62;

// Cost models compute in double seconds; the clock rounds once, here. A
// duration it cannot represent (not finite, negative, past kMaxClockNs) is a
// located error naming the input it came from (`path`, `what`): no
// saturation, no wrap (a float-to-int64 cast out of range is undefined).
inline TimeNs to_ns(double seconds, const char* path = "", const char* what = "a simulated duration") {
  const double ns = std::floor(seconds * 1e9 + 0.5);
  if (!(ns >= 0 && ns <= static_cast<double>(kMaxClockNs)))
    throw SightlineError(error_code::kRange, path,
                         std::string(what) + " of " + std::to_string(seconds) +
                             " s is outside the simulation clock's range (0 to about 146 years)");
  return static_cast<TimeNs>(ns);
}
// now + duration, refused past the clock's range (at `path`).
inline TimeNs clock_add(TimeNs now, TimeNs duration, const char* path) {
  if (duration > kMaxClockNs - now)
    throw SightlineError(error_code::kRange, path, "the simulated time passes about 146 years, the clock's range");
  return now + duration;
}
inline double to_s(TimeNs ns) { return static_cast<double>(ns) * 1e-9; }

struct Event {
  TimeNs time = 0;
  int priority = 0;   // smaller runs first at equal time
  uint64_t seq = 0;   // insertion order, assigned by the queue
  int kind = 0;       // meaning chosen by the user of the queue
  int64_t a = 0;      // payload
  int64_t b = 0;
};

// True when `x` must be handled before `y`.
inline bool event_before(const Event& x, const Event& y) {
  if (x.time != y.time) return x.time < y.time;
  if (x.priority != y.priority) return x.priority < y.priority;
  return x.seq < y.seq;
}

// push and pop are inline: a serving run makes two of each per step (the
// step's end, then its replica's scheduling), about 10 million of each at a
// million requests, on a heap of a few events; out of line they were 3% of
// such a run's samples.
class EventQueue {
 public:
  __attribute__((always_inline)) void push(TimeNs time, int priority, int kind, int64_t a = 0, int64_t b = 0) {
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
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  __attribute__((always_inline)) Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const Event e = heap_.back();
    heap_.pop_back();
    return e;
  }
  uint64_t pushed() const { return next_seq_; }

 private:
  // Heap order: the earliest event at the front.
  static bool later(const Event& x, const Event& y) { return event_before(y, x); }
  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace sightline::serve
