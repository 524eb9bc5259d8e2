#pragma once
// The waiting queue of one model engine: prompts in the order the scheduler
// takes them (arrivals at the back, recompute preemptions at the front), with
// removal from anywhere and, when requests belong to classes (LoRA adapters),
// each class's own queue in the same order.
//
// Why an index and not a deque: under multi-LoRA a prompt whose adapter cannot
// join the batch is passed over, so the prompts a step admits can lie anywhere
// in the queue. Walking the queue to find them made a step cost O(queue
// length) (200,000 queued LoRA prompts ran for 540 s); with the per-class
// queues a step looks only at the classes that can join (serve/batch_scheduler).
// Every operation is O(log n).
#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>

namespace sightline::serve {

class WaitingQueue {
 public:
  using Entries = std::map<int64_t, int32_t>;  // order key -> request id

  // Keep a queue per class (call before the first push).
  void index_by_class(bool on) { by_class_on_ = on; }

  // Return the entry's key: pass it to erase().
  int64_t push_back(int32_t id, int32_t cls) { return insert(back_++, id, cls); }
  int64_t push_front(int32_t id, int32_t cls) { return insert(front_--, id, cls); }
  void erase(int64_t key);
  void pop_front() { erase(all_.begin()->first); }

  bool empty() const { return all_.empty(); }
  size_t size() const { return all_.size(); }
  int32_t front() const { return all_.begin()->second; }
  const Entries& entries() const { return all_; }
  // One class's entries (null when it has none, or classes are not indexed).
  const Entries* class_entries(int32_t cls) const;

 private:
  int64_t insert(int64_t key, int32_t id, int32_t cls);

  Entries all_;
  std::unordered_map<int64_t, int32_t> class_of_;  // key -> class, when indexed
  std::unordered_map<int32_t, Entries> by_class_;  // only classes with queued requests
  int64_t back_ = 0, front_ = -1;
  bool by_class_on_ = false;
};

}  // namespace sightline::serve
