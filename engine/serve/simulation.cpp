#include "serve/simulation.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "mem/inference_memory.hpp"
#include "model/eagle_head.hpp"
#include "model/mtp.hpp"

namespace sightline::serve {

using namespace sim_event;

// One record per request, kept for the whole run: a million of them is the
// 1M-request run's peak (docs/speed.md, "Request records in 200 B"). Held
// here where the records are made (64-bit builds; wasm32's vector is smaller).
static_assert(sizeof(void*) != 8 || sizeof(SimRequest) <= 200, "a request record grew past 200 bytes");

namespace {

// The SLO's ITL bound on the clock, 0 for none (counted per request).
TimeNs itl_bound_ns(const SimulationSpec& spec) {
  return spec.slo.enabled && spec.slo.itl_ms > 0 ? static_cast<TimeNs>(std::llround(spec.slo.itl_ms * 1e6)) : 0;
}

}  // namespace

Simulation::Simulation(const Scenario& scenario, const WorkloadOverride& override, bool detailed)
    : s_(scenario),
      spec_(*scenario.serving->simulation),
      detailed_(detailed),
      spec_k_(spec_.speculative.method != SpecMethod::None ? spec_.speculative.k : 0),
      arrivals_(scenario, reqs_, queue_),
      pricer_(scenario, reqs_),
      rec_(spec_.kv.block_size),
      stats_(itl_bound_ns(spec_)),
      tokens_(rec_, stats_, run_.now, spec_.kv.block_size),
      trace_(spec_.outputs, detailed),
      kv_(spec_.kv, spec_k_),
      loads_(cluster_.replicas, kv_, spec_.kv.block_size) {
  const RouterOptions router_options{spec_.cluster.router_load_bound};
  entry_router_ = make_router(to_string(spec_.cluster.router), "/serving/cluster/router", router_options);
  decode_router_ = make_router(to_string(spec_.cluster.router), "/serving/cluster/router", router_options);
  scheduler_ = make_batch_scheduler(to_string(spec_.scheduler.policy), "/serving/scheduler/policy", spec_, reqs_, kv_,
                                    rec_, *this);
  accept_rng_ = Rng(stream_seed(override.seed.value_or(s_.seed), "acceptance"));
  ClusterBuilder builder(s_, pricer_, kv_, rec_);
  cluster_ = builder.build();
  FirstArrivals first = builder.load_workload(override, reqs_, workload_info_);
  run_.first_arrival = run_.now = first.first_arrival;
  rec_.start(run_.first_arrival);
  run_.arrivals_pending = static_cast<int64_t>(reqs_.size());
  arrivals_.start(std::move(first), override.tokenize);
  if (spec_.stop_at_s > 0) run_.stop_ns = to_ns(spec_.stop_at_s, "/serving/workload", "the benchmark's end");
  if (reqs_.empty()) run_.finished = true;
  if (spec_.cluster.router == RouterKind::KvAware) loads_.set_prefill_s_per_token(pricer_.prefill_s_per_token());
}

Simulation::~Simulation() = default;

SimReport Simulation::report() const {
  return SimReport(SimParts{s_, reqs_, cluster_, workload_info_, run_, rec_, stats_, trace_, pricer_, kv_,
                            scheduler_->seq_limit(), loads_.capacity_read(), detailed_, spec_k_});
}

// ---------------------------------------------------------------------------
// Event loop

bool Simulation::run(int64_t max_events) {
  if (run_.finished) return true;
  int64_t n = 0;
  while (n < max_events && !queue_.empty()) {
    if (run_.stop_ns > 0 && queue_.top().time > run_.stop_ns) {
      run_.stopped = true;
      break;
    }
    if (run_.events >= spec_.limits.max_events) {
      run_.limit_hit = "max_events";
      break;
    }
    if (to_s(queue_.top().time) > spec_.limits.max_sim_time_s) {
      run_.limit_hit = "max_sim_time_s";
      break;
    }
    const Event ev = queue_.pop();
    if (ev.time < run_.now) fail(error_code::kInternal, "", "serving simulator: the clock went backwards");
    rec_.advance(ev.time);
    run_.now = ev.time;
    // Every change to a replica's loads happens in an event of that replica
    // (or, for a handoff, right where it happens): the routers hear of each.
    switch (ev.kind) {
      case kArrival: {
        if (!arrivals_.reaches_scheduler(ev, run_.now)) break;
        on_arrival(static_cast<int32_t>(ev.a));
        const int32_t ri = reqs_[static_cast<size_t>(ev.a)].replica;
        if (ri >= 0) touched(ri);
        break;
      }
      case kStepEnd:
        on_step_end(static_cast<int>(ev.a), static_cast<int>(ev.b));
        touched(static_cast<int>(ev.a));
        break;
      case kTransferDone: {
        const int src = on_transfer_done(static_cast<int32_t>(ev.a));
        touched(reqs_[static_cast<size_t>(ev.a)].replica);
        touched(src);
        break;
      }
      case kSchedule: {
        Replica& r = cluster_.replicas[static_cast<size_t>(ev.a)];
        if (r.sched_pending && r.sched_at == ev.time) r.sched_pending = false;
        try_start(r);
        touched(r.index);
        break;
      }
      default: break;
    }
    ++run_.events;
    ++n;
  }
  if (queue_.empty() || !run_.limit_hit.empty() || run_.stopped) {
    run_.finished = true;
    rec_.advance(run_.now);
  }
  return run_.finished;
}

bool Simulation::run_units(int64_t max_units) {
  const int64_t start = units_done();
  do {
    if (run(1)) return true;
  } while (units_done() - start < max_units);
  return run_.finished;
}

double Simulation::progress() const {
  if (run_.finished || reqs_.empty()) return 1.0;
  const double p = static_cast<double>(run_.completed + run_.dropped) / static_cast<double>(reqs_.size());
  return std::min(p, 0.999);
}

void Simulation::request_schedule(Replica& r, TimeNs t) {
  if (r.sched_pending && r.sched_at <= t) return;
  r.sched_pending = true;
  r.sched_at = t;
  queue_.push(t, kPriority[kSchedule], kSchedule, r.index);
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

void Simulation::drop(Req& q, DropReason reason) {
  q.state = State::Dropped;
  q.drop_reason = reason;
  ++run_.dropped;
  if (q.spec.session >= 0) end_session(q);
  arrivals_.client_freed(run_.now);
}

void Simulation::on_arrival(int32_t id) {
  Req& q = reqs_[static_cast<size_t>(id)];
  --run_.arrivals_pending;
  run_.prompt_tokens_arrived += q.spec.prompt;
  q.state = State::Queued;
  q.target = q.spec.prompt;
  const int ri = entry_router_->pick_request(cluster_.entry_replicas, q.spec, loads_);
  Replica& r = cluster_.replicas[static_cast<size_t>(ri)];
  Engine& e = r.engines[static_cast<size_t>(q.spec.model)];
  const bool watermark = spec_.scheduler.policy != SchedulerPolicy::Static && kv_.keeps_watermark();  // growth room
  auto fits = [&](const Engine& eng) {
    const int64_t need = kv_.admission_blocks(eng.kv, q.spec, q.spec.prompt + q.spec.output + spec_k_);
    return eng.kv.pool.could_fit(need, watermark ? eng.kv.watermark_blocks : 0, watermark);
  };
  if (!fits(e)) return drop(q, DropReason::ReplicaKv);
  if (!cluster_.decode_replicas.empty() &&
      !fits(cluster_.replicas[static_cast<size_t>(cluster_.decode_replicas.front())].engines[static_cast<size_t>(q.spec.model)]))
    return drop(q, DropReason::DecodeReplicaKv);
  if (spec_.scheduler.policy == SchedulerPolicy::Continuous && q.spec.prompt > spec_.scheduler.max_num_batched_tokens)
    return drop(q, DropReason::PromptOverTokenBudget);
  q.replica = ri;
  q.queue_key = e.waiting.push_back(id, q.spec.adapter);
  rec_.queued();
  e.queued_tokens += q.target;
  ++r.outstanding;
  request_schedule(r, run_.now);
}

void Simulation::try_start(Replica& r) {
  if (r.dp_group >= 0) return start_group_step(cluster_.dp_groups[static_cast<size_t>(r.dp_group)]);
  while (r.inflight < r.layout.pp) {
    if (run_.now < r.stage_free) {
      request_schedule(r, r.stage_free);
      return;
    }
    size_t slot = 0;
    while (slot < r.slots.size() && r.slots[slot].active) ++slot;
    if (slot == r.slots.size()) return;
    Batch& b = r.slots[slot];
    Engine* e = form_next_batch(r, b);
    if (!e) return;
    start_batch(r, *e, b, 0.0);
    // Record which slot this is for the step-end event.
    queue_.push(b.end, kPriority[kStepEnd], kStepEnd, r.index, static_cast<int64_t>(slot));
  }
}

Simulation::Engine* Simulation::form_next_batch(Replica& r, Batch& b) {
  // Round robin without a division per step (next_engine < n): the wrap is a compare.
  const int n = static_cast<int>(r.engines.size());
  int ei = r.next_engine;
  for (int k = 0; k < n; ++k, ei = ei + 1 == n ? 0 : ei + 1) {
    Engine& e = r.engines[static_cast<size_t>(ei)];
    b.reset(ei);
    if (!scheduler_->form(r, e, b)) continue;
    r.next_engine = ei + 1 == n ? 0 : ei + 1;
    return &e;
  }
  return nullptr;
}

void Simulation::start_group_step(DpGroup& g) {
  if (g.inflight > 0) return;  // the step's end schedules every member again
  struct Formed {
    Replica* r;
    Engine* e;
    double t = 0;
    PeakWork work;
  };
  std::vector<Formed> formed;
  int64_t tokens = 0;
  for (int ri : g.members) {
    Replica& r = cluster_.replicas[static_cast<size_t>(ri)];
    Batch& b = r.slots[0];
    Engine* e = form_next_batch(r, b);
    if (!e) continue;
    tokens += b.shape.total_new_tokens();
    formed.push_back(Formed{&r, e, 0.0, PeakWork{}});
  }
  if (formed.empty()) return;
  pricer_.set_group_moe_tokens(tokens);
  double longest = 0;
  for (Formed& f : formed) {
    f.t = pricer_.price_batch(*f.r, *f.e, f.r->slots[0], 0.0, f.work);
    longest = std::max(longest, f.t);
  }
  pricer_.set_group_moe_tokens(0);
  const TimeNs dur = step_clock_ns(longest);
  for (Formed& f : formed) {
    commit_batch(*f.r, f.r->slots[0], f.t, f.work, dur);
    queue_.push(f.r->slots[0].end, kPriority[kStepEnd], kStepEnd, f.r->index, 0);
  }
  g.inflight = static_cast<int>(formed.size());
}

void Simulation::touched(int replica) {
  entry_router_->changed(replica);
  decode_router_->changed(replica);
}

// ---------------------------------------------------------------------------
// Request lifecycle

void Simulation::join_running(Engine& e, Req& q) {
  e.running.push_back(static_cast<int32_t>(&q - reqs_.data()));
  q.kv_counted = static_cast<ReqTokens>(tokens_.private_kv_tokens(q));  // at most its context
  rec_.joins_running(q.kv_counted);
}

void Simulation::leave_running(Engine& e, Req& q) {
  const int32_t id = static_cast<int32_t>(&q - reqs_.data());
  auto it = std::find(e.running.begin(), e.running.end(), id);
  if (it == e.running.end()) return;
  e.running.erase(it);
  rec_.leaves_running(q.kv_counted);
  q.kv_counted = 0;
}

void Simulation::preempt(Engine& e, Req& q, Batch& b) {
  const int32_t id = static_cast<int32_t>(&q - reqs_.data());
  TokenCounts& counts = rec_.counts();
  ++counts.preemptions;
  ++q.preemptions;
  leave_running(e, q);
  e.detach_adapter(spec_.lora, q.spec.adapter);
  double bytes = 0;
  if (spec_.kv.preemption == PreemptionMode::Swap && q.computed > 0 && kv_.swap_out(e.kv, q.kv, q.swapped_blocks, bytes)) {
    ++counts.swaps_out;
    b.swap_bytes += bytes;
    q.state = State::Swapped;
    e.swapped.push_back(id);
    rec_.queued();
    return;
  }
  ++counts.recomputes;
  q.discarded += q.computed;
  counts.discarded += q.computed;
  kv_.release(e.kv, q.kv);
  q.computed = 0;
  q.target = q.spec.prompt + q.generated;
  q.state = State::Queued;
  q.queue_key = e.waiting.push_front(id, q.spec.adapter);
  rec_.queued();
  e.queued_tokens += q.target;
}

// ---------------------------------------------------------------------------
// Disaggregation: KV transfers

void Simulation::admit_transfers(Replica& r, Engine& e) {
  const InterconnectSpec& link = *spec_.cluster.kv_transfer_link;
  while (!e.incoming.empty()) {
    const int32_t id = e.incoming.front();
    Req& q = reqs_[static_cast<size_t>(id)];
    // A request whose KV is in transit already holds one of the max_num_seqs
    // seats (it joins `running` when the transfer lands).
    if (scheduler_->seq_limit().reached(static_cast<int64_t>(e.running.size()) + e.transferring, spec_.scheduler.max_num_seqs)) break;
    if (!kv_.reserve_for_transfer(e.kv, q.kv, q.spec, q.computed + 1 + spec_k_)) break;
    const int32_t src_index = handoffs_[q.handoff].src_replica;
    Replica& src = cluster_.replicas[static_cast<size_t>(src_index)];
    const KvTransfer x = KvHandoffs::transfer(src, q.spec.model, q.computed, link, run_.now);
    q.state = State::Transferring;
    stats_.on_transfer(x.bytes * src.layout.tp * src.layout.pp, static_cast<double>(x.end - run_.now) * 1e-6);
    trace_.on_transfer(id, src_index, r.index, x.start, x.end - x.start);
    queue_.push(x.end, kPriority[kTransferDone], kTransferDone, id);
    e.incoming.pop_front();
    ++e.transferring;
    rec_.dequeued();
  }
}

double Simulation::start_batch(Replica& r, Engine& e, Batch& b, double extra_s) {
  PeakWork work;
  const double t = pricer_.price_batch(r, e, b, extra_s, work);
  commit_batch(r, b, t, work, step_clock_ns(t));
  return t;
}

void Simulation::commit_batch(Replica& r, Batch& b, double t, const PeakWork& work, TimeNs dur) {
  b.start = run_.now;
  b.end = clock_add(run_.now, dur, "/hardware/gpu");
  b.active = true;
  run_.sequence_steps += static_cast<int64_t>(b.items.size());
  r.start_step(run_.now, t, dur, work.compute_gpu_s, work.memory_gpu_s);
  const Utilization u = stats_.on_step(b, work, static_cast<double>(r.layout.tp), to_s(dur));
  trace_.on_step(r, b, dur, u, rec_, cluster_.kv_total, run_.now - run_.first_arrival);
  // A request's first step is a prompt's (a decode or verify follows one, on
  // this replica or, handed off, on its prefill replica), so only prefill
  // items are looked up: the decodes' records stay untouched here. A step
  // with no prompt tokens has none (every prompt chunk is at least a token).
  if (b.prefill_tokens == 0) return;
  for (const StepItem& it : b.items) {
    if (it.kind != ItemKind::Prefill) continue;
    Req& q = reqs_[static_cast<size_t>(it.req)];
    if (q.first_scheduled < 0) q.first_scheduled = run_.now;
  }
}

// ---------------------------------------------------------------------------
// Step completion

void Simulation::finish(Replica& r, Engine& e, Req& q) {
  q.state = State::Done;
  q.completion = run_.now;
  if (q.spec.session >= 0) {
    // The whole context joins the prefix cache (the output's full blocks
    // too: the next turn re-sends them), and the next turn comes.
    kv_.publish_prefix(e.kv, q.kv, q.spec, q.computed);
    arrivals_.next_turn(q, run_.now);
  }
  arrivals_.client_freed(run_.now);
  kv_.release(e.kv, q.kv);
  leave_running(e, q);
  e.detach_adapter(spec_.lora, q.spec.adapter);
  --r.outstanding;
  ++run_.completed;
  run_.last_event = std::max(run_.last_event, run_.now);
  run_.tok_prompt += q.spec.prompt;
}

void Simulation::handoff(Replica& r, Engine& e, Req& q) {
  const int32_t id = static_cast<int32_t>(&q - reqs_.data());
  leave_running(e, q);
  e.detach_adapter(spec_.lora, q.spec.adapter);
  q.handoff = handoffs_.hold(r.index, std::move(q.kv));
  q.kv = KvHold{};
  q.state = State::Handoff;
  --r.outstanding;
  touched(r.index);
  const int di = decode_router_->pick_request(cluster_.decode_replicas, q.spec, loads_);
  Replica& d = cluster_.replicas[static_cast<size_t>(di)];
  ++d.outstanding;
  touched(di);
  q.replica = di;
  d.engines[static_cast<size_t>(q.spec.model)].incoming.push_back(id);
  rec_.queued();
  request_schedule(d, run_.now);
}

int Simulation::on_transfer_done(int32_t id) {
  Req& q = reqs_[static_cast<size_t>(id)];
  HandoffRecord& h = handoffs_[q.handoff];
  const int src_index = h.src_replica;
  Replica& src = cluster_.replicas[static_cast<size_t>(src_index)];
  Engine& se = src.engines[static_cast<size_t>(q.spec.model)];
  kv_.release(se.kv, h.src_kv);
  handoffs_.release(q.handoff);
  q.handoff = -1;
  q.state = State::Running;
  Replica& d = cluster_.replicas[static_cast<size_t>(q.replica)];
  Engine& de = d.engines[static_cast<size_t>(q.spec.model)];
  --de.transferring;
  join_running(de, q);
  attach_adapter(de, q);
  request_schedule(d, run_.now);
  request_schedule(src, run_.now);
  return src_index;
}

void Simulation::on_step_end(int ri, int slot) {
  Replica& r = cluster_.replicas[static_cast<size_t>(ri)];
  Batch& b = r.slots[static_cast<size_t>(slot)];
  Engine& e = r.engines[static_cast<size_t>(b.engine)];
  b.active = false;
  --r.inflight;
  scheduler_->complete(r, e, b);
  if (r.dp_group < 0) return request_schedule(r, run_.now);
  // A lockstep group starts its next step once every member's batch has
  // ended, members without a batch in this one included.
  DpGroup& g = cluster_.dp_groups[static_cast<size_t>(r.dp_group)];
  if (--g.inflight > 0) return;
  for (int m : g.members) request_schedule(cluster_.replicas[static_cast<size_t>(m)], run_.now);
}

}  // namespace sightline::serve
