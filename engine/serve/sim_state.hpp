#pragma once
// The serving simulator's state, shared by its parts (the router, the batch
// scheduler, the KV manager and the metrics recorder): requests, the model
// engines of a replica with their queues, replicas, the steps in flight and
// the run's progress.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/operators.hpp"
#include "hw/hardware.hpp"
#include "perf/power.hpp"
#include "serve/event_queue.hpp"
#include "serve/kv_manager.hpp"
#include "serve/waiting_queue.hpp"
#include "scenario/simulation_spec.hpp"
#include "serve/workload.hpp"

namespace sightline::serve {

// The simulator's event kinds and their priorities at equal time: a finishing
// step frees resources first, then finished KV transfers, then arrivals;
// scheduling runs last so it sees everything that happened at that instant.
namespace sim_event {
enum EventKind { kStepEnd = 0, kTransferDone = 1, kArrival = 2, kSchedule = 3 };
constexpr int kPriority[] = {0, 1, 2, 3};
}  // namespace sim_event

enum class RequestState : int8_t { Pending, Queued, Running, Swapped, Handoff, Transferring, Done, Dropped };
enum class ItemKind : int8_t { Prefill, Decode, Verify };

// Why a request was dropped: a byte in its record (a pointer to the text was
// eight, in a million records), its words in drop_reason_text.
enum class DropReason : int8_t { None, ReplicaKv, DecodeReplicaKv, PromptOverTokenBudget, SessionDropped };
inline const char* drop_reason_text(DropReason r) {
  switch (r) {
    case DropReason::ReplicaKv: return "needs more KV blocks than a replica has";
    case DropReason::DecodeReplicaKv: return "needs more KV blocks than a decode replica has";
    case DropReason::PromptOverTokenBudget: return "prompt longer than max_num_batched_tokens (use chunked_prefill)";
    case DropReason::SessionDropped: return "an earlier turn of its session was dropped";
    case DropReason::None: break;
  }
  return "";
}

// One request's record, kept for the whole run (a million of them in a large
// run: 200 bytes; fields ordered widest first so that padding costs nothing,
// token counts bounded by max_model_len in ReqTokens (serve/workload.hpp);
// what only a KV handoff needs lives in the simulator's handoff records, see
// HandoffRecord).
struct SimRequest {
  RequestSpec spec;
  KvHold kv;
  // Sums over the request's admissions: a preempted request adds to them
  // again, so no input bounds them (64 bits).
  int64_t cached_tokens = 0;  // prefix-cache hits over all admissions
  int64_t discarded = 0;      // KV tokens thrown away by recompute preemptions
  int64_t processed = 0;      // tokens this request put into the KV cache
  int64_t queue_key = 0;      // its entry in the engine's waiting queue, while queued (a run-wide counter)
  TimeNs first_scheduled = -1, first_token = -1, last_token = -1, completion = -1;
  ReqTokens computed = 0;        // tokens whose KV is in the cache
  ReqTokens generated = 0;       // output tokens delivered
  ReqTokens target = 0;          // tokens to have in cache before the next token comes out of a prefill
  ReqTokens swapped_blocks = 0;  // blocks swapped out to host memory (at most its context's)
  ReqTokens kv_counted = 0;      // private KV tokens the recorder counts for it while it runs
  int32_t replica = -1;
  int32_t gaps = 0, gaps_over_itl = 0;  // token gaps, and those past the SLO's ITL bound
  int32_t preemptions = 0;
  int32_t handoff = -1;  // disaggregation: its HandoffRecord while its KV moves to a decode replica
  RequestState state = RequestState::Pending;
  bool in_flight = false;
  DropReason drop_reason = DropReason::None;
};

// Disaggregation: the prefill replica's blocks of a request handed off to a
// decode replica, held until the KV transfer ends (then the record is reused).
struct HandoffRecord {
  int32_t src_replica = -1;
  KvHold src_kv;
};

struct StepItem {
  int32_t req = 0;
  ItemKind kind = ItemKind::Decode;
  int64_t new_tokens = 0;
  int64_t cached = 0;
};

struct StepBatch {
  bool active = false;
  int engine = 0;
  std::vector<StepItem> items;
  BatchShape shape;  // what is priced, written by the scheduler with the items (static batches are padded)
  BatchSummary summary;  // summarize_batch(shape), counted as add_seq writes it
  TimeNs start = 0, end = 0;
  int64_t prefill_tokens = 0, decode_tokens = 0;
  bool static_decode = false;
  double swap_bytes = 0;  // per GPU, swapped out or in before the step
  double reload_s = 0;    // prefix blocks reloaded from offload tiers for this step's new prompts (unoverlapped)

