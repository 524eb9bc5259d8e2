#pragma once
// The discrete-event serving simulator: requests arrive (workload), a router
// sends them to replicas (cluster), each replica's batch scheduler forms the
// next step from its queue under KV-block, sequence and token limits, and the
// step is priced by the cost model for its exact mixed batch. Sliced: run()
// processes a bounded number of events per call.
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "perf/cost_setup.hpp"
#include "scenario/scenario.hpp"
#include "serve/event_queue.hpp"
#include "serve/kv_manager.hpp"
#include "serve/memory_plan.hpp"
#include "serve/metrics_recorder.hpp"
#include "serve/rng.hpp"
#include "serve/stats.hpp"
#include "serve/workload.hpp"

namespace sightline::serve {

// What happened to one request, in arrival order; times in ns, -1 when not
// reached (a dropped or unfinished request has no completion).
struct RequestOutcome {
  TimeNs arrival = 0;
  TimeNs first_token = -1;
  TimeNs completion = -1;
  int64_t output_tokens = 0;
};

class Simulation {
 public:
  // `detailed`: keep per-request records, the time series and the trace
  // (search runs turn it off).
  Simulation(const Scenario& scenario, const WorkloadOverride& override, bool detailed);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  bool run(int64_t max_events);  // true once finished
  bool finished() const { return finished_; }
  double progress() const;
  int64_t events_processed() const { return events_; }
  int64_t num_requests() const { return static_cast<int64_t>(reqs_.size()); }

  json metrics() const;                 // the "metrics" object
  json details() const;                 // deployment, memory, capacity, tokens, time series, requests, trace, warnings
  // Share of requests (from index `skip` on, in arrival order) completed within the SLO.
  double slo_attainment(int64_t skip = 0) const;
  bool all_completed() const;
  // Every request's outcome in arrival order (steady-state analysis of capacity searches).
  std::vector<RequestOutcome> outcomes() const;

 private:
  enum class State : int8_t { Pending, Queued, Running, Swapped, Handoff, Transferring, Done, Dropped };
  enum class ItemKind : int8_t { Prefill, Decode, Verify };

  struct Req {
    RequestSpec spec;
    State state = State::Pending;
    bool in_flight = false;
    int32_t replica = -1;
    int64_t computed = 0;   // tokens whose KV is in the cache
    int64_t generated = 0;  // output tokens delivered
    int64_t target = 0;     // tokens to have in cache before the next token comes out of a prefill
    int64_t private_blocks = 0;
    std::vector<int32_t> prefix_entries;
    int64_t swapped_blocks = 0;
    // Disaggregation: the prefill replica's blocks, held until the KV transfer ends.
    int32_t src_replica = -1;
    int64_t src_private = 0;
    std::vector<int32_t> src_prefix;
    int64_t cached_tokens = 0;  // prefix-cache hits over all admissions
    int64_t discarded = 0;      // KV tokens thrown away by recompute preemptions
    int64_t processed = 0;      // tokens this request put into the KV cache
    int64_t kv_counted = 0;     // private KV tokens the recorder counts for it while it runs
    TimeNs first_scheduled = -1, first_token = -1, last_token = -1, completion = -1;
    TimeNs transfer_ns = 0;
    int32_t preemptions = 0;
    const char* drop_reason = nullptr;
  };

  struct Item {
    int32_t req = 0;
    ItemKind kind = ItemKind::Decode;
    int64_t new_tokens = 0;
    int64_t cached = 0;
  };

  struct Batch {
    bool active = false;
    int engine = 0;
    std::vector<Item> items;
    BatchShape shape;          // what is priced (static batches are padded)
    TimeNs start = 0, end = 0;
    int64_t prefill_tokens = 0, decode_tokens = 0;
    bool static_decode = false;
    double swap_bytes = 0;  // per GPU, swapped out or in before the step
  };

  struct Engine {
    int model = 0;
    BlockPool pool;
    int64_t watermark_blocks = 0;
    double kv_bytes_per_token = 0;  // per GPU
    int64_t host_blocks_free = 0;   // swap space
    std::deque<int32_t> waiting;
    std::vector<int32_t> running;
    std::deque<int32_t> swapped;
    std::deque<int32_t> incoming;   // disaggregated decode: waiting for blocks and the KV transfer
    int cost = 0;                   // index into costs_
    int64_t queued_tokens = 0;      // prompt tokens waiting in `waiting` (router load)
    // LoRA
    std::vector<int32_t> adapter_refs;
    int distinct_adapters = 0;
    std::vector<int32_t> resident;  // least recently used first
    // static batching
    bool static_active = false;
    int64_t static_max_prompt = 0, static_max_output = 0, static_step = 0;
  };

  struct Replica {
    int index = 0;
    int pool = 0;
    PoolRole role = PoolRole::Mixed;
    ParallelLayout layout;
    const GpuSpec* gpu = nullptr;
    std::vector<Engine> engines;
    int next_engine = 0;
    int inflight = 0;
    TimeNs stage_free = 0;
    bool sched_pending = false;
    TimeNs sched_at = 0;
    int64_t outstanding = 0;
    TimeNs link_free = 0;
    std::vector<Batch> slots;
    int draft_cost = -1;
    // accounting
    double busy_s = 0;  // per GPU (step time / pp)
    double step_s = 0;  // whole steps
    int64_t steps = 0;
  };

