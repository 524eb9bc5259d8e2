// The simulator's multi-turn sessions and closed-loop clients: requests that
// arrive when an earlier one ends.
#include <algorithm>

#include "mem/inference_memory.hpp"
#include "serve/simulation.hpp"

namespace sightline::serve {

using namespace sim_event;

void Simulation::session_turn_done(Engine& e, Req& q) {
  // The output's full blocks join the prefix cache too: the next turn re-sends them.
  kv_.publish_prefix(e.kv, q.kv, q.spec, q.computed);
  const size_t next = static_cast<size_t>(&q - reqs_.data()) + 1;
  if (next >= reqs_.size() || reqs_[next].spec.session != q.spec.session) return;
  const Req& n = reqs_[next];
  // A replayed trace keeps its recorded gap after the previous turn's
  // arrival, but a turn never comes before the previous one's answer.
  if (n.spec.think_from_arrival)
    arrive_at(next, std::max(run_.now, clock_add(q.spec.arrival, n.spec.think, "/serving/workload/sessions/csv")), nullptr);
  else
    arrive_at(next, run_.now, "/serving/workload/sessions/think_time_s");
}

void Simulation::arrive_at(size_t id, TimeNs at, const char* think_path) {
  RequestSpec& r = reqs_[id].spec;
  r.arrival = think_path ? clock_add(at, r.think, think_path) : at;
  queue_.push(r.arrival, kPriority[kArrival], kArrival, static_cast<int64_t>(id));
}

void Simulation::client_freed() {
  // vLLM's benchmark_serving.py sends each request inside
  // `async with semaphore:` (limited_request_func, vllm-project/vllm@0049e29c,
  // benchmarks/benchmark_serving.py), and its request functions start the
  // TTFT / E2E clock inside that block (`st = time.perf_counter()` just before
  // the POST, benchmarks/backend_request_func.py @01184130): a request that
  // waited for a free slot is timed from its send, so it arrives now.
  // asyncio.Semaphore wakes its waiters in the order they came (FIFO).
  // SGLang's bench_serving wraps its request function the same way (its
  // comment cites vllm-project/vllm#9390).
  if (const int32_t waited = client_cap_.on_request_end(); waited >= 0)
    arrive_at(static_cast<size_t>(waited), run_.now, nullptr);
  if (next_client_request_ == 0 || next_client_request_ >= reqs_.size()) return;
  arrive_at(next_client_request_++, run_.now, "/serving/workload/arrival/think_time_s");
}

void Simulation::end_session(const Req& q) {
  for (size_t i = static_cast<size_t>(&q - reqs_.data()) + 1; i < reqs_.size(); ++i) {
    Req& n = reqs_[i];
    if (n.spec.session != q.spec.session) break;
    n.state = State::Dropped;
    n.drop_reason = DropReason::SessionDropped;
    ++run_.dropped;
    --run_.arrivals_pending;
  }
}


}  // namespace sightline::serve
