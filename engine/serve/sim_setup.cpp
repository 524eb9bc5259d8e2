// Building a serving simulation: its parts, each pool's cost setups (the
// pricer's), replicas and model engines with their KV spaces, and the
// workload's requests in arrival order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#endif

#include "mem/inference_memory.hpp"
#include "serve/simulation.hpp"

namespace sightline::serve {

namespace {

// The SLO's ITL bound on the clock, 0 for none (counted per request).
TimeNs itl_bound_ns(const SimulationSpec& spec) {
  return spec.slo.enabled && spec.slo.itl_ms > 0 ? static_cast<TimeNs>(std::llround(spec.slo.itl_ms * 1e6)) : 0;
}

}  // namespace

ReplicaMemoryPlan pool_memory_plan(const Scenario& s, size_t pool) {
  const PoolSpec& p = s.serving->simulation->cluster.pools[pool];
  const GpuSpec& gpu = p.gpu ? *p.gpu : s.hardware.gpu;
  return plan_replica_memory(s.model, s.precision, p.layout, gpu, s.serving->runtime_overhead_GiB,
                             s.cost_model.software_stack.sampler_bytes_per_logit, *s.serving->simulation);
}

RunLimits run_limits(const Scenario& s) {
  const SimulationSpec& spec = *s.serving->simulation;
  RunLimits l;
  l.max_num_seqs = spec.scheduler.max_num_seqs;
  l.watermark = spec.kv.watermark;
  for (size_t pi = 0; pi < spec.cluster.pools.size(); ++pi)
    for (const EngineMemory& e : pool_memory_plan(s, pi).engines) l.kv_blocks.push_back(e.blocks);
  return l;
}

LimitFacts Simulation::limit_facts() const {
  LimitFacts f;
  f.seqs = scheduler_->seq_limit();
  for (const Replica& r : replicas_)
    for (const Engine& e : r.engines) f.kv.merge(e.kv.pool.checks());
  f.capacity_read = capacity_read_;
  // Their decisions read the limits in ways not recorded: LoRA's adapter
  // slots and its waiting list, static batches, offload tiers' admission.
  f.opaque = spec_.lora.enabled || spec_.scheduler.policy == SchedulerPolicy::Static || kv_.has_tiers();
  return f;
}

Simulation::Simulation(const Scenario& scenario, const WorkloadOverride& override, bool detailed)
    : s_(scenario),
      spec_(*scenario.serving->simulation),
      detailed_(detailed),
      pricer_(scenario, reqs_),
      rec_(spec_.kv.block_size),
      stats_(itl_bound_ns(spec_)),
      tokens_(rec_, stats_, now_, spec_.kv.block_size),
      trace_(spec_.outputs, detailed),
      kv_(spec_.kv, spec_.speculative.method != SpecMethod::None ? spec_.speculative.k : 0) {
  block_size_ = spec_.kv.block_size;
  spec_k_ = spec_.speculative.method != SpecMethod::None ? spec_.speculative.k : 0;
  const RouterOptions router_options{spec_.cluster.router_load_bound};
  entry_router_ = make_router(to_string(spec_.cluster.router), "/serving/cluster/router", router_options);
  decode_router_ = make_router(to_string(spec_.cluster.router), "/serving/cluster/router", router_options);
  scheduler_ = make_batch_scheduler(to_string(spec_.scheduler.policy), "/serving/scheduler/policy", spec_, reqs_, kv_,
                                    rec_, *this);
  accept_rng_ = Rng(stream_seed(override.seed.value_or(s_.seed), "acceptance"));
  tokenize_ = override.tokenize;
  for (size_t pi = 0; pi < spec_.cluster.pools.size(); ++pi) add_pool(pi);
  load_workload(override);
  if (spec_.cluster.router == RouterKind::KvAware) prefill_s_per_token_ = pricer_.prefill_s_per_token();
}

Simulation::~Simulation() = default;

void Simulation::add_pool(size_t pi) {
  const PoolSpec& p = spec_.cluster.pools[pi];
  const GpuSpec& gpu = p.gpu ? *p.gpu : s_.hardware.gpu;
  const ReplicaMemoryPlan plan = pool_memory_plan(s_, pi);
  pool_memory_.push_back(plan);
  const PoolCosts costs = pricer_.add_pool(p, gpu, pi == 0);
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
    r.gpu = &pricer_.gpu(costs.models[0]);
    r.draft_cost = costs.draft;
    r.slots.resize(static_cast<size_t>(p.layout.pp));
    for (size_t m = 0; m < plan.engines.size(); ++m) {
      Engine e;
      e.model = static_cast<int>(m);
      e.kv = kv_.make_space(plan.engines[m].blocks, plan.engines[m].kv_bytes_per_token, plan.engines[m].windowed,
                            rec_.block_usage(), static_cast<int>(m), p.layout.tp * p.layout.pp);
      e.cost = costs.models[m];
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

namespace {
// Asks the kernel to back the records' storage with transparent huge pages
// (Linux, where madvise leaves it to the process): a million records are 220
// MiB, first touched in 4 KiB pages one fault each (a tenth of a 1M-request
// run's CPU was those faults and the first writes). A hint only: nothing the
// simulation computes depends on it.
void advise_huge_pages(const void* data, size_t bytes) {
#if defined(__linux__) && !defined(__EMSCRIPTEN__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

// The generated requests straight into the simulator's records when their
// count comes first (reserved exactly); otherwise (a duration-driven run)
// listed, then copied into records sized once at the end, as a vector grown
// by doubling would hold up to twice the records.
class RecordSink : public RequestSink {
 public:
  explicit RecordSink(std::vector<SimRequest>& reqs) : reqs_(reqs) {}
  void reserve(size_t n) override {
    reqs_.reserve(n);
    advise_huge_pages(reqs_.data(), reqs_.capacity() * sizeof(SimRequest));
    sized_ = true;
  }
  void add(const RequestSpec& r) override {
    if (sized_) reqs_.emplace_back().spec = r;
    else listed_.push_back(r);
  }
  void finish() {
    if (sized_) return;
    reqs_.resize(listed_.size());
    for (size_t i = 0; i < reqs_.size(); ++i) reqs_[i].spec = listed_[i];
    std::vector<RequestSpec>().swap(listed_);
  }

 private:
  std::vector<SimRequest>& reqs_;
  std::vector<RequestSpec> listed_;
  bool sized_ = false;
};
}  // namespace

void Simulation::load_workload(const WorkloadOverride& override) {
  RecordSink sink(reqs_);
  generate_workload_into(spec_, override.seed.value_or(s_.seed), override, workload_info_, sink);
  sink.finish();
  // Sessions: only first turns arrive on their own (a later turn follows its
  // previous turn's last token, session_turn_done).
  // A closed loop: one request per client at the start, each later one when
  // a client is free (client_freed).
  const ArrivalSpec& a = spec_.workload.arrival;
  if (spec_.workload.sessions.enabled) arrival_order_ = first_turns(reqs_);
  else if (a.process == ArrivalProcess::ClosedLoop) {
    arrival_order_ = first_requests_of_clients(reqs_.size(), a.concurrency);
    next_client_request_ = arrival_order_.size();
  } else arrival_order_ = arrival_order_of(reqs_.size(), [&](size_t i) { return reqs_[i].spec.arrival; });
  client_cap_ = ClientCap(a.max_concurrency, reqs_.size());
  enqueue_next_arrival();
  arrivals_pending_ = static_cast<int64_t>(reqs_.size());
  first_arrival_ = reqs_.empty() ? 0 : reqs_.front().spec.arrival;
  for (const auto& q : reqs_) first_arrival_ = std::min(first_arrival_, q.spec.arrival);
  rec_.start(first_arrival_);
  now_ = first_arrival_;
  if (spec_.stop_at_s > 0) stop_ns_ = to_ns(spec_.stop_at_s, "/serving/workload", "the benchmark's end");
  if (reqs_.empty()) finished_ = true;
}

std::vector<int32_t> Simulation::first_turns(const std::vector<SimRequest>& requests) {
  // Sessions are generated in arrival order, each one's turns consecutive.
  std::vector<int32_t> out;
  for (size_t i = 0; i < requests.size(); ++i)
    if (requests[i].spec.turn == 0) out.push_back(static_cast<int32_t>(i));
  return out;
}

}  // namespace sightline::serve
