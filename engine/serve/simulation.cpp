#include "serve/simulation.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "mem/inference_memory.hpp"

namespace sightline::serve {

namespace {

// Event kinds and their priorities at equal time: a finishing step frees
// resources first, then finished KV transfers, then arrivals; scheduling runs
// last so it sees everything that happened at that instant.
enum EventKind { kStepEnd = 0, kTransferDone = 1, kArrival = 2, kSchedule = 3 };
constexpr int kPriority[] = {0, 1, 2, 3};

constexpr int kFamilies = 11;  // OpFamily values

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

Simulation::Simulation(const Scenario& scenario, const WorkloadOverride& override, bool detailed)
    : s_(scenario),
      spec_(*scenario.serving->simulation),
      detailed_(detailed),
      rec_(spec_.kv.block_size),
      series_(spec_.outputs.time_series_points) {
  block_size_ = spec_.kv.block_size;
  spec_k_ = spec_.speculative.method != SpecMethod::None ? spec_.speculative.k : 0;
  reserve_blocks_ = blocks_for(spec_.kv.max_model_len + spec_k_);
  accept_rng_ = Rng(stream_seed(s_.seed, "acceptance"));
  const double runtime = s_.serving->runtime_overhead_GiB;

  auto add_cost = [&](const GpuSpec& gpu, const ModelArch& model, ParallelLayout layout, bool draft) {
    CostEntry c;
    c.scenario = std::make_unique<Scenario>(s_);
    c.scenario->hardware.gpu = gpu;
    c.scenario->model = model;
    c.scenario->serving->parallelism = layout;
    c.setup = make_cost_setup(*c.scenario);
    c.model = &c.scenario->model;
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
    model_costs.push_back(add_cost(gpu, s_.model, p.layout, false));
    if (spec_.colocated.enabled) model_costs.push_back(add_cost(gpu, *spec_.colocated.model, p.layout, false));
    int draft_cost = -1;
    if (spec_.speculative.method == SpecMethod::Draft)
      draft_cost = add_cost(gpu, *spec_.speculative.draft_model, ParallelLayout{spec_.speculative.draft_tp, 1}, true);
    if (pi == 0 && spec_.lora.enabled) {
      lora_load_time_s_ = spec_.lora.load_time_ms >= 0
                              ? spec_.lora.load_time_ms * 1e-3
                              : lora_adapter_bytes_per_gpu(s_.model, s_.precision, p.layout, spec_.lora.rank,
                                                           spec_.lora.targets == LoraTargets::AllLinear) /
                                    (gpu.pcie_bandwidth_GBps * 1e9);
    }
    for (int i = 0; i < p.replicas; ++i) {
      Replica r;
      r.index = static_cast<int>(replicas_.size());
      r.pool = static_cast<int>(pi);
      r.role = p.role;
      r.layout = p.layout;
      r.gpu = &costs_[static_cast<size_t>(model_costs[0])].scenario->hardware.gpu;
      r.draft_cost = draft_cost;
      r.slots.resize(static_cast<size_t>(p.layout.pp));
      for (size_t m = 0; m < plan.engines.size(); ++m) {
        Engine e;
        e.model = static_cast<int>(m);
        e.pool = BlockPool(plan.engines[m].blocks);
        e.pool.report_to(rec_.block_usage());
        e.watermark_blocks = static_cast<int64_t>(std::floor(spec_.kv.watermark * static_cast<double>(plan.engines[m].blocks)));
        e.kv_bytes_per_token = plan.engines[m].kv_bytes_per_token;
        const double block_bytes = e.kv_bytes_per_token * static_cast<double>(block_size_);
        e.host_blocks_free = block_bytes > 0 ? static_cast<int64_t>(std::floor(spec_.kv.swap_space_GiB * kBytesPerGiB / block_bytes)) : 0;
        e.cost = model_costs[m];
        if (spec_.lora.enabled) e.adapter_refs.assign(static_cast<size_t>(spec_.lora.adapters), 0);
        kv_total_ += e.pool.total();
        r.engines.push_back(std::move(e));
      }
      (r.role == PoolRole::Decode ? decode_replicas_ : entry_replicas_).push_back(r.index);
      replicas_.push_back(std::move(r));
    }
  }

  workload_info_ = generate_workload(spec_, s_.seed, override);
  reqs_.resize(workload_info_.requests.size());
  for (size_t i = 0; i < reqs_.size(); ++i) {
    reqs_[i].spec = workload_info_.requests[i];
    queue_.push(reqs_[i].spec.arrival, kPriority[kArrival], kArrival, static_cast<int64_t>(i));
  }
  arrivals_pending_ = static_cast<int64_t>(reqs_.size());
  first_arrival_ = reqs_.empty() ? 0 : reqs_.front().spec.arrival;
  for (const auto& q : reqs_) first_arrival_ = std::min(first_arrival_, q.spec.arrival);
  rec_.start(first_arrival_);
  now_ = first_arrival_;
  if (reqs_.empty()) finished_ = true;
}

Simulation::~Simulation() = default;

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
    switch (ev.kind) {
      case kArrival: on_arrival(static_cast<int32_t>(ev.a)); break;
      case kStepEnd: on_step_end(static_cast<int>(ev.a), static_cast<int>(ev.b)); break;
      case kTransferDone: on_transfer_done(static_cast<int32_t>(ev.a)); break;
      case kSchedule: {
        Replica& r = replicas_[static_cast<size_t>(ev.a)];
        if (r.sched_pending && r.sched_at == ev.time) r.sched_pending = false;
        try_start(r);
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

int Simulation::route(const std::vector<int>& cands, const Req& q, int64_t& rr) {
  switch (spec_.cluster.router) {
    case RouterKind::RoundRobin: {
      const int r = cands[static_cast<size_t>(rr % static_cast<int64_t>(cands.size()))];
      ++rr;
      return r;
    }
    case RouterKind::LeastOutstanding: {
      int best = cands.front();
      for (int c : cands)
        if (replicas_[static_cast<size_t>(c)].outstanding < replicas_[static_cast<size_t>(best)].outstanding) best = c;
      return best;
    }
    case RouterKind::LeastKvLoad: {
      int best = cands.front();
      double best_load = 1e300;
      for (int c : cands) {
        const Engine& e = replicas_[static_cast<size_t>(c)].engines[static_cast<size_t>(q.spec.model)];
        const double load = static_cast<double>(e.pool.used() + blocks_for(e.queued_tokens)) /
                            static_cast<double>(std::max<int64_t>(1, e.pool.total()));
        if (load < best_load) {
          best_load = load;
          best = c;
        }
      }
      return best;
    }
  }
  return cands.front();
}

void Simulation::drop(Req& q, const char* reason) {
  q.state = State::Dropped;
  q.drop_reason = reason;
  ++dropped_;
}

void Simulation::on_arrival(int32_t id) {
  Req& q = reqs_[static_cast<size_t>(id)];
  --arrivals_pending_;
  q.state = State::Queued;
  q.target = q.spec.prompt;
  const int ri = route(entry_replicas_, q, rr_next_);
  Replica& r = replicas_[static_cast<size_t>(ri)];
  Engine& e = r.engines[static_cast<size_t>(q.spec.model)];
  const bool contiguous = spec_.kv.allocation == KvAllocation::Contiguous;
  const bool is_static = spec_.scheduler.policy == SchedulerPolicy::Static;
  auto fits = [&](const Engine& eng) {
    if (contiguous) return reserve_blocks_ <= eng.pool.total();
    const int64_t need = blocks_for(q.spec.prompt + q.spec.output + spec_k_);
    return need + (is_static ? 0 : eng.watermark_blocks) <= eng.pool.total();
  };
  if (!fits(e)) return drop(q, "needs more KV blocks than a replica has");
  if (!decode_replicas_.empty() &&
      !fits(replicas_[static_cast<size_t>(decode_replicas_.front())].engines[static_cast<size_t>(q.spec.model)]))
    return drop(q, "needs more KV blocks than a decode replica has");
  if (spec_.scheduler.policy == SchedulerPolicy::Continuous && q.spec.prompt > spec_.scheduler.max_num_batched_tokens)
    return drop(q, "prompt longer than max_num_batched_tokens (use chunked_prefill)");
  q.replica = ri;
  e.waiting.push_back(id);
  rec_.queued();
  e.queued_tokens += q.target;
  ++r.outstanding;
  request_schedule(r, now_);
}

void Simulation::try_start(Replica& r) {
  while (r.inflight < r.layout.pp) {
    if (now_ < r.stage_free) {
      request_schedule(r, r.stage_free);
      return;
    }
    size_t slot = 0;
    while (slot < r.slots.size() && r.slots[slot].active) ++slot;
    if (slot == r.slots.size()) return;
    Batch& b = r.slots[slot];
    bool started = false;
    const int n = static_cast<int>(r.engines.size());
    for (int k = 0; k < n && !started; ++k) {
      const int ei = (r.next_engine + k) % n;
      Engine& e = r.engines[static_cast<size_t>(ei)];
      b.engine = ei;
      if (form_batch(r, e, b)) {
        start_batch(r, e, b, 0.0);
        // Record which slot this is for the step-end event.
        queue_.push(b.end, kPriority[kStepEnd], kStepEnd, r.index, static_cast<int64_t>(slot));
        r.next_engine = (ei + 1) % n;
        started = true;
      }
    }
    if (!started) return;
  }
}

// ---------------------------------------------------------------------------
// KV blocks

uint64_t Simulation::prefix_key(const Req& q, int64_t block) const {
  // Exact packing (no hashing collisions): model 2 bits, adapter 18, group 20, block 24.
  const uint64_t model = static_cast<uint64_t>(q.spec.model) & 0x3;
  const uint64_t adapter = static_cast<uint64_t>(q.spec.adapter + 1) & 0x3FFFF;
  const uint64_t group = static_cast<uint64_t>(q.spec.prefix_group) & 0xFFFFF;
  const uint64_t blk = static_cast<uint64_t>(block) & 0xFFFFFF;
  return (model << 62) | (adapter << 44) | (group << 24) | blk;
}

bool Simulation::ensure_blocks(Engine& e, Req& q, int64_t tokens_after) {
  if (spec_.kv.allocation == KvAllocation::Contiguous) return true;  // reserved on admission
  const int64_t need = blocks_for(tokens_after) - held_blocks(q);
  if (need <= 0) return true;
  if (!e.pool.take(need)) return false;
  q.private_blocks += need;
  return true;
}

void Simulation::release_blocks(Engine& e, Req& q) {
  for (int32_t id : q.prefix_entries) e.pool.release(id);
  q.prefix_entries.clear();
  e.pool.give(q.private_blocks);
  q.private_blocks = 0;
}

void Simulation::publish_prefix(Engine& e, Req& q) {
  if (!spec_.kv.prefix_caching || q.spec.prefix_group < 0) return;
  const int64_t full = q.spec.prefix_tokens / block_size_;
  while (static_cast<int64_t>(q.prefix_entries.size()) < full &&
         q.computed >= (static_cast<int64_t>(q.prefix_entries.size()) + 1) * block_size_ && q.private_blocks > 0) {
    const int32_t id = e.pool.publish(prefix_key(q, static_cast<int64_t>(q.prefix_entries.size())));
    if (id < 0) break;  // another request published this block first: ours stays private
    --q.private_blocks;
    q.prefix_entries.push_back(id);
  }
}

bool Simulation::admit(Engine& e, Req& q, int64_t budget, bool chunked, int64_t& chunk) {
  std::vector<int32_t> hits;
  if (spec_.kv.prefix_caching && q.spec.prefix_group >= 0) {
    const int64_t nb = std::min(q.spec.prefix_tokens, q.target - 1) / block_size_;
    for (int64_t j = 0; j < nb; ++j) {
      const int32_t id = e.pool.lookup(prefix_key(q, j));
      if (id < 0) break;
      hits.push_back(id);
    }
  }
  const int64_t hit_tokens = static_cast<int64_t>(hits.size()) * block_size_;
  const int64_t remaining = q.target - hit_tokens;
  if (chunked) {
    chunk = std::min(remaining, budget);
    if (chunk <= 0) return false;
  } else {
    if (remaining > budget) return false;
    chunk = remaining;
  }
  const bool contiguous = spec_.kv.allocation == KvAllocation::Contiguous;
  const int64_t need = contiguous ? reserve_blocks_ : blocks_for(hit_tokens + chunk) - static_cast<int64_t>(hits.size());
  int64_t unreferenced = 0;
  for (int32_t id : hits) unreferenced += e.pool.is_unreferenced(id) ? 1 : 0;
  const int64_t headroom = contiguous ? 0 : e.watermark_blocks;
  if (e.pool.allocatable() - unreferenced - need < headroom) return false;
  for (int32_t id : hits) e.pool.acquire(id);
  if (!e.pool.take(need)) fail(error_code::kInternal, "", "serving simulator: admission allocation failed");
  ++prefix_lookups_;
  if (!hits.empty()) ++prefix_hits_;
  q.prefix_entries = std::move(hits);
  q.private_blocks = need;
  q.computed = hit_tokens;
  q.cached_tokens += hit_tokens;
  tok_cached_ += hit_tokens;
  e.queued_tokens -= q.target;
  return true;
}

int32_t Simulation::pick_victim(const Engine& e, int32_t exclude) const {
  for (size_t i = e.running.size(); i-- > 0;) {
    const int32_t id = e.running[i];
    if (id != exclude && !reqs_[static_cast<size_t>(id)].in_flight) return id;
  }
  return -1;
}

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

void Simulation::note_computed(Req& q) {
  const int64_t now = private_kv_tokens(q);
  rec_.computes(now - q.kv_counted);
  q.kv_counted = now;
}

void Simulation::preempt(Engine& e, Req& q, Batch& b) {
  const int32_t id = static_cast<int32_t>(&q - reqs_.data());
  ++preemptions_;
  ++q.preemptions;
  leave_running(e, q);
  lora_detach(e, q);
  const int64_t held = held_blocks(q);
  if (spec_.kv.preemption == PreemptionMode::Swap && q.computed > 0 && e.host_blocks_free >= held) {
    ++swaps_out_;
    b.swap_bytes += static_cast<double>(held * block_size_) * e.kv_bytes_per_token;
    q.swapped_blocks = held;
    e.host_blocks_free -= held;
    release_blocks(e, q);
    q.state = State::Swapped;
    e.swapped.push_back(id);
    rec_.queued();
    return;
  }
  ++recomputes_;
  q.discarded += q.computed;
  tok_discarded_ += q.computed;
  release_blocks(e, q);
  q.computed = 0;
  q.target = q.spec.prompt + q.generated;
  q.state = State::Queued;
  e.waiting.push_front(id);
  rec_.queued();
  e.queued_tokens += q.target;
}

void Simulation::swap_in(Engine& e, Batch& b) {
  while (!e.swapped.empty()) {
    const int32_t id = e.swapped.front();
    Req& q = reqs_[static_cast<size_t>(id)];
    if (static_cast<int64_t>(e.running.size()) >= spec_.scheduler.max_num_seqs) break;
    const int64_t need = q.swapped_blocks;
    if (e.pool.allocatable() - need < e.watermark_blocks) break;
    e.pool.take(need);
    q.private_blocks = need;
    e.host_blocks_free += q.swapped_blocks;
    q.swapped_blocks = 0;
    b.swap_bytes += static_cast<double>(need * block_size_) * e.kv_bytes_per_token;
    q.state = State::Running;
    join_running(e, q);
    lora_attach(e, q);
    e.swapped.pop_front();
    rec_.dequeued();
  }
}

// ---------------------------------------------------------------------------
// LoRA adapters

bool Simulation::lora_admissible(const Engine& e, const Req& q) const {
  if (!spec_.lora.enabled || q.spec.adapter < 0) return true;
  return e.adapter_refs[static_cast<size_t>(q.spec.adapter)] > 0 || e.distinct_adapters < spec_.lora.max_adapters_per_batch;
}

void Simulation::lora_attach(Engine& e, const Req& q) {
  if (!spec_.lora.enabled || q.spec.adapter < 0) return;
  if (e.adapter_refs[static_cast<size_t>(q.spec.adapter)]++ == 0) ++e.distinct_adapters;
}

void Simulation::lora_detach(Engine& e, const Req& q) {
  if (!spec_.lora.enabled || q.spec.adapter < 0) return;
  if (--e.adapter_refs[static_cast<size_t>(q.spec.adapter)] == 0) --e.distinct_adapters;
}

// ---------------------------------------------------------------------------
// Batch formation

bool Simulation::form_batch(Replica& r, Engine& e, Batch& b) {
  b.items.clear();
  b.shape.seqs.clear();
  b.static_decode = false;
  b.swap_bytes = 0;
  b.prefill_tokens = b.decode_tokens = 0;
  if (spec_.scheduler.policy == SchedulerPolicy::Static) return form_static(r, e, b);
  if (r.role == PoolRole::Decode) admit_incoming(r, e);
  swap_in(e, b);

  const bool chunked = spec_.scheduler.policy == SchedulerPolicy::ChunkedPrefill;
  const Priority prio = spec_.scheduler.priority;
  const int64_t max_seqs = spec_.scheduler.max_num_seqs;
  const int64_t step_tokens = spec_k_ > 0 ? spec_k_ + 1 : 1;
  int64_t budget = spec_.scheduler.max_num_batched_tokens;
  bool admissions_blocked = !e.swapped.empty();

  std::vector<int32_t> decodes, partials, waiting;
  for (int32_t id : e.running) {
    const Req& q = reqs_[static_cast<size_t>(id)];
    if (q.in_flight) continue;
    (q.computed >= q.target ? decodes : partials).push_back(id);
  }
  // Admission stops at the first prompt that cannot start, so only the queue's
  // head matters (all of it when LoRA lets later prompts pass a blocked one).
  size_t seats = static_cast<size_t>(std::max<int64_t>(0, max_seqs - static_cast<int64_t>(e.running.size())));
  const size_t look = spec_.lora.enabled ? e.waiting.size() : std::min(e.waiting.size(), seats + 1);
  waiting.assign(e.waiting.begin(), e.waiting.begin() + static_cast<std::ptrdiff_t>(look));
  const int64_t recomputes_before = recomputes_;
  bool admitted = false;

  auto add_item = [&](Req& q, ItemKind kind, int64_t new_tokens) {
    Item it;
    it.req = static_cast<int32_t>(&q - reqs_.data());
    it.kind = kind;
    it.new_tokens = new_tokens;
    it.cached = q.computed;
    b.items.push_back(it);
    q.in_flight = true;
    if (kind == ItemKind::Prefill) b.prefill_tokens += new_tokens;
    else b.decode_tokens += new_tokens;
  };

  const bool waiting_last = prio == Priority::DecodeFirst || (prio == Priority::PrefillFirst && !chunked);
  auto process = [&](const std::vector<int32_t>& cand) {
    for (int32_t id : cand) {
      if (budget <= 0) break;
      Req& q = reqs_[static_cast<size_t>(id)];
      if (q.in_flight) continue;
      if (q.state == State::Running) {
        if (q.computed >= q.target) {
          if (step_tokens > budget) break;
          bool self_preempted = false;
          while (!ensure_blocks(e, q, q.computed + step_tokens)) {
            const int32_t victim = pick_victim(e, id);
            if (victim < 0) {
              preempt(e, q, b);
              self_preempted = true;
              break;
            }
            preempt(e, reqs_[static_cast<size_t>(victim)], b);
          }
          if (self_preempted) continue;
          add_item(q, spec_k_ > 0 ? ItemKind::Verify : ItemKind::Decode, step_tokens);
          budget -= step_tokens;
        } else {
          const int64_t chunk = std::min({q.target - q.computed, budget, spec_.scheduler.max_prefill_chunk});
          if (!ensure_blocks(e, q, q.computed + chunk)) continue;
          add_item(q, ItemKind::Prefill, chunk);
          budget -= chunk;
        }
      } else if (q.state == State::Queued) {
        if (admissions_blocked) {
          if (waiting_last) break;  // only waiting prompts follow
          continue;
        }
        if (static_cast<int64_t>(e.running.size()) >= max_seqs) {
          admissions_blocked = true;
          continue;
        }
        if (!lora_admissible(e, q)) continue;
        int64_t chunk = 0;
        if (!admit(e, q, chunked ? std::min(budget, spec_.scheduler.max_prefill_chunk) : budget, chunked, chunk)) {
          admissions_blocked = true;
          continue;
        }
        q.state = State::Running;
        join_running(e, q);
        lora_attach(e, q);
        add_item(q, ItemKind::Prefill, chunk);
        budget -= chunk;
        admitted = true;
      }
    }
  };

  if (prio == Priority::PrefillFirst && !chunked) {
    process(waiting);
    if (!admitted) process(decodes);
  } else if (prio == Priority::PrefillFirst) {
    std::vector<int32_t> c = partials;
    c.insert(c.end(), waiting.begin(), waiting.end());
    c.insert(c.end(), decodes.begin(), decodes.end());
    process(c);
  } else if (prio == Priority::DecodeFirst) {
    std::vector<int32_t> c = decodes;
    c.insert(c.end(), partials.begin(), partials.end());
    c.insert(c.end(), waiting.begin(), waiting.end());
    process(c);
  } else {
    std::vector<int32_t> c = decodes;
    c.insert(c.end(), partials.begin(), partials.end());
    c.insert(c.end(), waiting.begin(), waiting.end());
    std::stable_sort(c.begin(), c.end(), [&](int32_t x, int32_t y) {
      const auto& a = reqs_[static_cast<size_t>(x)].spec;
      const auto& bb = reqs_[static_cast<size_t>(y)].spec;
      return a.arrival != bb.arrival ? a.arrival < bb.arrival : x < y;
    });
    process(c);
  }
  if (admitted) {
    // Admitted prompts are among the `look` entries examined, which recompute
    // preemptions during this step may have pushed back: only that head of the
    // queue is compacted, so the cost does not grow with the queue's length.
    const size_t head = look + static_cast<size_t>(recomputes_ - recomputes_before);
    size_t keep = head;  // compacts the head's queued entries towards its end, in order
    for (size_t i = head; i-- > 0;) {
      const int32_t id = e.waiting[i];
      if (reqs_[static_cast<size_t>(id)].state == State::Queued) e.waiting[--keep] = id;
    }
    e.waiting.erase(e.waiting.begin(), e.waiting.begin() + static_cast<std::ptrdiff_t>(keep));
    rec_.dequeued(static_cast<int64_t>(keep));
  }
  return !b.items.empty();
}

bool Simulation::form_static(Replica& r, Engine& e, Batch& b) {
  if (e.static_active) {
    const int64_t past = e.static_max_prompt + e.static_step;
    for (int32_t id : e.running) {
      Req& q = reqs_[static_cast<size_t>(id)];
      Item it;
      it.req = id;
      it.kind = ItemKind::Decode;
      it.new_tokens = 1;
      it.cached = past;
      b.items.push_back(it);
      b.shape.seqs.push_back(SeqChunk{1, past});
      q.in_flight = true;
      ++b.decode_tokens;
    }
    b.static_decode = true;
    return !b.items.empty();
  }
  if (e.waiting.empty()) return false;
  const int64_t want = std::min(spec_.scheduler.batch_size, spec_.scheduler.max_num_seqs);
  if (static_cast<int64_t>(e.waiting.size()) < want && spec_.scheduler.max_wait_ms > 0 && arrivals_pending_ > 0) {
    const TimeNs deadline = reqs_[static_cast<size_t>(e.waiting.front())].spec.arrival + to_ns(spec_.scheduler.max_wait_ms * 1e-3);
    if (now_ < deadline) {
      request_schedule(r, deadline);
      return false;
    }
  }
  int64_t n = std::min<int64_t>(want, static_cast<int64_t>(e.waiting.size()));
  int64_t maxp = 0, maxo = 0, per_seq = 0;
  for (; n > 0; --n) {
    maxp = maxo = 0;
    for (int64_t i = 0; i < n; ++i) {
      const Req& q = reqs_[static_cast<size_t>(e.waiting[static_cast<size_t>(i)])];
      maxp = std::max(maxp, q.spec.prompt);
      maxo = std::max(maxo, q.spec.output);
    }
    per_seq = blocks_for(maxp + maxo);
    if (n * per_seq <= e.pool.allocatable()) break;
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
    Req& q = reqs_[static_cast<size_t>(id)];
    e.pool.take(per_seq);
    q.private_blocks = per_seq;
    e.queued_tokens -= q.target;
    q.state = State::Running;
    join_running(e, q);
    Item it;
    it.req = id;
    it.kind = ItemKind::Prefill;
    it.new_tokens = q.spec.prompt;
    it.cached = 0;
    b.items.push_back(it);
    b.shape.seqs.push_back(SeqChunk{maxp, 0});  // padded to the longest prompt
    q.in_flight = true;
    b.prefill_tokens += maxp;
  }
  return true;
}

void Simulation::admit_incoming(Replica& r, Engine& e) {
  const InterconnectSpec& link = *spec_.cluster.kv_transfer_link;
  while (!e.incoming.empty()) {
    const int32_t id = e.incoming.front();
    Req& q = reqs_[static_cast<size_t>(id)];
    if (static_cast<int64_t>(e.running.size()) >= spec_.scheduler.max_num_seqs) break;
    const bool contiguous = spec_.kv.allocation == KvAllocation::Contiguous;
    const int64_t need = contiguous ? reserve_blocks_ : blocks_for(q.computed + 1 + spec_k_);
    if (e.pool.allocatable() - need < (contiguous ? 0 : e.watermark_blocks)) break;
    e.pool.take(need);
    q.private_blocks = need;
    Replica& src = replicas_[static_cast<size_t>(q.src_replica)];
    const double bytes = static_cast<double>(q.computed) * src.engines[static_cast<size_t>(q.spec.model)].kv_bytes_per_token;
    const double secs = link.latency_us * 1e-6 + bytes / (link.bandwidth_per_gpu_GBps * 1e9);
    const TimeNs start = std::max(now_, src.link_free);
    const TimeNs end = start + std::max<TimeNs>(1, to_ns(secs));
    src.link_free = end;
    q.state = State::Transferring;
    q.transfer_ns = end - now_;
    ++transfers_;
    transfer_bytes_ += bytes * src.layout.tp * src.layout.pp;
    transfer_ms_.push_back(static_cast<double>(end - now_) * 1e-6);
    if (detailed_ && spec_.outputs.trace) {
      if (static_cast<int64_t>(trace_transfers_.size()) < spec_.outputs.trace_max_steps)
        trace_transfers_.push_back(TraceTransfer{id, q.src_replica, r.index, start, end - start});
      else
        trace_truncated_ = true;
    }
    queue_.push(end, kPriority[kTransferDone], kTransferDone, id);
    e.incoming.pop_front();
    rec_.dequeued();
  }
}

// ---------------------------------------------------------------------------
// Pricing

double Simulation::price(int cost_index, const BatchShape& shape, int adapters, bool accumulate, Replica* r) {
  (void)r;
  CostEntry& c = costs_[static_cast<size_t>(cost_index)];
  StepOptions options;
  options.attention = s_.serving->attention;
  StepOperators ops = build_forward_step(*c.model, s_.precision, c.layout, shape, options);
  const double act_b = dtype_bytes(s_.precision.activations == Dtype::FP8 ? Dtype::BF16 : s_.precision.activations);
  if (!c.draft && c.model->is_moe() && (spec_.moe.load_imbalance != 1.0 || spec_.moe.expert_parallel > 1)) {
    // The step waits for the hottest expert: expert kernels run at
    // load_imbalance x the mean tokens per expert (weight traffic unchanged).
    const double f = spec_.moe.load_imbalance;
    for (Operator& op : ops.ops) {
      if (!starts_with(op.name, "moe_expert")) continue;
      if (op.family == OpFamily::Gemm && op.m > 0) {
        const int64_t m2 = static_cast<int64_t>(std::ceil(static_cast<double>(op.m) * f));
        const double scale = static_cast<double>(m2) / static_cast<double>(op.m);
        const double act_bytes = (static_cast<double>(op.m) * op.k + static_cast<double>(op.m) * op.n) * act_b;
        op.bytes = op.bytes - act_bytes + act_bytes * scale;
        op.flops *= scale;
        op.m = m2;
      } else {
        op.flops *= f;
        op.bytes *= f;
      }
    }
    if (spec_.moe.expert_parallel > 1) {
      // Expert parallelism: tokens are dispatched to and combined from the
      // experts' GPUs, two all-to-alls per MoE layer.
      Operator a2a;
      a2a.name = "moe_all_to_all";
      a2a.family = OpFamily::Collective;
      a2a.collective = CollectiveKind::AllToAll;
      a2a.count = 2.0 * c.model->num_moe_layers();
      a2a.group_size = spec_.moe.expert_parallel;
      a2a.message_bytes = static_cast<double>(shape.total_new_tokens()) * c.model->moe.top_k *
                          static_cast<double>(c.model->hidden_size) * act_b;
      a2a.bytes = a2a.message_bytes;
      a2a.compute_dtype = s_.precision.activations;
      ops.ops.push_back(a2a);
    }
  }
  if (!c.draft && spec_.lora.enabled && adapters > 0) {
    // Batched LoRA (SGMV/punica): a shrink GEMM to the rank and an expand GEMM
    // back, per target projection; each distinct adapter's weights are read once.
    const double r_ = spec_.lora.rank;
    const bool all = spec_.lora.targets == LoraTargets::AllLinear;
    const size_t n = ops.ops.size();
    ops.ops.reserve(3 * n);  // at most two LoRA operators per operator: `base` stays valid
    for (size_t i = 0; i < n; ++i) {
      if (ops.ops[i].family != OpFamily::Gemm) continue;
      const Operator& base = ops.ops[i];
      const bool attn = base.name == "attn_pre_proj" || base.name == "attn_post_proj";
      const bool mlp = base.name == "mlp_up_proj" || base.name == "mlp_down_proj" ||
                       base.name == "moe_shared_up_proj" || base.name == "moe_shared_down_proj";
      if (!(attn || (all && mlp))) continue;
      const double m = static_cast<double>(base.m);
      Operator shrink;
      shrink.name = "lora_shrink";
      shrink.family = OpFamily::Gemm;
      shrink.count = base.count;
      shrink.m = base.m;
      shrink.n = spec_.lora.rank;
      shrink.k = base.k;
      shrink.compute_dtype = base.compute_dtype;
      shrink.flops = 2.0 * m * r_ * static_cast<double>(base.k);
      shrink.bytes = (m * static_cast<double>(base.k) + adapters * static_cast<double>(base.k) * r_ + m * r_) * act_b;
      Operator expand = shrink;
      expand.name = "lora_expand";
      expand.n = base.n;
      expand.k = spec_.lora.rank;
      expand.flops = 2.0 * m * static_cast<double>(base.n) * r_;
      expand.bytes = (m * r_ + adapters * r_ * static_cast<double>(base.n) + 2.0 * m * static_cast<double>(base.n)) * act_b;
      ops.ops.push_back(std::move(shrink));
      ops.ops.push_back(std::move(expand));
    }
  }
  const StepCost sc = c.setup.price(ops);
  if (accumulate && c.draft) {
    draft_s_ += sc.time_s;
  } else if (accumulate) {
    const bool moe = c.model->is_moe();
    const bool lora = spec_.lora.enabled;
    for (const PricedOperator& p : sc.parts) {
      const int f = static_cast<int>(p.family);
      if (f >= 0 && f < kFamilies) family_s_[f] += p.time_s;
      if (moe && p.family == OpFamily::Gemm && starts_with(p.name, "moe_expert")) expert_s_ += p.time_s;
      if (lora && p.family == OpFamily::Gemm && starts_with(p.name, "lora_")) lora_gemm_s_ += p.time_s;
    }
  }
  return sc.time_s;
}

double Simulation::start_batch(Replica& r, Engine& e, Batch& b, double extra_s) {
  if (!b.static_decode && spec_.scheduler.policy != SchedulerPolicy::Static) {
    b.shape.seqs.clear();
    for (const Item& it : b.items) b.shape.seqs.push_back(SeqChunk{it.new_tokens, it.cached});
  }
  // Distinct adapters in the batch, and adapter loads into the GPU slots.
  int adapters = 0;
  int loads = 0;
  if (spec_.lora.enabled) {
    std::vector<int32_t> in_batch;
    for (const Item& it : b.items) {
      const int32_t a = reqs_[static_cast<size_t>(it.req)].spec.adapter;
      if (a >= 0 && std::find(in_batch.begin(), in_batch.end(), a) == in_batch.end()) in_batch.push_back(a);
    }
    adapters = static_cast<int>(in_batch.size());
    for (int32_t a : in_batch) {
      auto it = std::find(e.resident.begin(), e.resident.end(), a);
      if (it != e.resident.end()) {
        e.resident.erase(it);
        e.resident.push_back(a);
        continue;
      }
      ++loads;
      if (static_cast<int>(e.resident.size()) >= spec_.lora.max_adapters_per_batch) {
        for (auto jt = e.resident.begin(); jt != e.resident.end(); ++jt) {
          if (std::find(in_batch.begin(), in_batch.end(), *jt) == in_batch.end()) {
            e.resident.erase(jt);
            break;
          }
        }
      }
      e.resident.push_back(a);
    }
  }
  double t = price(e.cost, b.shape, adapters, true, &r);
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
    t += price(r.draft_cost, first, 0, true, &r);
    for (int i = 1; i < spec_k_ && !more.seqs.empty(); ++i) {
      for (auto& sq : more.seqs) sq.cached_tokens += 1;
      t += price(r.draft_cost, more, 0, true, &r);
    }
  } else if (spec_k_ > 0 && has_decode) {
    const double lookup = spec_k_ * spec_.speculative.ngram_lookup_us * 1e-6;
    draft_s_ += lookup;
    t += lookup;
  }
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

  const TimeNs dur = std::max<TimeNs>(1, to_ns(t));
  b.start = now_;
  b.end = now_ + dur;
  b.active = true;
  ++r.inflight;
  r.stage_free = now_ + std::max<TimeNs>(1, dur / r.layout.pp);
  r.busy_s += t / r.layout.pp;
  r.step_s += t;
  ++r.steps;
  ++steps_;
  sum_batch_ += static_cast<double>(b.items.size());
  sum_tokens_ += static_cast<double>(b.prefill_tokens + b.decode_tokens);
  for (const Item& it : b.items) {
    Req& q = reqs_[static_cast<size_t>(it.req)];
    if (q.first_scheduled < 0) q.first_scheduled = now_;
  }
  if (detailed_) {
    sample_series(b);
    if (spec_.outputs.trace) {
      if (static_cast<int64_t>(trace_.size()) < spec_.outputs.trace_max_steps)
        trace_.push_back(TraceStep{r.index, b.engine, b.start, dur, static_cast<int32_t>(b.items.size()), b.prefill_tokens,
                                   b.decode_tokens});
      else
        trace_truncated_ = true;
    }
  }
  return t;
}

void Simulation::sample_series(const Batch& b) {
  SeriesSample s;
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

void Simulation::emit_tokens(Replica& r, Req& q, int64_t n) {
  (void)r;
  if (q.generated == 0) q.first_token = now_;
  else itl_.add(now_ - q.last_token);
  q.last_token = now_;
  q.generated += n;
}

void Simulation::finish(Replica& r, Engine& e, Req& q) {
  q.state = State::Done;
  q.completion = now_;
  release_blocks(e, q);
  leave_running(e, q);
  lora_detach(e, q);
  --r.outstanding;
  ++completed_;
  last_event_ = std::max(last_event_, now_);
  tok_prompt_ += q.spec.prompt;
  tok_output_ += q.spec.output;
}

void Simulation::handoff(Replica& r, Engine& e, Req& q) {
  const int32_t id = static_cast<int32_t>(&q - reqs_.data());
  leave_running(e, q);
  lora_detach(e, q);
  q.src_replica = r.index;
  q.src_private = q.private_blocks;
  q.src_prefix = std::move(q.prefix_entries);
  q.prefix_entries.clear();
  q.private_blocks = 0;
  q.state = State::Handoff;
  --r.outstanding;
  const int di = route(decode_replicas_, q, rr_decode_next_);
  Replica& d = replicas_[static_cast<size_t>(di)];
  ++d.outstanding;
  q.replica = di;
  d.engines[static_cast<size_t>(q.spec.model)].incoming.push_back(id);
  rec_.queued();
  request_schedule(d, now_);
}

void Simulation::on_transfer_done(int32_t id) {
  Req& q = reqs_[static_cast<size_t>(id)];
  Replica& src = replicas_[static_cast<size_t>(q.src_replica)];
  Engine& se = src.engines[static_cast<size_t>(q.spec.model)];
  for (int32_t e : q.src_prefix) se.pool.release(e);
  q.src_prefix.clear();
  se.pool.give(q.src_private);
  q.src_private = 0;
  q.state = State::Running;
  Replica& d = replicas_[static_cast<size_t>(q.replica)];
  Engine& de = d.engines[static_cast<size_t>(q.spec.model)];
  join_running(de, q);
  lora_attach(de, q);
  request_schedule(d, now_);
  request_schedule(src, now_);
}

void Simulation::on_step_end(int ri, int slot) {
  Replica& r = replicas_[static_cast<size_t>(ri)];
  Batch& b = r.slots[static_cast<size_t>(slot)];
  Engine& e = r.engines[static_cast<size_t>(b.engine)];
  b.active = false;
  --r.inflight;
  if (spec_.scheduler.policy == SchedulerPolicy::Static) {
    if (b.static_decode) ++e.static_step;
    bool all_done = true;
    for (const Item& it : b.items) {
      Req& q = reqs_[static_cast<size_t>(it.req)];
      q.in_flight = false;
      if (!b.static_decode) {
        q.computed = q.spec.prompt;
        q.processed += q.spec.prompt;
        tok_processed_ += q.spec.prompt;
        tok_padding_ += e.static_max_prompt - q.spec.prompt;
        emit_tokens(r, q, 1);
      } else if (q.generated < q.spec.output) {
        ++q.computed;
        ++q.processed;
        ++tok_processed_;
        emit_tokens(r, q, 1);
      } else {
        ++tok_padding_;
      }
      note_computed(q);
      all_done = all_done && q.generated >= q.spec.output;
    }
    if (all_done) {
      // The batch returns together: every request completes at its end.
      for (const Item& it : b.items) finish(r, e, reqs_[static_cast<size_t>(it.req)]);
      e.static_active = false;
    }
    request_schedule(r, now_);
    return;
  }
  for (const Item& it : b.items) {
    Req& q = reqs_[static_cast<size_t>(it.req)];
    q.in_flight = false;
    if (q.state != State::Running) continue;
    switch (it.kind) {
      case ItemKind::Prefill: {
        q.computed += it.new_tokens;
        q.processed += it.new_tokens;
        tok_processed_ += it.new_tokens;
        publish_prefix(e, q);
        note_computed(q);
        if (q.computed >= q.target) {
          emit_tokens(r, q, 1);
          if (q.generated >= q.spec.output) finish(r, e, q);
          else if (r.role == PoolRole::Prefill) handoff(r, e, q);
        }
        break;
      }
      case ItemKind::Decode: {
        q.computed += 1;
        q.processed += 1;
        tok_processed_ += 1;
        note_computed(q);
        emit_tokens(r, q, 1);
        if (q.generated >= q.spec.output) finish(r, e, q);
        break;
      }
      case ItemKind::Verify: {
        // Each of the k draft tokens is accepted with the configured
        // probability until the first rejection; the target adds one token.
        int64_t accepted = 0;
        while (accepted < spec_k_ && accept_rng_.uniform01() < spec_.speculative.acceptance_rate) ++accepted;
        const int64_t committed = std::min<int64_t>(accepted + 1, q.spec.output - q.generated);
        ++verify_items_;
        verify_committed_ += committed;
        tok_spec_rejected_ += it.new_tokens - committed;
        q.computed += committed;
        q.processed += committed;
        tok_processed_ += committed;
        note_computed(q);
        emit_tokens(r, q, committed);
        if (q.generated >= q.spec.output) finish(r, e, q);
        break;
      }
    }
  }
  request_schedule(r, now_);
}

}  // namespace sightline::serve