  // Empties the batch before the scheduler forms a step of engine `engine_index`.
  void reset(int engine_index) {
    engine = engine_index;
    items.clear();
    shape.seqs.clear();
    summary = BatchSummary{};
    static_decode = false;
    swap_bytes = 0;
    reload_s = 0;
    prefill_tokens = decode_tokens = 0;
  }
  // A sequence priced in the step: the shape's and the summary's (the
  // pricer then makes no pass over the shape for it). By value and inline:
  // the scheduler's walk calls it per sequence (out of line, its chunk was
  // stored in two halves and read back whole, a stall per sequence).
  __attribute__((always_inline)) void add_seq(SeqChunk s) {
    shape.seqs.push_back(s);
    summary.add(s);
  }
};

// A step's priced seconds on the clock (at least 1 ns). A step the clock
// cannot hold comes from the hardware's rates (a GPU with a tiny peak or
// bandwidth): refused there, never wrapped into a tiny time.
inline TimeNs step_clock_ns(double t) {
  return std::max<TimeNs>(1, to_ns(t, "/hardware/gpu",
                                   "one step of the model on this GPU (check its peak_tflops and "
                                   "hbm_bandwidth_GBps)"));
}

// One model served by a replica: its KV space and its queues.
struct ModelEngine {
  int model = 0;
  KvSpace kv;
  WaitingQueue waiting;  // indexed by adapter under multi-LoRA
  std::vector<int32_t> running;
  std::deque<int32_t> swapped;
  std::deque<int32_t> incoming;  // disaggregated decode: waiting for blocks and the KV transfer
  int64_t transferring = 0;      // disaggregated decode: admitted, KV still in transit (hold a max_num_seqs seat)
  int cost = 0;                  // index into the simulator's cost entries
  int64_t queued_tokens = 0;     // prompt tokens waiting in `waiting` (router load)
  // LoRA
  std::vector<int32_t> adapter_refs;
  int distinct_adapters = 0;
  std::set<std::pair<int64_t, int32_t>> resident;  // GPU adapter slots: (last use, adapter), least recent first
  std::vector<int64_t> last_used;       // per adapter: its key in `resident`, -1 when not resident
  std::vector<int64_t> in_batch_mark;   // per adapter: the stamp of the last step that used it
  int64_t lora_clock = 0;               // stamps, one per step and one per use
  // Whether a request of adapter `a` (-1: none) fits a step with the
  // adapters already in it, and the counts while it runs.
  bool adapter_fits(const LoraSpec& lora, int a) const {
    if (!lora.enabled || a < 0) return true;
    return adapter_refs[static_cast<size_t>(a)] > 0 || distinct_adapters < lora.max_adapters_per_batch;
  }
  void attach_adapter(const LoraSpec& lora, int a) {
    if (!lora.enabled || a < 0) return;
    if (adapter_refs[static_cast<size_t>(a)]++ == 0) ++distinct_adapters;
  }
  void detach_adapter(const LoraSpec& lora, int a) {
    if (!lora.enabled || a < 0) return;
    if (--adapter_refs[static_cast<size_t>(a)] == 0) --distinct_adapters;
  }
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
  std::vector<ModelEngine> engines;
  int next_engine = 0;
  int inflight = 0;
  TimeNs stage_free = 0;
  bool sched_pending = false;
  TimeNs sched_at = 0;
  int64_t outstanding = 0;
  TimeNs link_free = 0;
  std::vector<StepBatch> slots;
  int draft_cost = -1;
  int dp_group = -1;  // its attention data-parallel group in lockstep (Simulation::start_group_step), or -1
  // accounting
  double busy_s = 0;  // per GPU (step time / pp)
  double busy_energy_J = 0;  // all GPUs of the replica, while their stage of a step runs (perf/power.hpp)
  double busy_clock_s = 0;   // per GPU, as busy_s on the clock's whole-ns step times (energy, utilization)
  double step_s = 0;  // whole steps
  int64_t steps = 0;

