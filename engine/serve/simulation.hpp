#pragma once
// The discrete-event serving simulator: requests arrive (workload), a router
// sends them to replicas (cluster), each replica's batch scheduler forms the
// next step from its queue under KV-block, sequence and token limits, and the
// step is priced by the cost model for its exact mixed batch. Sliced: run()
// processes a bounded number of events per call.
// Its parts, each behind its own interface: the Router (router.hpp), the
// BatchScheduler (batch_scheduler.hpp), the KvManager (kv_manager.hpp), the
// StepPricer (step_pricer.hpp: a formed step's seconds), and the recorders
// fed by hooks where requests join, leave or compute and where steps start:
// the MetricsRecorder (metrics_recorder.hpp: occupancy), StepStats
// (step_stats.hpp: step counts, utilization, token gaps, transfers) and
// SimTrace (sim_trace.hpp: time series and trace). The Simulation owns the
// event loop and the requests' lifecycle across replicas (arrival,
// preemption, handoff, KV transfer, completion); sim_setup.cpp builds its
// cluster, sim_results.cpp and sim_details.cpp write its results.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "perf/cost_setup.hpp"
#include "perf/power.hpp"
#include "scenario/scenario.hpp"
#include "serve/event_queue.hpp"
#include "serve/batch_scheduler.hpp"
#include "serve/client_cap.hpp"
#include "serve/kv_manager.hpp"
#include "serve/limit_facts.hpp"
#include "scenario/memory_plan.hpp"
#include "serve/metrics_recorder.hpp"
#include "serve/request_outcome.hpp"
#include "serve/rng.hpp"
#include "serve/router.hpp"
#include "serve/serving_metrics.hpp"
#include "serve/sim_details.hpp"
#include "serve/sim_state.hpp"
#include "serve/sim_trace.hpp"
#include "serve/stats.hpp"
#include "serve/step_pricer.hpp"
#include "serve/step_stats.hpp"
#include "serve/token_ledger.hpp"
#include "serve/workload.hpp"

