// The simulator's multi-turn sessions and closed-loop clients (requests that
// arrive when an earlier one ends), the offload tiers' metrics and the
// cache-aware routers' view of the replicas.
#include <algorithm>

#include "mem/inference_memory.hpp"
#include "serve/simulation.hpp"

namespace sightline::serve {

using namespace sim_event;

void Simulation::session_turn_done(Engine& e, Req& q) {
  // The output's full blocks join the prefix cache too: the next turn re-sends them.
  kv_.publish_prefix(e.kv, q.kv, q.spec, q.computed);
  const size_t next = static_cast<size_t>(&q - reqs_.data()) + 1;
  if (next >= reqs_.size() || reqs_[next].spec.session != q.spec.session) return;
  const Req& n = reqs_[next];
  // A replayed trace keeps its recorded gap after the previous turn's
  // arrival, but a turn never comes before the previous one's answer.
  if (n.spec.think_from_arrival)
    arrive_at(next, std::max(now_, clock_add(q.spec.arrival, n.spec.think, "/serving/workload/sessions/csv")), nullptr);
  else
    arrive_at(next, now_, "/serving/workload/sessions/think_time_s");
}

void Simulation::arrive_at(size_t id, TimeNs at, const char* think_path) {
  RequestSpec& r = reqs_[id].spec;
  r.arrival = think_path ? clock_add(at, r.think, think_path) : at;
  queue_.push(r.arrival, kPriority[kArrival], kArrival, static_cast<int64_t>(id));
}

void Simulation::client_freed() {
  // vLLM's benchmark_serving.py sends each request inside
  // `async with semaphore:` (limited_request_func, vllm-project/vllm@0049e29c,
  // benchmarks/benchmark_serving.py), and its request functions start the
  // TTFT / E2E clock inside that block (`st = time.perf_counter()` just before
  // the POST, benchmarks/backend_request_func.py @01184130): a request that
  // waited for a free slot is timed from its send, so it arrives now.
  // asyncio.Semaphore wakes its waiters in the order they came (FIFO).
  // SGLang's bench_serving wraps its request function the same way (its
  // comment cites vllm-project/vllm#9390).
  if (const int32_t waited = client_cap_.on_request_end(); waited >= 0)
    arrive_at(static_cast<size_t>(waited), now_, nullptr);
  if (next_client_request_ == 0 || next_client_request_ >= reqs_.size()) return;
  arrive_at(next_client_request_++, now_, "/serving/workload/arrival/think_time_s");
}

std::vector<int32_t> Simulation::first_requests_of_clients(size_t requests, int64_t clients) {
  std::vector<int32_t> out(std::min(requests, static_cast<size_t>(clients)));
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int32_t>(i);
  return out;
}

void Simulation::end_session(const Req& q) {
  for (size_t i = static_cast<size_t>(&q - reqs_.data()) + 1; i < reqs_.size(); ++i) {
    Req& n = reqs_[i];
    if (n.spec.session != q.spec.session) break;
    n.state = State::Dropped;
    n.drop_reason = DropReason::SessionDropped;
    ++dropped_;
    --arrivals_pending_;
  }
}

int64_t Simulation::cached_prefix_tokens(int replica, const RequestSpec& r) const {
  ++router_load_reads_;
  const Engine& e = replicas_[static_cast<size_t>(replica)].engines[static_cast<size_t>(r.model)];
  return kv_.probe(e.kv, r, r.prompt).blocks() * block_size_;
}

double Simulation::kv_route_cost(int replica, const RequestSpec& r) const {
  ++router_load_reads_;
  const Engine& e = replicas_[static_cast<size_t>(replica)].engines[static_cast<size_t>(r.model)];
  const PrefixProbe p = kv_.probe(e.kv, r, r.prompt);
  const double per_token = prefill_s_per_token_[static_cast<size_t>(e.cost)];
  const double compute = static_cast<double>(r.prompt - p.blocks() * block_size_);
  const double reload = per_token > 0 ? p.reload_s / per_token : 0.0;
  const double in_use = static_cast<double>((e.kv.pool.used() - e.kv.pool.evictable()) * block_size_);
  return compute + reload + static_cast<double>(e.queued_tokens) + in_use;
}

void Simulation::fill_sessions(ServingMetrics& m) const {
  if (!spec_.workload.sessions.enabled) return;
  ServingMetrics::Sessions s;
  s.total = workload_info_.sessions;
  s.cut_at_max_model_len = workload_info_.sessions_cut;
  std::vector<double> first, returning, duration, turns;
  int64_t returning_prompt = 0, returning_cached = 0;
  for (size_t i = 0; i < reqs_.size();) {
    size_t j = i;
    bool all_done = true, dropped = false;
    for (; j < reqs_.size() && reqs_[j].spec.session == reqs_[i].spec.session; ++j) {
      const Req& q = reqs_[j];
      ++s.turns;
      dropped = dropped || q.state == State::Dropped;
      if (q.state != State::Done) {
        all_done = false;
        continue;
      }
      ++s.turns_completed;
      const double ttft_ms = static_cast<double>(q.first_token - q.spec.arrival) * 1e-6;
      (q.spec.turn == 0 ? first : returning).push_back(ttft_ms);
      if (q.spec.turn > 0) {
        returning_prompt += q.spec.prompt;
        returning_cached += q.cached_tokens;
      }
    }
    turns.push_back(static_cast<double>(j - i));
    if (all_done) {
      ++s.completed;
      duration.push_back(static_cast<double>(reqs_[j - 1].completion - reqs_[i].spec.arrival) * 1e-9);
    }
    if (dropped) ++s.dropped;
    i = j;
  }
  s.turns_per_session = summarize(turns, "no session");
  s.ttft_first_turn_ms = summarize(first, "no first turn completed");
  s.ttft_returning_turn_ms = summarize(returning, "no returning turn completed (sessions of one turn?)");
  s.session_duration_s = summarize(duration, "no session completed all its turns");
  s.returning_cached_token_fraction =
      returning_prompt > 0 ? static_cast<double>(returning_cached) / static_cast<double>(returning_prompt) : 0.0;
  m.sessions = s;
}

void Simulation::fill_offload(ServingMetrics& m) const {
  if (!kv_.has_tiers()) return;
  ServingMetrics::KvOffload o;
  const double prompt = static_cast<double>(std::max<int64_t>(1, tok_prompt_));
  o.hbm_hit_tokens = kv_.tiered_hbm_hit_blocks() * block_size_;
  o.hbm_hit_token_fraction = static_cast<double>(o.hbm_hit_tokens) / prompt;
  for (size_t t = 0; t < kv_.tier_specs().size(); ++t) {
    const TierCounters& c = kv_.tier_counters()[t];
    ServingMetrics::OffloadTier ot;
    ot.name = kv_.tier_specs()[t].name;
    ot.hit_tokens = c.hit_blocks * block_size_;
    ot.hit_token_fraction = static_cast<double>(ot.hit_tokens) / prompt;
    ot.stored_blocks = c.stored_blocks;
    ot.dropped_blocks = c.dropped_blocks;
    ot.reloaded_GiB_per_gpu = c.reload_bytes / kBytesPerGiB;
    o.tiers.push_back(ot);
  }
  o.reload_overlap = spec_.kv.reload_overlap == ReloadOverlap::Serial ? "serial" : "layerwise";
  o.reload_time_s = pricer_.totals().reload_s;
  o.exposed_reload_time_s = pricer_.totals().reload_exposed_s;
  m.kv_offload = o;
}

}  // namespace sightline::serve
