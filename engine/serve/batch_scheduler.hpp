#pragma once
// Batch schedulers: which requests of one model engine run in its next step,
// under the sequence, token and KV-block limits, and what a finished step did
// to them (tokens computed and emitted, requests finished or handed off).
// Policies are chosen by name from a string-keyed registry of factories:
//   continuous       iteration-level batching (vLLM)
//   chunked_prefill  the same with prompts split into token-budget chunks (Sarathi)
//   static           request-level batches padded to the longest, run to their end
// The simulator supplies the services that touch more than one engine's
// queues (preemption, adapters, KV transfers, the clock) through SchedulerHost.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "serve/kv_manager.hpp"
#include "serve/limit_facts.hpp"
#include "serve/metrics_recorder.hpp"
#include "scenario/simulation_spec.hpp"
#include "serve/sim_state.hpp"

namespace sightline::serve {

class TokenLedger;

class SchedulerHost {
 public:
  virtual ~SchedulerHost() = default;
  virtual TimeNs now() const = 0;
  virtual bool arrivals_pending() const = 0;
  virtual void wake_at(Replica& r, TimeNs t) = 0;  // runs the replica's scheduler again at t
  // Request lifecycle (each also feeds the metrics recorder).
  virtual void join_running(ModelEngine& e, SimRequest& q) = 0;
  // Preempts a running request: swapped out, or back to the head of the
  // waiting queue to recompute (counted in the recorder's recomputes).
  virtual void preempt(ModelEngine& e, SimRequest& q, StepBatch& b) = 0;
  // What a request's computed and emitted tokens change (serve/token_ledger.hpp):
  // the per-token hooks, applied inline by the scheduler.
  virtual TokenLedger& tokens() = 0;
  virtual void finish(Replica& r, ModelEngine& e, SimRequest& q) = 0;
  virtual void handoff(Replica& r, ModelEngine& e, SimRequest& q) = 0;  // disaggregation: to a decode replica
  virtual void admit_transfers(Replica& r, ModelEngine& e) = 0;        // disaggregation: start waiting KV transfers
  // LoRA adapters.
  virtual bool adapter_fits(const ModelEngine& e, const SimRequest& q) const = 0;
  virtual void attach_adapter(ModelEngine& e, const SimRequest& q) = 0;
  // Speculative decoding: one uniform draw in [0, 1) for a draft token's acceptance.
  virtual double acceptance_draw() = 0;
};

class BatchScheduler {
 public:
  BatchScheduler(const SimulationSpec& spec, std::vector<SimRequest>& requests, KvManager& kv, MetricsRecorder& rec,
                 SchedulerHost& host);
  virtual ~BatchScheduler() = default;
  BatchScheduler(const BatchScheduler&) = delete;
  BatchScheduler& operator=(const BatchScheduler&) = delete;

  // Forms the engine's next step into the empty batch `b`, its items and the
  // shape it is priced as (the items' own, or padded); false when nothing can run.
  virtual bool form(Replica& r, ModelEngine& e, StepBatch& b) = 0;
  // Applies the finished step `b`.
  virtual void complete(Replica& r, ModelEngine& e, StepBatch& b) = 0;
  // Waiting-queue entries the scheduler has looked at, in all: O(max_num_seqs)
  // per step whatever the queue's length (a complexity property the tests hold).
  int64_t queue_entries_read() const { return queue_reads_; }
  // Every max_num_seqs comparison of the run goes through this record
  // (serve/limit_facts.hpp), the host's KV transfers' too.
  SeqLimitChecks& seq_limit() { return seq_limit_; }
  const SeqLimitChecks& seq_limit() const { return seq_limit_; }

 protected:
  SimRequest& req(int32_t id) { return reqs_[static_cast<size_t>(id)]; }
  int32_t id_of(const SimRequest& q) const { return static_cast<int32_t>(&q - reqs_.data()); }

  const SimulationSpec& spec_;
  std::vector<SimRequest>& reqs_;
  KvManager& kv_;
  MetricsRecorder& rec_;
  SchedulerHost& host_;
  int spec_k_ = 0;
  mutable int64_t queue_reads_ = 0;
  SeqLimitChecks seq_limit_;
};

struct BatchSchedulerFactory {
  const char* name;  // the name in serving.scheduler.policy (the `scheduler_policies()` registry)
  std::unique_ptr<BatchScheduler> (*make)(const SimulationSpec&, std::vector<SimRequest>&, KvManager&, MetricsRecorder&,
                                          SchedulerHost&);
};
const std::vector<BatchSchedulerFactory>& batch_scheduler_factories();

// The scheduler called `name`; an unknown name fails with a located error at
// `path` that lists the valid names.
std::unique_ptr<BatchScheduler> make_batch_scheduler(const std::string& name, const std::string& path,
                                                     const SimulationSpec& spec, std::vector<SimRequest>& requests,
                                                     KvManager& kv, MetricsRecorder& rec, SchedulerHost& host);

}  // namespace sightline::serve