namespace sightline::serve {

// Whether one request met every bound of the SLO named in `metrics`
// (SloMetric bits; an unfinished one did not). For ITL a request meets it when
// every one of its gaps does. The one per-request SLO check, used by the
// run's goodput (all bounds) and the steady-state verdict (per condition).
bool meets_slo(const RequestOutcome& q, const SloSpec& slo, unsigned metrics);
bool meets_slo(const RequestOutcome& q, const SloSpec& slo);

// The memory plan of the scenario's pool `pool` (its KV blocks per engine).
ReplicaMemoryPlan pool_memory_plan(const Scenario& s, size_t pool);
// The limits a simulation of `s` runs under, without building it: max_num_seqs
// and every pool's engines' KV blocks, in the order the simulation builds them.
RunLimits run_limits(const Scenario& s);

class Simulation final : private SchedulerHost, private ReplicaLoads {
 public:
  // `detailed`: keep per-request records, the time series and the trace
  // (search runs turn it off).
  Simulation(const Scenario& scenario, const WorkloadOverride& override, bool detailed);
  ~Simulation() override;
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  bool run(int64_t max_events);  // true once finished
  bool finished() const { return finished_; }
  double progress() const;
  int64_t events_processed() const { return events_; }
  TimeNs sim_time() const { return now_; }  // the simulated clock (the work estimate's probe reads it)
  // A request's record, in arrival order (a multi-turn probe reads its sessions' turns).
  const SimRequest& record(size_t i) const { return reqs_[i]; }
  // Work units (the run budget's measure, api/budgeted_job; docs/limits.md
  // "What a unit costs"): an event's CPU grows with the sequences its step
  // walks and prices, and a prompt's arrival with the KV blocks its context
  // is looked up, published and offloaded in. So a unit is one event, or
  // kSequencesPerUnit sequences stepped, or kPromptTokensPerUnit prompt
  // tokens arrived (a multi-turn turn's whole context). Chosen on the CPU of
  // 16 central runs of shipped presets, which spread 58x per event and 8x per
  // unit; at the default budget's size the dearest unit measured cost 0.65 us.
  // A speculative step also prices the draft's k passes: its simulation's
  // units count k + 1 times.
  static constexpr int64_t kSequencesPerUnit = 16;
  static constexpr int64_t kPromptTokensPerUnit = 32;
  int64_t units_done() const {
    return (events_ + sequence_steps_ / kSequencesPerUnit + prompt_tokens_arrived_ / kPromptTokensPerUnit) *
           (1 + static_cast<int64_t>(spec_k_));
  }
  // The arrivals' share of units_done: an event and its prompt's units each
  // (the work estimate's probe counts them apart, per request).
  int64_t arrival_units() const {
    return (arrived() + prompt_tokens_arrived_ / kPromptTokensPerUnit) * (1 + static_cast<int64_t>(spec_k_));
  }
  // Runs events until `max_units` more units are done (at least one event)
  // or the run ends; true once finished. It stops at the first event that
  // reaches them, so a run sliced by units stops where a run in one slice
  // does (the budget's stop is the same on the page and the CLI).
  bool run_units(int64_t max_units);
  // Replica loads the routers read, in all: O(events), not O(events x replicas)
  // (a complexity property the tests hold).
  int64_t router_load_reads() const { return router_load_reads_; }
  int64_t scheduler_queue_reads() const;  // the batch scheduler's queue_entries_read()
  int64_t num_requests() const { return static_cast<int64_t>(reqs_.size()); }
  int64_t arrived() const { return num_requests() - arrivals_pending_; }  // requests whose arrival was handled
  // Requests that found the client's max_concurrency reached and waited to be sent.
  int64_t requests_waited_at_client() const { return client_cap_.requests_that_waited(); }
  int64_t done() const { return completed_ + dropped_; }                    // requests completed or dropped
  int64_t waiting() const { return rec_.waiting(); }                        // requests queued (waiting, swapped, incoming)

  ServingMetrics serving_metrics() const;  // the run's metrics, typed
  json metrics() const;                    // the "metrics" object: serving_metrics() written
  SimDetails details() const;  // deployment, memory, capacity, tokens, warnings, limits (+ records when detailed)
  bool all_completed() const;
  // Every request's outcome in arrival order (steady-state analysis of capacity searches).
  std::vector<RequestOutcome> outcomes() const;
  // The same, read from the records where they are (no copy); valid while
  // the simulation lives and runs no further.
  OutcomeView outcome_view() const { return OutcomeView(reqs_.data(), reqs_.size()); }
  // What the run's batch limit and KV pools decided (serve/limit_facts.hpp).
  LimitFacts limit_facts() const;

 private:
  // serving_metrics()'s steps.
  void fill_rates(ServingMetrics& m, double duration, int64_t in_tokens, int64_t out_tokens, int64_t good) const;
  void fill_cache(ServingMetrics& m, double span) const;
  void fill_features(ServingMetrics& m) const;
  static std::vector<int32_t> first_turns(const std::vector<SimRequest>& requests);
  void fill_gpu_energy_cost(ServingMetrics& m, double duration, int64_t out_tokens, int64_t in_tokens) const;
  // details()'s steps (sim_details.cpp).
  json deployment_json() const;
  ServingCapacity replica_capacity() const;
  json token_accounting() const;
  std::vector<std::string> run_warnings() const;
  json request_records() const;

  using State = RequestState;
  using Req = SimRequest;
  using Item = StepItem;
  using Batch = StepBatch;
  using Engine = ModelEngine;

  // Construction (sim_setup.cpp): one pool's replicas and their engines.
  void add_pool(size_t pool_index);
  void load_workload(const WorkloadOverride& override);

