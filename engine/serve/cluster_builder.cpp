// Building a serving simulation's cluster (ClusterBuilder) and its workload's
// requests in arrival order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#endif

#include "mem/inference_memory.hpp"
#include "serve/cluster_builder.hpp"

namespace sightline::serve {

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

Cluster ClusterBuilder::build() {
  Cluster c;
  for (size_t pi = 0; pi < spec_.cluster.pools.size(); ++pi) add_pool(pi, c);
  return c;
}

void ClusterBuilder::add_pool(size_t pi, Cluster& c) {
  const PoolSpec& p = spec_.cluster.pools[pi];
  const GpuSpec& gpu = p.gpu ? *p.gpu : s_.hardware.gpu;
  const ReplicaMemoryPlan plan = pool_memory_plan(s_, pi);
  c.pool_memory.push_back(plan);
  const PoolCosts costs = pricer_.add_pool(p, gpu, pi == 0);
  // Wide EP's attention data-parallel ranks step in lockstep, in groups of
  // attention_data_parallel consecutive replicas (the reader checks that it
  // divides the pool). Pipelined replicas keep their own stage clocks.
  const int dp = spec_.moe.attention_data_parallel;
  const bool lockstep = dp > 1 && s_.model.is_moe() && p.layout.pp == 1;
  for (int i = 0; i < p.replicas; ++i) {
    Replica r;
    r.index = static_cast<int>(c.replicas.size());
    r.pool = static_cast<int>(pi);
    if (lockstep) {
      if (i % dp == 0) c.dp_groups.emplace_back();
      r.dp_group = static_cast<int>(c.dp_groups.size()) - 1;
      c.dp_groups.back().members.push_back(r.index);
    }
    r.role = p.role;
    r.layout = p.layout;
    r.gpu = &pricer_.gpu(costs.models[0]);
    r.draft_cost = costs.draft;
    r.slots.resize(static_cast<size_t>(p.layout.pp));
    for (size_t m = 0; m < plan.engines.size(); ++m) {
      ModelEngine e;
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
      c.kv_total += e.kv.pool.total();
      r.engines.push_back(std::move(e));
    }
    (r.role == PoolRole::Decode ? c.decode_replicas : c.entry_replicas).push_back(r.index);
    c.replicas.push_back(std::move(r));
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

FirstArrivals ClusterBuilder::load_workload(const WorkloadOverride& override, std::vector<SimRequest>& reqs,
                                            GeneratedWorkload& info) const {
  RecordSink sink(reqs);
  generate_workload_into(spec_, override.seed.value_or(s_.seed), override, info, sink);
  sink.finish();
  // Sessions: only first turns arrive on their own (a later turn follows its
  // previous turn's last token, ArrivalFeed::next_turn).
  // A closed loop: one request per client at the start, each later one when
  // a client is free (ArrivalFeed::client_freed).
  FirstArrivals f;
  const ArrivalSpec& a = spec_.workload.arrival;
  if (spec_.workload.sessions.enabled) f.order = first_turns(reqs);
  else if (a.process == ArrivalProcess::ClosedLoop) {
    f.order = first_requests_of_clients(reqs.size(), a.concurrency);
    f.next_client_request = f.order.size();
  } else f.order = arrival_order_of(reqs.size(), [&](size_t i) { return reqs[i].spec.arrival; });
  f.first_arrival = reqs.empty() ? 0 : reqs.front().spec.arrival;
  for (const auto& q : reqs) f.first_arrival = std::min(f.first_arrival, q.spec.arrival);
  return f;
}

std::vector<int32_t> ClusterBuilder::first_turns(const std::vector<SimRequest>& requests) {
  // Sessions are generated in arrival order, each one's turns consecutive.
  std::vector<int32_t> out;
  for (size_t i = 0; i < requests.size(); ++i)
    if (requests[i].spec.turn == 0) out.push_back(static_cast<int32_t>(i));
  return out;
}

std::vector<int32_t> ClusterBuilder::first_requests_of_clients(size_t requests, int64_t clients) {
  std::vector<int32_t> out(std::min(requests, static_cast<size_t>(clients)));
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int32_t>(i);
  return out;
}

}  // namespace sightline::serve
