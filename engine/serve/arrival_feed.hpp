#pragma once
// When the simulator's requests arrive. Those that arrive on their own enter
// the event queue one at a time, in (arrival, index) order: the order the
// queue pops them in when all are pushed up front (same time and priority:
// insertion order, i.e. index). The heap then holds the events in flight, not
// a million future arrivals: smaller, and each push and pop costs log(in
// flight). The others arrive when an earlier one ends: a session's next turn,
// a closed-loop client's next request, a request that waited at a capped
// client (client_cap.hpp). An arrival reaches the scheduler once the server's
// front end has tokenized its prompt.
#include <cstdint>
#include <vector>

#include "scenario/scenario.hpp"
#include "serve/client_cap.hpp"
#include "serve/cluster_builder.hpp"
#include "serve/event_queue.hpp"
#include "serve/sim_state.hpp"

namespace sightline::serve {

class ArrivalFeed {
 public:
  ArrivalFeed(const Scenario& s, std::vector<SimRequest>& reqs, EventQueue& queue)
      : s_(s), spec_(*s.serving->simulation), reqs_(reqs), queue_(queue) {}
  // Starts the feed: `first` arrive on their own (ClusterBuilder::load_workload);
  // `tokenize`: WorkloadOverride::tokenize.
  void start(FirstArrivals first, bool tokenize);

  // An arrival event: true when its request reaches the scheduler now; false
  // when it waits at its client or in the front end (a later event brings it).
  bool reaches_scheduler(const Event& ev, TimeNs now) {
    const int32_t id = static_cast<int32_t>(ev.a);
    if (ev.b == kTokenized) return true;
    // A request that waited at a capped client arrives again when it is
    // sent; its drawn arrival already enqueued the next one.
    const bool resent = client_cap_.sent_after_waiting(id);
    if (!resent) enqueue_next();
    if (!resent && !client_cap_.on_arrival_time(id)) return false;  // waits at the client
    // The server's front end tokenizes the prompt before the scheduler
    // sees the request; it reaches the queue once that is done.
    const TimeNs tokenize = tokenize_ns(reqs_[static_cast<size_t>(id)].spec.prompt);
    if (tokenize <= 0) return true;
    queue_.push(clock_add(now, tokenize, "cost_model.software_stack.tokenize_us_per_token"),
                sim_event::kPriority[sim_event::kArrival], sim_event::kArrival, id, kTokenized);
    return false;
  }
  // A session turn finished at `now`: the session's next turn arrives after its think time.
  void next_turn(const SimRequest& q, TimeNs now);
  // A request ended at `now` (done or dropped): a closed-loop client sends the
  // next request not yet sent, after its think time; under a capped rate's
  // client, the request waiting longest is sent now.
  void client_freed(TimeNs now);
  // Requests that found the client's max_concurrency reached and waited to be sent.
  int64_t requests_waited_at_client() const { return client_cap_.requests_that_waited(); }

 private:
  // An arrival event whose payload b is kTokenized is the request reaching
  // the scheduler once tokenized.
  static constexpr int64_t kTokenized = 1;
  void enqueue_next() {
    if (next_ >= (order_.empty() ? reqs_.size() : order_.size())) return;
    const size_t id = order_.empty() ? next_ : static_cast<size_t>(order_[next_]);
    ++next_;
    queue_.push(reqs_[id].spec.arrival, sim_event::kPriority[sim_event::kArrival], sim_event::kArrival,
                static_cast<int64_t>(id));
  }
  // A request whose arrival waits on an earlier one's end arrives at `at`
  // plus its think time, read from `think_path` for messages (nullptr:
  // exactly at `at`). Its record's arrival is set to that time.
  void arrive_at(size_t id, TimeNs at, const char* think_path);
  // The front end's time to tokenize a prompt of `prompt_tokens` (the stack's
  // tokenize_us_per_token; 0 when the engine is handed token ids, and for an
  // offline batch, all_at_once, or a run whose override says not to).
  TimeNs tokenize_ns(int64_t prompt_tokens) const;

  const Scenario& s_;
  const SimulationSpec& spec_;
  std::vector<SimRequest>& reqs_;
  EventQueue& queue_;
  std::vector<int32_t> order_;  // the first arrivals' order; empty when it is index order
  size_t next_ = 0;             // position in that order of the next arrival to enqueue
  // closed_loop: the next request no client has sent yet (0: not a closed loop).
  size_t next_client_request_ = 0;
  ClientCap client_cap_;  // a rate arrival's client-side max_concurrency (inactive without one)
  bool tokenize_ = true;
};

}  // namespace sightline::serve