  // events
  void on_arrival(int32_t id);
  void on_step_end(int r, int slot);
  int on_transfer_done(int32_t id);  // returns the replica the KV came from
  void request_schedule(Replica& r, TimeNs t);
  void try_start(Replica& r);
  // Forms `b` on the first of r's engines, round robin from r.next_engine,
  // whose scheduler has work (and moves next_engine past it); null when none has.
  Engine* form_next_batch(Replica& r, Batch& b);
  // Wide expert parallelism: the attention data-parallel ranks of a group
  // meet at every MoE layer's dispatch and combine, so they step in lockstep.
  // A group step starts when every rank is free, each rank forms its own
  // batch, the experts serve the tokens of all of them, and the step lasts as
  // long as its slowest rank (a rank with a prompt chunk holds up the others).
  struct DpGroup {
    std::vector<int> members;  // replica indices
    int inflight = 0;          // members whose batch of the current group step has not ended
  };
  void start_group_step(DpGroup& g);

  // SchedulerHost: the lifecycle services the batch scheduler calls
  TimeNs now() const override { return now_; }
  bool arrivals_pending() const override { return arrivals_pending_ > 0; }
  void wake_at(Replica& r, TimeNs t) override { request_schedule(r, t); }
  void join_running(Engine& e, Req& q) override;
  void preempt(Engine& e, Req& q, Batch& b) override;
  TokenLedger& tokens() override { return tokens_; }
  void finish(Replica& r, Engine& e, Req& q) override;
  void handoff(Replica& r, Engine& e, Req& q) override;
  void admit_transfers(Replica& r, Engine& e) override;
  bool adapter_fits(const Engine& e, const Req& q) const override;
  void attach_adapter(Engine& e, const Req& q) override;
  double acceptance_draw() override { return accept_rng_.uniform01(); }

  // ReplicaLoads: what the routers read
  int64_t outstanding(int replica) const override {
    ++router_load_reads_;
    return replicas_[static_cast<size_t>(replica)].outstanding;
  }
  double kv_load(int replica, int model) const override;
  int64_t cached_prefix_tokens(int replica, const RequestSpec& r) const override;
  double kv_route_cost(int replica, const RequestSpec& r) const override;

  // Sessions, closed-loop clients and offload tiers (sim_sessions.cpp).
  // A request whose arrival waits on an earlier one's end (a session's next
  // turn, a closed-loop client's next request) arrives at `at` plus its think
  // time, read from `think_path` for messages (nullptr: exactly at `at`).
  void arrive_at(size_t id, TimeNs at, const char* think_path);
  // A session turn finished: its whole context joins the prefix cache, and
  // the session's next turn arrives after its think time.
  void session_turn_done(Engine& e, Req& q);
  // A closed-loop client's request ended (done or dropped): the client sends
  // the next request not yet sent, after its think time. Under a capped
  // rate's client (client_cap_), the request waiting longest is sent now.
  void client_freed();
  // The requests sent at the start: one per client (arrival_order_).
  static std::vector<int32_t> first_requests_of_clients(size_t requests, int64_t clients);
  // A turn was dropped: the session's later turns never come.
  void end_session(const Req& q);
  void fill_sessions(ServingMetrics& m) const;
  void fill_offload(ServingMetrics& m) const;
  // kv_aware: each cost entry's prefill time per token (the weight of a
  // reload against recomputing), priced once at the start.
  std::vector<double> prefill_s_per_token_;

  void leave_running(Engine& e, Req& q);
  void detach_adapter(Engine& e, const Req& q);
  int64_t private_kv_tokens(const Req& q) const { return tokens_.private_kv_tokens(q); }

  // Starting a step: priced on its own by the pricer (the draft, swaps,
  // adapter loads and scheduler CPU included), then the batch started on the
  // clock for `dur` (its own time, or a lockstep group's longest) and told to
  // the recorders.
  double start_batch(Replica& r, Engine& e, Batch& b, double extra_s);
  TimeNs step_ns(double t) const;    // a step's priced seconds on the clock
  void commit_batch(Replica& r, Batch& b, double t, const PeakWork& work, TimeNs dur);

