// Request-level batching, the "static" policy (serve/scheduler_policies.hpp).
#include <algorithm>

#include "serve/scheduler_policies.hpp"
#include "serve/token_ledger.hpp"

namespace sightline::serve {

namespace {

// Request-level batching: a batch of up to batch_size prompts, padded to the
// longest prompt and run until its longest output is done; nothing joins it.
class StaticScheduler : public BatchScheduler {
 public:
  using BatchScheduler::BatchScheduler;
  bool form(Replica& r, ModelEngine& e, StepBatch& b) override;
  void complete(Replica& r, ModelEngine& e, StepBatch& b) override;
};

bool StaticScheduler::form(Replica& r, ModelEngine& e, StepBatch& b) {
  if (e.static_active) {
    const int64_t past = e.static_max_prompt + e.static_step;
    for (int32_t id : e.running) {
      SimRequest& q = req(id);
      StepItem it;
      it.req = id;
      it.kind = ItemKind::Decode;
      it.new_tokens = 1;
      it.cached = past;
      b.items.push_back(it);
      b.add_seq(SeqChunk{1, past});
      q.in_flight = true;
      ++b.decode_tokens;
    }
    b.static_decode = true;
    return !b.items.empty();
  }
  if (e.waiting.empty()) return false;
  const int64_t want = std::min(spec_.scheduler.batch_size, spec_.scheduler.max_num_seqs);
  if (static_cast<int64_t>(e.waiting.size()) < want && spec_.scheduler.max_wait_ms > 0 && host_.arrivals_pending()) {
    const TimeNs deadline = req(e.waiting.front()).spec.arrival + to_ns(spec_.scheduler.max_wait_ms * 1e-3, "/serving/scheduler/max_wait_ms", "max_wait_ms");
    if (host_.now() < deadline) {
      host_.wake_at(r, deadline);
      return false;
    }
  }
  int64_t n = std::min<int64_t>(want, static_cast<int64_t>(e.waiting.size()));
  int64_t maxp = 0, maxo = 0, per_seq = 0;
  for (; n > 0; --n) {
    maxp = maxo = 0;
    auto it = e.waiting.entries().begin();
    for (int64_t i = 0; i < n; ++i, ++it) {
      const SimRequest& q = req(it->second);
      maxp = std::max<int64_t>(maxp, q.spec.prompt);
      maxo = std::max<int64_t>(maxo, q.spec.output);
    }
    per_seq = kv_.blocks_for(e.kv, maxp + maxo);
    if (n * per_seq <= e.kv.pool.allocatable()) break;
  }
  if (n == 0) return false;
  e.static_active = true;
  e.static_max_prompt = maxp;
  e.static_max_output = maxo;
  e.static_step = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t id = e.waiting.front();
    e.waiting.pop_front();
    rec_.dequeued();
    SimRequest& q = req(id);
    e.kv.pool.take(per_seq);
    q.kv.private_blocks = per_seq;
    e.queued_tokens -= q.target;
    q.state = RequestState::Running;
    host_.join_running(e, q);
    StepItem it;
    it.req = id;
    it.kind = ItemKind::Prefill;
    it.new_tokens = q.spec.prompt;
    it.cached = 0;
    b.items.push_back(it);
    b.add_seq(SeqChunk{maxp, 0});  // padded to the longest prompt
    q.in_flight = true;
    b.prefill_tokens += maxp;
  }
  return true;
}

void StaticScheduler::complete(Replica& r, ModelEngine& e, StepBatch& b) {
  TokenCounts& counts = rec_.counts();
  TokenLedger& tokens = host_.tokens();
  if (b.static_decode) ++e.static_step;
  bool all_done = true;
  for (const StepItem& it : b.items) {
    SimRequest& q = req(it.req);
    q.in_flight = false;
    if (!b.static_decode) {
      q.computed = q.spec.prompt;
      q.processed += q.spec.prompt;
      counts.processed += q.spec.prompt;
      counts.padding += e.static_max_prompt - q.spec.prompt;
      tokens.emit_tokens(q, 1);
    } else if (q.generated < q.spec.output) {
      ++q.computed;
      ++q.processed;
      ++counts.processed;
      tokens.emit_tokens(q, 1);
    } else {
      ++counts.padding;
    }
    tokens.computed(q);
    all_done = all_done && q.generated >= q.spec.output;
  }
  if (all_done) {
    // The batch returns together: every request completes at its end.
    for (const StepItem& it : b.items) host_.finish(r, e, req(it.req));
    e.static_active = false;
  }
}

}  // namespace

std::unique_ptr<BatchScheduler> make_static_scheduler(const SimulationSpec& spec, std::vector<SimRequest>& requests,
                                                      KvManager& kv, MetricsRecorder& rec, SchedulerHost& host) {
  return std::make_unique<StaticScheduler>(spec, requests, kv, rec, host);
}

}  // namespace sightline::serve
