#pragma once
// A benchmark client's cap on requests in flight over an open-loop rate
// (serving.workload.arrival.max_concurrency): what vLLM's benchmark_serving.py
// / `vllm bench serve` and SGLang's bench_serving do with --request-rate and
// --max-concurrency. Arrivals keep the times the rate drew; one that finds
// the cap reached waits at the client, first come first served, and is sent
// when a request in flight ends. The bookkeeping only: the simulator sends.
#include <cstdint>
#include <deque>
#include <vector>

namespace sightline::serve {

class ClientCap {
 public:
  // `max_in_flight` 0: no cap (every call below is then a no-op).
  explicit ClientCap(int64_t max_in_flight = 0, size_t requests = 0);

  bool active() const { return max_in_flight_ > 0; }
  // Request `id`'s drawn arrival time came: true when it is sent now, false
  // when it waits for a request in flight to end.
  bool on_arrival_time(int32_t id);
  // A request the client sent ended (completed or refused): the waiting
  // request sent in its place, or -1 when none waits.
  int32_t on_request_end();
  // Whether `id` is a request that waited and has just been sent (its
  // arrival event is the send, not its drawn arrival).
  bool sent_after_waiting(int32_t id) const { return active() && waited_[static_cast<size_t>(id)] != 0; }
  int64_t requests_that_waited() const { return requests_that_waited_; }
  int64_t in_flight() const { return in_flight_; }

 private:
  int64_t max_in_flight_ = 0;
  int64_t in_flight_ = 0;
  int64_t requests_that_waited_ = 0;
  std::deque<int32_t> waiting_;
  std::vector<char> waited_;  // per request: it waited at the client (sized only with a cap)
};

}  // namespace sightline::serve