  void drop(Req& q, DropReason reason);

  const Scenario& s_;
  const SimulationSpec& spec_;
  bool detailed_ = true;
  int64_t block_size_ = 16;
  int spec_k_ = 0;

  std::vector<Replica> replicas_;
  std::vector<int> entry_replicas_;   // where arrivals go
  std::vector<int> decode_replicas_;  // disaggregated decode pool
  std::vector<DpGroup> dp_groups_;    // attention data-parallel groups in lockstep
  std::vector<ReplicaMemoryPlan> pool_memory_;
  std::vector<Req> reqs_;
  std::vector<HandoffRecord> handoffs_;  // indexed by SimRequest::handoff
  std::vector<int32_t> free_handoffs_;   // records no request holds, for reuse
  GeneratedWorkload workload_info_;  // its requests are in reqs_ (generate_workload_into)
  EventQueue queue_;
  // Arrivals enter the queue one at a time, in (arrival, index) order: the
  // order the queue pops them in when all are pushed up front (same time and
  // priority: insertion order, i.e. index). The heap then holds the events in
  // flight, not a million future arrivals: smaller, and each push and pop
  // costs log(in flight). Empty when the requests already come in that order.
  std::vector<int32_t> arrival_order_;
  size_t next_arrival_ = 0;  // position in that order of the next arrival to enqueue
  // closed_loop: the next request no client has sent yet (0: not a closed loop).
  size_t next_client_request_ = 0;
  // A rate arrival's client-side max_concurrency (inactive without one).
  ClientCap client_cap_;
  void enqueue_next_arrival();
  // The front end's time to tokenize a prompt of `prompt_tokens` (the stack's
  // tokenize_us_per_token; 0 when the engine is handed token ids, and for an
  // offline batch, all_at_once, or a run whose override says not to). An
  // arrival event whose payload b is kTokenized is the request reaching the
  // scheduler once tokenized.
  static constexpr int64_t kTokenized = 1;
  TimeNs tokenize_ns(int64_t prompt_tokens) const;
  bool tokenize_ = true;  // WorkloadOverride::tokenize
  Rng accept_rng_;

  // the parts
  StepPricer pricer_;
  MetricsRecorder rec_;  // live occupancy counters, their time integrals, token counts
  StepStats stats_;      // step counts, achieved utilization, token gaps, KV transfers
  TokenLedger tokens_;   // per token: the recorder's KV tokens, the request's token times, stats_'s gaps
  SimTrace trace_;       // detailed runs: time series and trace
  KvManager kv_;
  std::unique_ptr<Router> entry_router_;
  std::unique_ptr<Router> decode_router_;
  mutable int64_t router_load_reads_ = 0;
  mutable bool capacity_read_ = false;  // a router read the KV pools' size (limit_facts())
  void touched(int replica);  // its loads may have changed: tell the routers
  std::unique_ptr<BatchScheduler> scheduler_;

  TimeNs now_ = 0;
  int64_t events_ = 0;
  int64_t sequence_steps_ = 0;         // the sequences of every step started (units_done)
  int64_t prompt_tokens_arrived_ = 0;  // the prompts of every arrival (units_done)
  bool finished_ = false;
  bool stopped_ = false;  // at spec_.stop_at_s, with requests left in flight
  std::string limit_hit_;
  int64_t arrivals_pending_ = 0;
  int64_t completed_ = 0, dropped_ = 0;
  int64_t kv_total_ = 0;

  // completed requests' token totals
  int64_t tok_prompt_ = 0, tok_output_ = 0;
  TimeNs first_arrival_ = 0, last_event_ = 0;
  TimeNs stop_ns_ = 0;  // spec_.stop_at_s on the clock; 0: none
};

}  // namespace sightline::serve