  // A step starts at `now`: `t` priced seconds, `dur` on the clock, with
  // `compute_gpu_s` and `memory_gpu_s` of work at peak (PeakWork). Its stage
  // frees after 1/pp of it; the accounting takes it in.
  void start_step(TimeNs now, double t, TimeNs dur, double compute_gpu_s, double memory_gpu_s) {
    ++inflight;
    stage_free = now + std::max<TimeNs>(1, dur / layout.pp);
    busy_s += t / layout.pp;
    step_s += t;
    // The energy of each GPU of the replica: its tp rank's share of the work,
    // of which its pipeline stage runs 1/pp in 1/pp of the step. The time a GPU
    // waits between steps is charged idle power in the metrics. The step's time
    // is the clock's (whole ns): the priced seconds can differ in the last bit
    // between native and wasm libm, the rounded clock does not.
    const double tp = static_cast<double>(layout.tp), pp = static_cast<double>(layout.pp);
    const double clock_s = to_s(dur);
    const double compute_s = compute_gpu_s / tp, memory_s = memory_gpu_s / tp;
    busy_clock_s += clock_s / pp;
    busy_energy_J += tp * pp * sightline::busy_energy_J(*gpu, compute_s / pp, memory_s / pp, clock_s / pp);
    ++steps;
  }
};

// Where a run stands: its clock, its counts and where it stopped (the
// simulator's; its report, SimReport, reads them).
struct RunProgress {
  TimeNs now = 0;
  TimeNs first_arrival = 0, last_event = 0;  // last_event: the last completion
  TimeNs stop_ns = 0;                        // spec.stop_at_s on the clock; 0: none
  int64_t events = 0;
  int64_t sequence_steps = 0;         // the sequences of every step started (units_done)
  int64_t prompt_tokens_arrived = 0;  // the prompts of every arrival (units_done)
  int64_t arrivals_pending = 0;
  int64_t completed = 0, dropped = 0;
  int64_t tok_prompt = 0;  // completed requests' prompt tokens
  bool finished = false;
  bool stopped = false;  // at spec.stop_at_s, with requests left in flight
  std::string limit_hit;
  // Stopped before every request was done or dropped (at a benchmark's end or
  // a limit): its requests in flight are the cut's (RequestOutcome::cut).
  bool cut_short() const { return stopped || !limit_hit.empty(); }

  // Work units (the run budget's measure, jobs/budgeted_job; docs/limits.md
  // "What a unit costs"): an event's CPU grows with the sequences its step
  // walks and prices, and a prompt's arrival with the KV blocks its context
  // is looked up, published and offloaded in. So a unit is one event, or
  // kSequencesPerUnit sequences stepped, or kPromptTokensPerUnit prompt
  // tokens arrived (a multi-turn turn's whole context). Chosen on the CPU of
  // 16 central runs of shipped presets, which spread 58x per event and 8x per
  // unit; at the default budget's size the dearest unit measured cost 0.65 us.
  // A speculative step also prices the draft's k passes (`spec_k` drafted
  // tokens): its simulation's units count k + 1 times.
  static constexpr int64_t kSequencesPerUnit = 16;
  static constexpr int64_t kPromptTokensPerUnit = 32;
  int64_t units_done(int spec_k) const {
    return (events + sequence_steps / kSequencesPerUnit + prompt_tokens_arrived / kPromptTokensPerUnit) *
           (1 + static_cast<int64_t>(spec_k));
  }
  // The arrivals' share of units_done, `arrived` requests' arrival handled:
  // an event and its prompt's units each (the work estimate's probe counts
  // them apart, per request).
  int64_t arrival_units(int64_t arrived, int spec_k) const {
    return (arrived + prompt_tokens_arrived / kPromptTokensPerUnit) * (1 + static_cast<int64_t>(spec_k));
  }
};

}  // namespace sightline::serve
