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
// preemption, handoff, KV transfer, completion); the ClusterBuilder
// (cluster_builder.hpp) builds its cluster, the ArrivalFeed (arrival_feed.hpp)
// says when its requests arrive, RouterLoads (router_loads.hpp) is what its
// routers read, and SimReport (sim_report.hpp) writes its results.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "perf/cost_setup.hpp"
#include "perf/power.hpp"
#include "scenario/scenario.hpp"
#include "serve/event_queue.hpp"
#include "serve/batch_scheduler.hpp"
#include "serve/arrival_feed.hpp"
#include "serve/cluster_builder.hpp"
#include "serve/kv_handoffs.hpp"
#include "serve/kv_manager.hpp"
#include "serve/limit_facts.hpp"
#include "scenario/memory_plan.hpp"
#include "serve/metrics_recorder.hpp"
#include "serve/request_outcome.hpp"
#include "serve/rng.hpp"
#include "serve/router.hpp"
#include "serve/router_loads.hpp"
#include "serve/serving_metrics.hpp"
#include "serve/sim_details.hpp"
#include "serve/sim_report.hpp"
#include "serve/sim_state.hpp"
#include "serve/sim_trace.hpp"
#include "serve/stats.hpp"
#include "serve/step_pricer.hpp"
#include "serve/step_stats.hpp"
#include "serve/token_ledger.hpp"
#include "serve/workload.hpp"

namespace sightline::serve {

class Simulation final : private SchedulerHost {
 public:
  // `detailed`: keep per-request records, the time series and the trace
  // (search runs turn it off).
  Simulation(const Scenario& scenario, const WorkloadOverride& override, bool detailed);
  ~Simulation() override;
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  bool run(int64_t max_events);  // true once finished
  bool finished() const { return run_.finished; }
  double progress() const;
  int64_t events_processed() const { return run_.events; }
  TimeNs sim_time() const { return run_.now; }  // the simulated clock (the work estimate's probe reads it)
  // A request's record, in arrival order (a multi-turn probe reads its sessions' turns).
  const SimRequest& record(size_t i) const { return reqs_[i]; }
  // Work units (RunProgress::units_done: the run budget's measure), and the arrivals' share of them.
  int64_t units_done() const { return run_.units_done(spec_k_); }
  int64_t arrival_units() const { return run_.arrival_units(arrived(), spec_k_); }
  // Runs events until `max_units` more units are done (at least one event)
  // or the run ends; true once finished. It stops at the first event that
  // reaches them, so a run sliced by units stops where a run in one slice
  // does (the budget's stop is the same on the page and the CLI).
  bool run_units(int64_t max_units);
  // Replica loads the routers read, in all: O(events), not O(events x replicas)
  // (a complexity property the tests hold).
  int64_t router_load_reads() const { return loads_.reads(); }
  int64_t scheduler_queue_reads() const { return scheduler_->queue_entries_read(); }
  int64_t num_requests() const { return static_cast<int64_t>(reqs_.size()); }
  int64_t arrived() const { return num_requests() - run_.arrivals_pending; }  // requests whose arrival was handled
  // Requests that found the client's max_concurrency reached and waited to be sent.
  int64_t requests_waited_at_client() const { return arrivals_.requests_waited_at_client(); }
  int64_t done() const { return run_.completed + run_.dropped; }                    // requests completed or dropped
  int64_t waiting() const { return rec_.waiting(); }                        // requests queued (waiting, swapped, incoming)

  // What the run says as it stands (serve/sim_report.hpp), read from the
  // simulation's parts while it lives; the accessors below forward to it.
  SimReport report() const;
  ServingMetrics serving_metrics() const { return report().serving_metrics(); }
  json metrics() const { return report().metrics(); }
  SimDetails details() const { return report().details(); }
  bool all_completed() const { return report().all_completed(); }
  std::vector<RequestOutcome> outcomes() const { return report().outcomes(); }
  // The outcomes read from the records where they are (no copy); valid while
  // the simulation lives and runs no further.
  OutcomeView outcome_view() const { return OutcomeView(reqs_.data(), reqs_.size(), run_.cut_short()); }
  LimitFacts limit_facts() const { return report().limit_facts(); }

 private:
  using State = RequestState;
  using Req = SimRequest;
  using Batch = StepBatch;
  using Engine = ModelEngine;

  // events
  void on_arrival(int32_t id);
  void on_step_end(int r, int slot);
  int on_transfer_done(int32_t id);  // returns the replica the KV came from
  void request_schedule(Replica& r, TimeNs t);
  void try_start(Replica& r);
  // Forms `b` on the first of r's engines, round robin from r.next_engine,
  // whose scheduler has work (and moves next_engine past it); null when none has.
  Engine* form_next_batch(Replica& r, Batch& b);
  void start_group_step(DpGroup& g);

  // SchedulerHost: the lifecycle services the batch scheduler calls
  TimeNs now() const override { return run_.now; }
  bool arrivals_pending() const override { return run_.arrivals_pending > 0; }
  void wake_at(Replica& r, TimeNs t) override { request_schedule(r, t); }
  void join_running(Engine& e, Req& q) override;
  void preempt(Engine& e, Req& q, Batch& b) override;
  TokenLedger& tokens() override { return tokens_; }
  void finish(Replica& r, Engine& e, Req& q) override;
  void handoff(Replica& r, Engine& e, Req& q) override;
  void admit_transfers(Replica& r, Engine& e) override;
  bool adapter_fits(const Engine& e, const Req& q) const override { return e.adapter_fits(spec_.lora, q.spec.adapter); }
  void attach_adapter(Engine& e, const Req& q) override { e.attach_adapter(spec_.lora, q.spec.adapter); }
  double acceptance_draw() override { return accept_rng_.uniform01(); }

  // A turn was dropped: the session's later turns never come.
  void end_session(const Req& q);
  void leave_running(Engine& e, Req& q);

  // Starting a step: priced on its own by the pricer (the draft, swaps,
  // adapter loads and scheduler CPU included), then the batch started on the
  // clock for `dur` (its own time, or a lockstep group's longest) and told to
  // the recorders.
  double start_batch(Replica& r, Engine& e, Batch& b, double extra_s);
  void commit_batch(Replica& r, Batch& b, double t, const PeakWork& work, TimeNs dur);

  void drop(Req& q, DropReason reason);

  const Scenario& s_;
  const SimulationSpec& spec_;
  bool detailed_ = true;
  int spec_k_ = 0;  // speculative tokens drafted per step (0: none)

  Cluster cluster_;  // the replicas (ClusterBuilder's)
  std::vector<Req> reqs_;
  KvHandoffs handoffs_;  // disaggregation: the handed-off requests' prefill blocks
  GeneratedWorkload workload_info_;  // its requests are in reqs_ (generate_workload_into)
  EventQueue queue_;
  ArrivalFeed arrivals_;
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
  RouterLoads loads_;
  void touched(int replica);  // its loads may have changed: tell the routers
  std::unique_ptr<BatchScheduler> scheduler_;

  RunProgress run_;  // the clock and the counts
};

}  // namespace sightline::serve