  struct CostEntry {
    std::unique_ptr<Scenario> scenario;  // the copy CostSetup points into
    CostSetup setup;
    const ModelArch* model = nullptr;
    ParallelLayout layout;
    bool draft = false;
  };

  // events
  void on_arrival(int32_t id);
  void on_step_end(int r, int slot);
  void on_transfer_done(int32_t id);
  void request_schedule(Replica& r, TimeNs t);
  void try_start(Replica& r);

  // scheduling
  bool form_batch(Replica& r, Engine& e, Batch& b);
  bool form_static(Replica& r, Engine& e, Batch& b);
  void admit_incoming(Replica& r, Engine& e);
  void swap_in(Engine& e, Batch& b);
  bool admit(Engine& e, Req& q, int64_t budget, bool chunked, int64_t& chunk);
  bool ensure_blocks(Engine& e, Req& q, int64_t tokens_after);
  void preempt(Engine& e, Req& q, Batch& b);
  void release_blocks(Engine& e, Req& q);
  void publish_prefix(Engine& e, Req& q);
  bool lora_admissible(const Engine& e, const Req& q) const;
  void lora_attach(Engine& e, const Req& q);
  void lora_detach(Engine& e, const Req& q);
  void join_running(Engine& e, Req& q);
  void leave_running(Engine& e, Req& q);
  void note_computed(Req& q);
  int64_t private_kv_tokens(const Req& q) const {
    return q.computed - static_cast<int64_t>(q.prefix_entries.size()) * block_size_;
  }
  uint64_t prefix_key(const Req& q, int64_t block) const;
  int64_t blocks_for(int64_t tokens) const { return (tokens + block_size_ - 1) / block_size_; }
  int64_t held_blocks(const Req& q) const { return static_cast<int64_t>(q.prefix_entries.size()) + q.private_blocks; }

  // pricing
  double start_batch(Replica& r, Engine& e, Batch& b, double extra_s);
  double price(int cost_index, const BatchShape& shape, int adapters, bool accumulate, Replica* r);

  // completion
  void emit_tokens(Replica& r, Req& q, int64_t n);
  void finish(Replica& r, Engine& e, Req& q);
  void handoff(Replica& r, Engine& e, Req& q);
  void drop(Req& q, const char* reason);
  int route(const std::vector<int>& candidates, const Req& q, int64_t& rr);
  int32_t pick_victim(const Engine& e, int32_t exclude) const;
  void sample_series(const Batch& b);

  const Scenario& s_;
  const SimulationSpec& spec_;
  bool detailed_ = true;
  int64_t block_size_ = 16;
  int spec_k_ = 0;
  int64_t reserve_blocks_ = 0;  // contiguous allocation: blocks reserved per request
  double lora_load_time_s_ = 0;

  std::vector<CostEntry> costs_;
  std::vector<Replica> replicas_;
  std::vector<int> entry_replicas_;   // where arrivals go
  std::vector<int> decode_replicas_;  // disaggregated decode pool
  std::vector<ReplicaMemoryPlan> pool_memory_;
  std::vector<Req> reqs_;
  GeneratedWorkload workload_info_;
  EventQueue queue_;
  Rng accept_rng_;
  int64_t rr_next_ = 0;
  int64_t rr_decode_next_ = 0;
  double lora_load_s_ = 0;

  TimeNs now_ = 0;
  int64_t events_ = 0;
  bool finished_ = false;
  std::string limit_hit_;
  int64_t arrivals_pending_ = 0;
  int64_t completed_ = 0, dropped_ = 0;

  // live occupancy counters and their time integrals
  MetricsRecorder rec_;
  int64_t kv_total_ = 0;

  // step statistics
  int64_t steps_ = 0;
  double sum_batch_ = 0, sum_tokens_ = 0;
  double family_s_[16] = {};
  double expert_s_ = 0, draft_s_ = 0, swap_s_ = 0, cpu_s_ = 0, lora_gemm_s_ = 0;
  int64_t tok_prompt_ = 0, tok_output_ = 0, tok_processed_ = 0, tok_cached_ = 0, tok_discarded_ = 0,
          tok_padding_ = 0, tok_spec_rejected_ = 0, verify_items_ = 0, verify_committed_ = 0;
  int64_t preemptions_ = 0, swaps_out_ = 0, recomputes_ = 0, adapter_loads_ = 0, transfers_ = 0;
  double transfer_bytes_ = 0;
  std::vector<double> transfer_ms_;
  int64_t prefix_lookups_ = 0, prefix_hits_ = 0;
  GapHistogram itl_;
  TimeSeries series_;
  TimeNs first_arrival_ = 0, last_event_ = 0;

  struct TraceStep {
    int32_t replica;
    int32_t engine;
    TimeNs start, dur;
    int32_t requests;
    int64_t prefill_tokens, decode_tokens;
  };
  std::vector<TraceStep> trace_;
  struct TraceTransfer {
    int32_t req, src, dst;
    TimeNs start, dur;
  };
  std::vector<TraceTransfer> trace_transfers_;
  bool trace_truncated_ = false;
};

}  // namespace sightline::serve
