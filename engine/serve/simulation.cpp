#include "serve/simulation.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "mem/inference_memory.hpp"
#include "model/eagle_head.hpp"
#include "model/mtp.hpp"

namespace sightline::serve {

using namespace sim_event;

Simulation::Simulation(const Scenario& scenario, const WorkloadOverride& override, bool detailed)
    : s_(scenario),
      spec_(*scenario.serving->simulation),
      detailed_(detailed),
      rec_(spec_.kv.block_size),
      kv_(spec_.kv, spec_.speculative.method != SpecMethod::None ? spec_.speculative.k : 0),
      series_(spec_.outputs.time_series_points) {
  block_size_ = spec_.kv.block_size;
  if (spec_.slo.enabled && spec_.slo.itl_ms > 0) itl_bound_ns_ = static_cast<TimeNs>(std::llround(spec_.slo.itl_ms * 1e6));
  spec_k_ = spec_.speculative.method != SpecMethod::None ? spec_.speculative.k : 0;
  const RouterOptions router_options{spec_.cluster.router_load_bound};
  entry_router_ = make_router(to_string(spec_.cluster.router), "/serving/cluster/router", router_options);
  decode_router_ = make_router(to_string(spec_.cluster.router), "/serving/cluster/router", router_options);
  scheduler_ = make_batch_scheduler(to_string(spec_.scheduler.policy), "/serving/scheduler/policy", spec_, reqs_, kv_,
                                    rec_, *this);
  accept_rng_ = Rng(stream_seed(override.seed.value_or(s_.seed), "acceptance"));
  const double runtime = s_.serving->runtime_overhead_GiB;

  auto add_cost = [&](const PoolSpec& pool, const GpuSpec& gpu, const ModelArch& model, ParallelLayout layout,
                      bool draft) {
    CostEntry c;
    c.scenario = std::make_unique<Scenario>(s_);
    c.scenario->hardware.gpu = gpu;
    if (pool.intra_node) c.scenario->hardware.intra_node = pool.intra_node;
    c.scenario->model = model;
    c.scenario->serving->parallelism = layout;
    c.setup = make_cost_setup(c.scenario->cost_model, c.scenario->hardware);
    c.model = &c.scenario->model;
    c.layer_groups = c.model->layer_groups();
    c.layout = layout;
    c.draft = draft;
    costs_.push_back(std::move(c));
    return static_cast<int>(costs_.size()) - 1;
  };

  for (size_t pi = 0; pi < spec_.cluster.pools.size(); ++pi) {
    const PoolSpec& p = spec_.cluster.pools[pi];
    const GpuSpec& gpu = p.gpu ? *p.gpu : s_.hardware.gpu;
    const ReplicaMemoryPlan plan = plan_replica_memory(s_.model, s_.precision, p.layout, gpu, runtime, spec_);
    pool_memory_.push_back(plan);
    std::vector<int> model_costs;
    model_costs.push_back(add_cost(p, gpu, s_.model, p.layout, false));
    if (spec_.colocated.enabled) model_costs.push_back(add_cost(p, gpu, *spec_.colocated.model, p.layout, false));
    int draft_cost = -1;
    if (spec_.speculative.method == SpecMethod::Draft)
      draft_cost = add_cost(p, gpu, *spec_.speculative.draft_model, ParallelLayout{spec_.speculative.draft_tp, 1}, true);
    else if (spec_.speculative.method == SpecMethod::Mtp)
      // The MTP module runs on the target's tensor-parallel group (on the last
      // pipeline stage, next to the LM head it shares).
      draft_cost = add_cost(p, gpu, mtp_draft_arch(s_.model), ParallelLayout{p.layout.tp, 1}, true);
    else if (spec_.speculative.method == SpecMethod::Eagle3)
      // The EAGLE-3 head runs on the target's tensor-parallel group, one pass per drafted token.
      draft_cost = add_cost(p, gpu, eagle3_head_arch(s_.model), ParallelLayout{p.layout.tp, 1}, true);
    if (pi == 0 && spec_.lora.enabled) {
      lora_load_time_s_ = spec_.lora.load_time_ms >= 0
                              ? spec_.lora.load_time_ms * 1e-3
                              : lora_adapter_bytes_per_gpu(s_.model, s_.precision, p.layout, spec_.lora.rank,
                                                           spec_.lora.targets == LoraTargets::AllLinear) /
                                    (gpu.pcie_bandwidth_GBps * 1e9);
    }
    // Wide EP's attention data-parallel ranks step in lockstep, in groups of
    // attention_data_parallel consecutive replicas (the reader checks that it
    // divides the pool). Pipelined replicas keep their own stage clocks.
    const int dp = spec_.moe.attention_data_parallel;
    const bool lockstep = dp > 1 && s_.model.is_moe() && p.layout.pp == 1;
    for (int i = 0; i < p.replicas; ++i) {
      Replica r;
      r.index = static_cast<int>(replicas_.size());
      r.pool = static_cast<int>(pi);
      if (lockstep) {
        if (i % dp == 0) dp_groups_.emplace_back();
        r.dp_group = static_cast<int>(dp_groups_.size()) - 1;
        dp_groups_.back().members.push_back(r.index);
      }
      r.role = p.role;
      r.layout = p.layout;
      r.gpu = &costs_[static_cast<size_t>(model_costs[0])].scenario->hardware.gpu;
      r.draft_cost = draft_cost;
      r.slots.resize(static_cast<size_t>(p.layout.pp));
      for (size_t m = 0; m < plan.engines.size(); ++m) {
        Engine e;
        e.model = static_cast<int>(m);
        e.kv = kv_.make_space(plan.engines[m].blocks, plan.engines[m].kv_bytes_per_token, plan.engines[m].windowed,
                              rec_.block_usage(), static_cast<int>(m), p.layout.tp * p.layout.pp);
        e.cost = model_costs[m];
        if (spec_.lora.enabled) {
          e.adapter_refs.assign(static_cast<size_t>(spec_.lora.adapters), 0);
          e.last_used.assign(static_cast<size_t>(spec_.lora.adapters), -1);
          e.in_batch_mark.assign(static_cast<size_t>(spec_.lora.adapters), 0);
          e.waiting.index_by_class(true);
        }
        kv_total_ += e.kv.pool.total();
        r.engines.push_back(std::move(e));
      }
      (r.role == PoolRole::Decode ? decode_replicas_ : entry_replicas_).push_back(r.index);
      replicas_.push_back(std::move(r));
    }
  }

  workload_info_ = generate_workload(spec_, override.seed.value_or(s_.seed), override);
  reqs_.resize(workload_info_.requests.size());
  for (size_t i = 0; i < reqs_.size(); ++i) reqs_[i].spec = workload_info_.requests[i];
  // Sessions: only first turns arrive on their own (a later turn follows its
  // previous turn's last token, session_turn_done).
  arrival_order_ = spec_.workload.sessions.enabled ? first_turns(workload_info_.requests)
                                                   : arrival_order(workload_info_.requests);
  workload_info_.requests = {};  // the copies in reqs_ are the ones used: free the memory
  enqueue_next_arrival();
  arrivals_pending_ = static_cast<int64_t>(reqs_.size());
  first_arrival_ = reqs_.empty() ? 0 : reqs_.front().spec.arrival;
  for (const auto& q : reqs_) first_arrival_ = std::min(first_arrival_, q.spec.arrival);
  rec_.start(first_arrival_);
  now_ = first_arrival_;
  if (reqs_.empty()) finished_ = true;
  prepare_routing();
}

Simulation::~Simulation() = default;

void Simulation::enqueue_next_arrival() {
  if (next_arrival_ >= (arrival_order_.empty() ? reqs_.size() : arrival_order_.size())) return;
  const size_t id = arrival_order_.empty() ? next_arrival_ : static_cast<size_t>(arrival_order_[next_arrival_]);
  ++next_arrival_;
  queue_.push(reqs_[id].spec.arrival, kPriority[kArrival], kArrival, static_cast<int64_t>(id));
}

// ---------------------------------------------------------------------------
// Event loop

bool Simulation::run(int64_t max_events) {
  if (finished_) return true;
  int64_t n = 0;
  while (n < max_events && !queue_.empty()) {
    if (events_ >= spec_.limits.max_events) {
      limit_hit_ = "max_events";
      break;
    }
    if (to_s(queue_.top().time) > spec_.limits.max_sim_time_s) {
      limit_hit_ = "max_sim_time_s";
      break;
    }
    const Event ev = queue_.pop();
    if (ev.time < now_) fail(error_code::kInternal, "", "serving simulator: the clock went backwards");
    rec_.advance(ev.time);
    now_ = ev.time;
    // Every change to a replica's loads happens in an event of that replica
    // (or, for a handoff, right where it happens): the routers hear of each.
    switch (ev.kind) {
      case kArrival: {
        enqueue_next_arrival();
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
        Replica& r = replicas_[static_cast<size_t>(ev.a)];
        if (r.sched_pending && r.sched_at == ev.time) r.sched_pending = false;
        try_start(r);
        touched(r.index);
        break;
      }
      default: break;
    }
    ++events_;
    ++n;
  }
  if (queue_.empty() || !limit_hit_.empty()) {
    finished_ = true;
    rec_.advance(now_);
  }
  return finished_;
}

double Simulation::progress() const {
  if (finished_ || reqs_.empty()) return 1.0;
  const double p = static_cast<double>(completed_ + dropped_) / static_cast<double>(reqs_.size());
  return std::min(p, 0.999);
}

void Simulation::request_schedule(Replica& r, TimeNs t) {
  if (r.sched_pending && r.sched_at <= t) return;
  r.sched_pending = true;
  r.sched_at = t;
  queue_.push(t, kPriority[kSchedule], kSchedule, r.index);
}

void Simulation::drop(Req& q, const char* reason) {
  q.state = State::Dropped;
  q.drop_reason = reason;
  ++dropped_;
  if (q.spec.session >= 0) end_session(q);
}

void Simulation::on_arrival(int32_t id) {
  Req& q = reqs_[static_cast<size_t>(id)];
  --arrivals_pending_;
  q.state = State::Queued;
  q.target = q.spec.prompt;
  const int ri = entry_router_->pick_request(entry_replicas_, q.spec, *this);
  Replica& r = replicas_[static_cast<size_t>(ri)];
  Engine& e = r.engines[static_cast<size_t>(q.spec.model)];
  const bool contiguous = spec_.kv.allocation == KvAllocation::Contiguous;
  const bool is_static = spec_.scheduler.policy == SchedulerPolicy::Static;
  auto fits = [&](const Engine& eng) {
    if (contiguous) return eng.kv.reserve_blocks <= eng.kv.pool.total();
    const int64_t need = kv_.blocks_for(eng.kv, q.spec.prompt + q.spec.output + spec_k_);
    return need + (is_static ? 0 : eng.kv.watermark_blocks) <= eng.kv.pool.total();
  };
  if (!fits(e)) return drop(q, "needs more KV blocks than a replica has");
  if (!decode_replicas_.empty() &&
      !fits(replicas_[static_cast<size_t>(decode_replicas_.front())].engines[static_cast<size_t>(q.spec.model)]))
    return drop(q, "needs more KV blocks than a decode replica has");
  if (spec_.scheduler.policy == SchedulerPolicy::Continuous && q.spec.prompt > spec_.scheduler.max_num_batched_tokens)
    return drop(q, "prompt longer than max_num_batched_tokens (use chunked_prefill)");
  q.replica = ri;
  q.queue_key = e.waiting.push_back(id, q.spec.adapter);
  rec_.queued();
  e.queued_tokens += q.target;
  ++r.outstanding;
  request_schedule(r, now_);
}

void Simulation::try_start(Replica& r) {
  if (r.dp_group >= 0) return start_group_step(dp_groups_[static_cast<size_t>(r.dp_group)]);
  while (r.inflight < r.layout.pp) {
    if (now_ < r.stage_free) {
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
  const int n = static_cast<int>(r.engines.size());
  for (int k = 0; k < n; ++k) {
    const int ei = (r.next_engine + k) % n;
    Engine& e = r.engines[static_cast<size_t>(ei)];
    b.reset(ei);
    if (!scheduler_->form(r, e, b)) continue;
    r.next_engine = (ei + 1) % n;
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
    Replica& r = replicas_[static_cast<size_t>(ri)];
    Batch& b = r.slots[0];
    Engine* e = form_next_batch(r, b);
    if (!e) continue;
    fill_shape(b);
    tokens += b.shape.total_new_tokens();
    formed.push_back(Formed{&r, e, 0.0, PeakWork{}});
  }
  if (formed.empty()) return;
  group_moe_tokens_ = tokens;
  double longest = 0;
  for (Formed& f : formed) {
    f.t = price_batch(*f.r, *f.e, f.r->slots[0], 0.0, f.work);
    longest = std::max(longest, f.t);
  }
  group_moe_tokens_ = 0;
  const TimeNs dur = step_ns(longest);
  for (Formed& f : formed) {
    commit_batch(*f.r, f.r->slots[0], f.t, f.work, dur);
    queue_.push(f.r->slots[0].end, kPriority[kStepEnd], kStepEnd, f.r->index, 0);
  }
  g.inflight = static_cast<int>(formed.size());
}

int64_t Simulation::scheduler_queue_reads() const { return scheduler_->queue_entries_read(); }

void Simulation::touched(int replica) {
  entry_router_->changed(replica);
  decode_router_->changed(replica);
}

double Simulation::kv_load(int replica, int model) const {
  ++router_load_reads_;
  const Engine& e = replicas_[static_cast<size_t>(replica)].engines[static_cast<size_t>(model)];
  return static_cast<double>(e.kv.pool.used() + kv_.blocks_for(e.kv, e.queued_tokens)) /
         static_cast<double>(std::max<int64_t>(1, e.kv.pool.total()));
}

// ---------------------------------------------------------------------------
// Request lifecycle

void Simulation::join_running(Engine& e, Req& q) {
  e.running.push_back(static_cast<int32_t>(&q - reqs_.data()));
  q.kv_counted = private_kv_tokens(q);
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

void Simulation::computed(Req& q) {
  const int64_t now = private_kv_tokens(q);
  rec_.computes(now - q.kv_counted);
  q.kv_counted = now;
}

void Simulation::preempt(Engine& e, Req& q, Batch& b) {
  const int32_t id = static_cast<int32_t>(&q - reqs_.data());
  TokenCounts& counts = rec_.counts();
  ++counts.preemptions;
  ++q.preemptions;
  leave_running(e, q);
  detach_adapter(e, q);
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
// LoRA adapters

bool Simulation::adapter_fits(const Engine& e, const Req& q) const {
  if (!spec_.lora.enabled || q.spec.adapter < 0) return true;
  return e.adapter_refs[static_cast<size_t>(q.spec.adapter)] > 0 || e.distinct_adapters < spec_.lora.max_adapters_per_batch;
}

void Simulation::attach_adapter(Engine& e, const Req& q) {
  if (!spec_.lora.enabled || q.spec.adapter < 0) return;
  if (e.adapter_refs[static_cast<size_t>(q.spec.adapter)]++ == 0) ++e.distinct_adapters;
}

void Simulation::detach_adapter(Engine& e, const Req& q) {
  if (!spec_.lora.enabled || q.spec.adapter < 0) return;
  if (--e.adapter_refs[static_cast<size_t>(q.spec.adapter)] == 0) --e.distinct_adapters;
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
    if (static_cast<int64_t>(e.running.size()) + e.transferring >= spec_.scheduler.max_num_seqs) break;
    if (!kv_.reserve_for_transfer(e.kv, q.kv, q.computed + 1 + spec_k_)) break;
    const int32_t src_index = handoffs_[static_cast<size_t>(q.handoff)].src_replica;
    Replica& src = replicas_[static_cast<size_t>(src_index)];
    const double bytes = static_cast<double>(q.computed) * src.engines[static_cast<size_t>(q.spec.model)].kv.kv_bytes_per_token;
    const double secs = link.latency_us * 1e-6 + bytes / (link.bandwidth_per_gpu_GBps * 1e9);
    const TimeNs start = std::max(now_, src.link_free);
    const TimeNs end = clock_add(start, std::max<TimeNs>(1, to_ns(secs, "/hardware", "a KV transfer")), "/hardware");
    src.link_free = end;
    q.state = State::Transferring;
    ++transfers_;
    transfer_bytes_ += bytes * src.layout.tp * src.layout.pp;
    transfer_ms_.push_back(static_cast<double>(end - now_) * 1e-6);
    if (detailed_ && spec_.outputs.trace) {
      if (static_cast<int64_t>(trace_transfers_.size()) < spec_.outputs.trace_max_steps)
        trace_transfers_.push_back(TraceTransfer{id, src_index, r.index, start, end - start});
      else
        trace_truncated_ = true;
    }
    queue_.push(end, kPriority[kTransferDone], kTransferDone, id);
    e.incoming.pop_front();
    ++e.transferring;
    rec_.dequeued();
  }
}

void Simulation::fill_shape(Batch& b) const {
  if (!scheduler_->prices_items()) return;
  b.shape.seqs.clear();
  for (const Item& it : b.items) b.shape.seqs.push_back(SeqChunk{it.new_tokens, it.cached});
}

TimeNs Simulation::step_ns(double t) const {
  // A step the clock cannot hold comes from the hardware's rates (a GPU with a
  // tiny peak or bandwidth): refused there, never wrapped into a tiny time.
  return std::max<TimeNs>(1, to_ns(t, "/hardware/gpu",
                                   "one step of the model on this GPU (check its peak_tflops and "
                                   "hbm_bandwidth_GBps)"));
}

double Simulation::start_batch(Replica& r, Engine& e, Batch& b, double extra_s) {
  fill_shape(b);
  PeakWork work;
  const double t = price_batch(r, e, b, extra_s, work);
  commit_batch(r, b, t, work, step_ns(t));
  return t;
}

double Simulation::price_batch(Replica& r, Engine& e, Batch& b, double extra_s, PeakWork& work) {
  // Distinct adapters in the batch, and adapter loads into the GPU slots.
  int adapters = 0;
  int loads = 0;
  if (spec_.lora.enabled) {
    // Distinct adapters in batch order, marked with this step's stamp; the GPU's
    // adapter slots are an LRU (last-use stamp per adapter, ordered by it), so a
    // step costs O(items + distinct x log slots), not a scan of the slots per item.
    const int64_t step_mark = ++e.lora_clock;
    std::vector<int32_t> in_batch;
    for (const Item& it : b.items) {
      const int32_t a = reqs_[static_cast<size_t>(it.req)].spec.adapter;
      if (a < 0 || e.in_batch_mark[static_cast<size_t>(a)] == step_mark) continue;
      e.in_batch_mark[static_cast<size_t>(a)] = step_mark;
      in_batch.push_back(a);
    }
    adapters = static_cast<int>(in_batch.size());
    for (int32_t a : in_batch) {
      int64_t& used = e.last_used[static_cast<size_t>(a)];
      if (used >= 0) {  // resident: now the most recently used
        e.resident.erase({used, a});
        used = ++e.lora_clock;
        e.resident.insert({used, a});
        continue;
      }
      ++loads;
      if (static_cast<int>(e.resident.size()) >= spec_.lora.max_adapters_per_batch) {
        // Evict the least recently used adapter that this step does not use.
        for (auto jt = e.resident.begin(); jt != e.resident.end(); ++jt) {
          if (e.in_batch_mark[static_cast<size_t>(jt->second)] != step_mark) {
            e.last_used[static_cast<size_t>(jt->second)] = -1;
            e.resident.erase(jt);
            break;
          }
        }
      }
      used = ++e.lora_clock;
      e.resident.insert({used, a});
    }
  }
  double t = price(e.cost, b.shape, adapters, true, &work);
  bool has_decode = false;
  for (const Item& it : b.items) has_decode = has_decode || it.kind == ItemKind::Verify;
  if (spec_k_ > 0 && r.draft_cost >= 0) {
    // The draft model sees every sequence of the step once (prompt chunks
    // included), then proposes k - 1 further tokens for the decoding ones.
    BatchShape first;
    BatchShape more;
    for (const Item& it : b.items) {
      if (it.kind == ItemKind::Verify) {
        first.seqs.push_back(SeqChunk{1, it.cached});
        more.seqs.push_back(SeqChunk{1, it.cached});
      } else {
        first.seqs.push_back(SeqChunk{it.new_tokens, it.cached});
      }
    }
    t += price(r.draft_cost, first, 0, true, &work);
    for (int i = 1; i < spec_k_ && !more.seqs.empty(); ++i) {
      for (auto& sq : more.seqs) sq.cached_tokens += 1;
      t += price(r.draft_cost, more, 0, true, &work);
    }
  } else if (spec_k_ > 0 && has_decode) {
    const double lookup = spec_k_ * spec_.speculative.ngram_lookup_us * 1e-6;
    draft_s_ += lookup;
    t += lookup;
  }
  if (b.reload_s > 0) t = with_reload(t, b.reload_s);
  if (b.swap_bytes > 0) {
    const double sw = b.swap_bytes / (r.gpu->pcie_bandwidth_GBps * 1e9);
    swap_s_ += sw;
    t += sw;
  }
  if (loads > 0) {
    adapter_loads_ += loads;
    lora_load_s_ += loads * lora_load_time_s_;
    t += loads * lora_load_time_s_;
  }
  const double cpu = spec_.scheduler.cpu_overhead_us * 1e-6;
  cpu_s_ += cpu;
  t += cpu + extra_s;
  return t;
}

void Simulation::commit_batch(Replica& r, Batch& b, double t, const PeakWork& work, TimeNs dur) {
  b.start = now_;
  b.end = clock_add(now_, dur, "/hardware/gpu");
  b.active = true;
  ++r.inflight;
  r.stage_free = now_ + std::max<TimeNs>(1, dur / r.layout.pp);
  r.busy_s += t / r.layout.pp;
  r.step_s += t;
  // Achieved utilization over the whole step (host and scheduler time, swaps
  // and adapter loads included: they use the GPU's time, not its peaks), and
  // the energy of each GPU of the replica: its tp rank's share of the work, of
  // which its pipeline stage runs 1/pp in 1/pp of the step. The time a GPU
  // waits between steps is charged idle power in metrics(). The step's time is
  // the clock's (whole ns): the priced seconds can differ in the last bit
  // between native and wasm libm, the rounded clock does not.
  {
    const double tp = static_cast<double>(r.layout.tp), pp = static_cast<double>(r.layout.pp);
    const double step_s = to_s(dur);
    const double compute_s = work.compute_gpu_s / tp, memory_s = work.memory_gpu_s / tp;
    const Utilization u = utilization(compute_s, memory_s, step_s);
    step_mfu_.add(u.compute);
    step_mbu_.add(u.memory);
    compute_peak_gpu_s_ += work.compute_gpu_s;
    memory_peak_gpu_s_ += work.memory_gpu_s;
    busy_gpu_s_ += tp * step_s;  // tp x pp GPUs, each busy step_s / pp
    r.busy_clock_s += step_s / pp;
    r.busy_energy_J += tp * pp * busy_energy_J(*r.gpu, compute_s / pp, memory_s / pp, step_s / pp);
    if (detailed_) sample_series(b, u);
  }
  ++r.steps;
  ++steps_;
  sum_batch_ += static_cast<double>(b.items.size());
  sum_tokens_ += static_cast<double>(b.prefill_tokens + b.decode_tokens);
  for (const Item& it : b.items) {
    Req& q = reqs_[static_cast<size_t>(it.req)];
    if (q.first_scheduled < 0) q.first_scheduled = now_;
  }
  if (detailed_) {
    if (spec_.outputs.trace) {
      if (static_cast<int64_t>(trace_.size()) < spec_.outputs.trace_max_steps)
        trace_.push_back(TraceStep{r.index, b.engine, b.start, dur, static_cast<int32_t>(b.items.size()), b.prefill_tokens,
                                   b.decode_tokens});
      else
        trace_truncated_ = true;
    }
  }
}

void Simulation::sample_series(const Batch& b, const Utilization& u) {
  SeriesSample s;
  s.mfu = u.compute;
  s.mbu = u.memory;
  const int64_t used = rec_.kv_blocks_used();
  s.running = static_cast<double>(rec_.running());
  s.waiting = static_cast<double>(rec_.waiting());
  s.batch_size = static_cast<double>(b.items.size());
  s.tokens = static_cast<double>(b.prefill_tokens + b.decode_tokens);
  s.kv_blocks_used = static_cast<double>(used);
  s.kv_utilization = kv_total_ > 0 ? static_cast<double>(used) / static_cast<double>(kv_total_) : 0;
  series_.add(now_ - first_arrival_, s);
  rec_.note_sample();
}

// ---------------------------------------------------------------------------
// Step completion

void Simulation::emit_tokens(Req& q, int64_t n) {
  if (q.generated == 0) q.first_token = now_;
  else {
    itl_.add(now_ - q.last_token);
    ++q.gaps;
    if (itl_bound_ns_ > 0 && now_ - q.last_token > itl_bound_ns_) ++q.gaps_over_itl;
  }
  q.last_token = now_;
  q.generated += n;
}

void Simulation::finish(Replica& r, Engine& e, Req& q) {
  q.state = State::Done;
  q.completion = now_;
  if (q.spec.session >= 0) session_turn_done(e, q);
  kv_.release(e.kv, q.kv);
  leave_running(e, q);
  detach_adapter(e, q);
  --r.outstanding;
  ++completed_;
  last_event_ = std::max(last_event_, now_);
  tok_prompt_ += q.spec.prompt;
  tok_output_ += q.spec.output;
}

void Simulation::handoff(Replica& r, Engine& e, Req& q) {
  const int32_t id = static_cast<int32_t>(&q - reqs_.data());
  leave_running(e, q);
  detach_adapter(e, q);
  if (free_handoffs_.empty()) {
    q.handoff = static_cast<int32_t>(handoffs_.size());
    handoffs_.emplace_back();
  } else {
    q.handoff = free_handoffs_.back();
    free_handoffs_.pop_back();
  }
  HandoffRecord& h = handoffs_[static_cast<size_t>(q.handoff)];
  h.src_replica = r.index;
  h.src_kv = std::move(q.kv);
  q.kv = KvHold{};
  q.state = State::Handoff;
  --r.outstanding;
  touched(r.index);
  const int di = decode_router_->pick_request(decode_replicas_, q.spec, *this);
  Replica& d = replicas_[static_cast<size_t>(di)];
  ++d.outstanding;
  touched(di);
  q.replica = di;
  d.engines[static_cast<size_t>(q.spec.model)].incoming.push_back(id);
  rec_.queued();
  request_schedule(d, now_);
}

int Simulation::on_transfer_done(int32_t id) {
  Req& q = reqs_[static_cast<size_t>(id)];
  HandoffRecord& h = handoffs_[static_cast<size_t>(q.handoff)];
  const int src_index = h.src_replica;
  Replica& src = replicas_[static_cast<size_t>(src_index)];
  Engine& se = src.engines[static_cast<size_t>(q.spec.model)];
  kv_.release(se.kv, h.src_kv);
  free_handoffs_.push_back(q.handoff);
  q.handoff = -1;
  q.state = State::Running;
  Replica& d = replicas_[static_cast<size_t>(q.replica)];
  Engine& de = d.engines[static_cast<size_t>(q.spec.model)];
  --de.transferring;
  join_running(de, q);
  attach_adapter(de, q);
  request_schedule(d, now_);
  request_schedule(src, now_);
  return src_index;
}

void Simulation::on_step_end(int ri, int slot) {
  Replica& r = replicas_[static_cast<size_t>(ri)];
  Batch& b = r.slots[static_cast<size_t>(slot)];
  Engine& e = r.engines[static_cast<size_t>(b.engine)];
  b.active = false;
  --r.inflight;
  scheduler_->complete(r, e, b);
  if (r.dp_group < 0) return request_schedule(r, now_);
  // A lockstep group starts its next step once every member's batch has
  // ended, members without a batch in this one included.
  DpGroup& g = dp_groups_[static_cast<size_t>(r.dp_group)];
  if (--g.inflight > 0) return;
  for (int m : g.members) request_schedule(replicas_[static_cast<size_t>(m)], now_);
}

}  // namespace sightline::serve
