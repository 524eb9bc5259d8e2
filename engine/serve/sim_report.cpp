// SimReport: a serving run's metrics, its requests' outcomes and its limit
// facts (its details are sim_details.cpp's).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "mem/inference_memory.hpp"
#include "perf/power.hpp"
#include "serve/moe_step.hpp"
#include "serve/serving_metrics.hpp"
#include "serve/sim_report.hpp"
#include "serve/slo_shares.hpp"

namespace sightline::serve {

namespace {

const char* kFamilyNames[] = {"gemm",          "attention_prefill", "attention_decode", "norm",
                              "elementwise",   "rope",              "kv_cache_write",   "embedding",
                              "moe_router",    "collective",        "sampling"};

double safe_div(double a, double b) { return b > 0 ? a / b : 0.0; }

}  // namespace

bool meets_slo(const RequestOutcome& q, const SloSpec& slo) {
  return meets_slo(q, slo, kSloTtft | kSloTpot | kSloItl | kSloE2e);
}

bool meets_slo(const RequestOutcome& q, const SloSpec& slo, unsigned metrics) {
  if (q.completion < 0) return false;
  const double ttft_ms = static_cast<double>(q.first_token - q.arrival) * 1e-6;
  const double e2e_ms = static_cast<double>(q.completion - q.arrival) * 1e-6;
  const double tpot_ms = q.output_tokens > 1 ? static_cast<double>(q.completion - q.first_token) * 1e-6 /
                                                   static_cast<double>(q.output_tokens - 1)
                                             : 0.0;
  if ((metrics & kSloTtft) && slo.ttft_ms > 0 && ttft_ms > slo.ttft_ms) return false;
  if ((metrics & kSloTpot) && slo.tpot_ms > 0 && tpot_ms > slo.tpot_ms) return false;
  if ((metrics & kSloItl) && slo.itl_ms > 0 && q.gaps_over_itl > 0) return false;
  if ((metrics & kSloE2e) && slo.e2e_ms > 0 && e2e_ms > slo.e2e_ms) return false;
  return true;
}

bool SimReport::all_completed() const { return run_.completed == static_cast<int64_t>(sim_.reqs.size()); }

std::vector<RequestOutcome> SimReport::outcomes() const {
  std::vector<RequestOutcome> out(sim_.reqs.size());
  for (size_t i = 0; i < sim_.reqs.size(); ++i) out[i] = outcome_of(sim_.reqs[i], run_.cut_short());
  return out;
}

ServingMetrics SimReport::serving_metrics() const {
  int64_t good = 0;
  int64_t in_tokens = 0, out_tokens = 0;
  for (const Req& q : sim_.reqs) {
    if (q.state != State::Done) continue;
    in_tokens += q.spec.prompt;
    out_tokens += q.spec.output;
    if (spec_.slo.enabled && meets_slo(outcome_of(q), spec_.slo)) ++good;
  }
  const TimeNs end = std::max(run_.last_event, run_.now);
  const double duration = std::max(1e-9, static_cast<double>(std::max<TimeNs>(1, (run_.completed > 0 ? run_.last_event : end) - run_.first_arrival)) * 1e-9);
  const double span = std::max(1.0, static_cast<double>(run_.now - run_.first_arrival));
  ServingMetrics m;
  const int64_t n = static_cast<int64_t>(sim_.reqs.size());
  m.requests = {n, run_.completed, run_.dropped, n - run_.completed - run_.dropped};
  m.duration_s = duration;
  // One value per completed request, one metric at a time in one list sized
  // once: four lists at once were 32 bytes a request at a large run's peak.
  std::vector<double> v;
  v.reserve(static_cast<size_t>(run_.completed));
  const auto completed_values = [&](auto value_of) -> std::vector<double>& {
    v.clear();
    for (const Req& q : sim_.reqs)
      if (q.state == State::Done) value_of(q);
    return v;
  };
  m.ttft_ms = summarize(completed_values([&](const Req& q) { v.push_back(static_cast<double>(q.first_token - q.spec.arrival) * 1e-6); }));
  m.tpot_ms = summarize(completed_values([&](const Req& q) {
                          if (q.spec.output > 1)
                            v.push_back(static_cast<double>(q.completion - q.first_token) * 1e-6 /
                                        static_cast<double>(q.spec.output - 1));
                        }),
                        run_.completed > 0 ? "TPOT is defined over output tokens after the first: no completed "
                                         "request had more than one output token"
                                       : "no request completed");
  m.itl_ms = sim_.stats.itl_ms();
  m.e2e_s = summarize(completed_values([&](const Req& q) { v.push_back(static_cast<double>(q.completion - q.spec.arrival) * 1e-9); }));
  m.queueing_ms = summarize(completed_values([&](const Req& q) { v.push_back(static_cast<double>(q.first_scheduled - q.spec.arrival) * 1e-6); }));
  if (!m.tpot_ms.empty() && m.tpot_ms.mean > 0) m.decode_tokens_per_s_per_request = 1e3 / m.tpot_ms.mean;
  fill_rates(m, duration, in_tokens, out_tokens, good);
  fill_cache(m, span);
  fill_features(m);
  fill_sessions(m);
  fill_offload(m);
  fill_gpu_energy_cost(m, duration, out_tokens, in_tokens);
  return m;
}

// Throughput, and goodput under the SLO.
void SimReport::fill_rates(ServingMetrics& m, double duration, int64_t in_tokens, int64_t out_tokens, int64_t good) const {
  int gpus = 0;
  for (const Replica& r : sim_.cluster.replicas) gpus += r.layout.tp * r.layout.pp;
  m.throughput = {static_cast<double>(run_.completed) / duration,
                  static_cast<double>(in_tokens) / duration,
                  static_cast<double>(out_tokens) / duration,
                  static_cast<double>(in_tokens + out_tokens) / duration,
                  static_cast<double>(out_tokens) / duration / std::max(1, gpus),
                  gpus};
  if (spec_.slo.enabled) {
    // Each condition of the SLO over the whole run (no warm-up skipped),
    // counted as the steady-state verdict counts it; a long run's verdict.
    SloShareCounter shares(spec_.slo);
    for (const Req& q : sim_.reqs) shares.add(outcome_of(q));
    m.goodput = ServingMetrics::Goodput{static_cast<double>(good) / duration,
                                        safe_div(static_cast<double>(good), static_cast<double>(m.requests.total)),
                                        shares.to_json(), shares.meets()};
  }
}

// Concurrency, the KV cache and the prefix cache.
void SimReport::fill_cache(ServingMetrics& m, double span) const {
  int64_t blocks_total = 0, peak_sum = 0;
  double peak_util = 0;
  for (const Replica& r : sim_.cluster.replicas)
    for (const Engine& e : r.engines) {
      blocks_total += e.kv.pool.total();
      peak_sum += e.kv.pool.peak_used();
      peak_util = std::max(peak_util, safe_div(static_cast<double>(e.kv.pool.peak_used()), static_cast<double>(e.kv.pool.total())));
    }
  m.concurrency = {sim_.rec.running_integral() / span,
                   sim_.rec.max_running(),
                   sim_.rec.waiting_integral() / span,
                   sim_.rec.max_waiting(),
                   sim_.stats.mean_batch(),
                   sim_.stats.mean_tokens(),
                   sim_.stats.steps()};
  m.kv_cache = {to_string(spec_.kv.allocation),
                blocks_total,
                peak_sum,
                peak_util,
                safe_div(sim_.rec.kv_used_integral(), span * static_cast<double>(blocks_total)),
                safe_div(sim_.rec.kv_tokens_integral(), sim_.rec.kv_allocated_tokens_integral()),
                sim_.rec.kv_allocated_tokens_integral() > 0 ? 1.0 - sim_.rec.kv_tokens_integral() / sim_.rec.kv_allocated_tokens_integral() : 0.0,
                sim_.rec.counts().preemptions,
                sim_.rec.counts().recomputes,
                sim_.rec.counts().swaps_out};
  if (spec_.kv.prefix_caching) {
    int64_t evictions = 0;
    for (const Replica& r : sim_.cluster.replicas)
      for (const Engine& e : r.engines) evictions += e.kv.pool.evictions();
    m.prefix_cache = ServingMetrics::PrefixCache{
        sim_.kv.admissions(), sim_.kv.admissions_with_hits(), sim_.rec.counts().cached,
        safe_div(static_cast<double>(sim_.rec.counts().cached), static_cast<double>(run_.tok_prompt)), evictions};
  }
}

// Speculative decoding, LoRA adapters, KV transfers between pools and MoE:
// each present when the scenario uses it.
void SimReport::fill_features(ServingMetrics& m) const {
  double step_s = 0;
  for (const Replica& r : sim_.cluster.replicas) step_s += r.step_s;
  if (sim_.spec_k > 0) {
    // (1 - a^(k+1)) / (1 - a): accepted prefix of k draws plus the target's token.
    const double expected = acceptance_length_at(spec_.speculative.acceptance_rate, sim_.spec_k);
    m.speculative = ServingMetrics::Speculative{
        to_string(spec_.speculative.method),
        sim_.spec_k,
        spec_.speculative.acceptance_rate,
        spec_.speculative.acceptance_assumed,
        sim_.rec.counts().verify_items,
        safe_div(static_cast<double>(sim_.rec.counts().verify_committed), static_cast<double>(sim_.rec.counts().verify_items)),
        expected,
        sim_.rec.counts().spec_rejected,
        safe_div(sim_.pricer.totals().draft_s, step_s),
        spec_.speculative.published};
  }
  const PricedTime& priced = sim_.pricer.totals();
  if (spec_.lora.enabled)
    m.lora = ServingMetrics::Lora{spec_.lora.adapters,
                                  priced.adapter_loads,
                                  priced.lora_load_s,
                                  sim_.pricer.lora_load_time_s() * 1e3,
                                  safe_div(priced.lora_load_s, step_s),
                                  safe_div(priced.lora_gemm_s, step_s)};
  if (spec_.cluster.disaggregated)
    m.kv_transfer = ServingMetrics::KvTransfer{spec_.cluster.kv_transfer_link->id, sim_.stats.transfers(),
                                               sim_.stats.transfer_ms(), sim_.stats.mean_transfer_MiB()};
  if (sim_.s.model.is_moe()) {
    // The hot-expert factor the first pool's steps were priced with, and where it comes from.
    const MoeRouting routing = serving_moe_routing(spec_.moe, sim_.s.model, sim_.cluster.replicas.front().layout, 0);
    m.moe = ServingMetrics::Moe{routing.load_imbalance, spec_.moe.expert_parallel, safe_div(priced.expert_s, step_s),
                                spec_.moe.attention_data_parallel, spec_.moe.redundant_experts,
                                serving_load_imbalance_basis(spec_.moe, routing.experts_per_gpu)};
    m.moe->two_batch_overlap = spec_.moe.two_batch_overlap;
    m.moe->all_to_all_exposed_fraction = safe_div(priced.overlap_exposed_s, priced.overlap_all_to_all_s);
  }
}

// Busy time and achieved utilization, energy (perf/power.hpp: each step's
// GPUs at the power of the step's achieved utilization while they run it,
// idle power for the rest of the run) and cost.
void SimReport::fill_gpu_energy_cost(ServingMetrics& m, double duration, int64_t out_tokens, int64_t in_tokens) const {
  int gpus = 0;
  double busy_energy = 0, idle_energy = 0, busy_gpu_s = 0, step_s = 0;
  for (const Replica& r : sim_.cluster.replicas) {
    const int g = r.layout.tp * r.layout.pp;
    gpus += g;
    const double busy = std::min(r.busy_s, duration);
    busy_gpu_s += busy * g;
    step_s += r.step_s;
    busy_energy += r.busy_energy_J;
    idle_energy += g * r.gpu->idle_power_W * std::max(0.0, duration - r.busy_clock_s);
  }
  const double energy = busy_energy + idle_energy;
  std::map<std::string, double>& fam = m.gpu.busy_time_s_by_family;
  const PricedTime& priced = sim_.pricer.totals();
  for (int f = 0; f < PricedTime::kFamilies; ++f)
    if (priced.family_s[f] > 0) fam[kFamilyNames[f]] = priced.family_s[f];
  if (priced.draft_s > 0) fam["draft_model"] = priced.draft_s;
  if (priced.swap_s > 0) fam["kv_swap"] = priced.swap_s;
  if (priced.lora_load_s > 0) fam["lora_adapter_load"] = priced.lora_load_s;
  if (priced.cpu_s > 0) fam["scheduler_cpu"] = priced.cpu_s;
  m.gpu.busy_fraction = safe_div(busy_gpu_s, duration * gpus);
  m.gpu.mfu = sim_.stats.mfu(duration, gpus);
  m.gpu.mbu = sim_.stats.mbu(duration, gpus);
  m.gpu.step_time_s = step_s;
  m.energy = {energy, busy_energy, idle_energy, safe_div(energy, static_cast<double>(out_tokens)),
              safe_div(energy, duration * gpus)};
  if (spec_.usd_per_gpu_hour) {
    const double usd = *spec_.usd_per_gpu_hour * gpus * duration / 3600.0;
    m.cost = ServingMetrics::Cost{*spec_.usd_per_gpu_hour, usd, safe_div(usd, static_cast<double>(out_tokens) / 1e6),
                                  safe_div(usd, static_cast<double>(in_tokens + out_tokens) / 1e6)};
  }
}

json SimReport::metrics() const { return serving_metrics().to_json(); }

void SimReport::fill_sessions(ServingMetrics& m) const {
  if (!spec_.workload.sessions.enabled) return;
  ServingMetrics::Sessions s;
  s.total = sim_.workload.sessions;
  s.cut_at_max_model_len = sim_.workload.sessions_cut;
  std::vector<double> first, returning, duration, turns;
  int64_t returning_prompt = 0, returning_cached = 0;
  for (size_t i = 0; i < sim_.reqs.size();) {
    size_t j = i;
    bool all_done = true, dropped = false;
    for (; j < sim_.reqs.size() && sim_.reqs[j].spec.session == sim_.reqs[i].spec.session; ++j) {
      const Req& q = sim_.reqs[j];
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
      duration.push_back(static_cast<double>(sim_.reqs[j - 1].completion - sim_.reqs[i].spec.arrival) * 1e-9);
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

void SimReport::fill_offload(ServingMetrics& m) const {
  if (!sim_.kv.has_tiers()) return;
  ServingMetrics::KvOffload o;
  const double prompt = static_cast<double>(std::max<int64_t>(1, run_.tok_prompt));
  o.hbm_hit_tokens = sim_.kv.tiered_hbm_hit_blocks() * block_size_;
  o.hbm_hit_token_fraction = static_cast<double>(o.hbm_hit_tokens) / prompt;
  for (size_t t = 0; t < sim_.kv.tier_specs().size(); ++t) {
    const TierCounters& c = sim_.kv.tier_counters()[t];
    ServingMetrics::OffloadTier ot;
    ot.name = sim_.kv.tier_specs()[t].name;
    ot.hit_tokens = c.hit_blocks * block_size_;
    ot.hit_token_fraction = static_cast<double>(ot.hit_tokens) / prompt;
    ot.stored_blocks = c.stored_blocks;
    ot.dropped_blocks = c.dropped_blocks;
    ot.reloaded_GiB_per_gpu = c.reload_bytes / kBytesPerGiB;
    o.tiers.push_back(ot);
  }
  o.reload_overlap = spec_.kv.reload_overlap == ReloadOverlap::Serial ? "serial" : "layerwise";
  o.reload_time_s = sim_.pricer.totals().reload_s;
  o.exposed_reload_time_s = sim_.pricer.totals().reload_exposed_s;
  m.kv_offload = o;
}

LimitFacts SimReport::limit_facts() const {
  LimitFacts f;
  f.seqs = sim_.seqs;
  for (const Replica& r : sim_.cluster.replicas)
    for (const Engine& e : r.engines) f.kv.merge(e.kv.pool.checks());
  f.capacity_read = sim_.capacity_read;
  // Their decisions read the limits in ways not recorded: LoRA's adapter
  // slots and its waiting list, static batches, offload tiers' admission.
  f.opaque = spec_.lora.enabled || spec_.scheduler.policy == SchedulerPolicy::Static || sim_.kv.has_tiers();
  return f;
}

}  // namespace sightline::serve
