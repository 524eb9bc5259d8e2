// ArrivalFeed: the requests that arrive when an earlier one ends (multi-turn
// sessions, closed-loop clients, capped clients) and the front end's
// tokenization.
#include "serve/arrival_feed.hpp"

#include <algorithm>
#include <utility>

namespace sightline::serve {

using namespace sim_event;

void ArrivalFeed::start(FirstArrivals first, bool tokenize) {
  order_ = std::move(first.order);
  next_client_request_ = first.next_client_request;
  client_cap_ = ClientCap(spec_.workload.arrival.max_concurrency, reqs_.size());
  tokenize_ = tokenize;
  enqueue_next();
}

TimeNs ArrivalFeed::tokenize_ns(int64_t prompt_tokens) const {
  // An offline batch is one call into the engine, not requests to a server:
  // MLPerf's LoadGen hands it token ids, and an offline generate call
  // tokenizes its prompts before the engine's first step.
  if (!tokenize_ || spec_.workload.arrival.process == ArrivalProcess::AllAtOnce) return 0;
  const double us = s_.cost_model.software_stack.tokenize_us_per_token;
  return us > 0 ? to_ns(us * 1e-6 * static_cast<double>(prompt_tokens), "cost_model.software_stack.tokenize_us_per_token",
                        "a prompt's tokenization")
                : 0;
}

void ArrivalFeed::next_turn(const SimRequest& q, TimeNs now) {
  const size_t next = static_cast<size_t>(&q - reqs_.data()) + 1;
  if (next >= reqs_.size() || reqs_[next].spec.session != q.spec.session) return;
  const SimRequest& n = reqs_[next];
  // A replayed trace keeps its recorded gap after the previous turn's
  // arrival, but a turn never comes before the previous one's answer.
  if (n.spec.think_from_arrival)
    arrive_at(next, std::max(now, clock_add(q.spec.arrival, n.spec.think, "/serving/workload/sessions/csv")), nullptr);
  else
    arrive_at(next, now, "/serving/workload/sessions/think_time_s");
}

void ArrivalFeed::arrive_at(size_t id, TimeNs at, const char* think_path) {
  RequestSpec& r = reqs_[id].spec;
  r.arrival = think_path ? clock_add(at, r.think, think_path) : at;
  queue_.push(r.arrival, kPriority[kArrival], kArrival, static_cast<int64_t>(id));
}

void ArrivalFeed::client_freed(TimeNs now) {
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
    arrive_at(static_cast<size_t>(waited), now, nullptr);
  if (next_client_request_ == 0 || next_client_request_ >= reqs_.size()) return;
  arrive_at(next_client_request_++, now, "/serving/workload/arrival/think_time_s");
}

}  // namespace sightline::serve
