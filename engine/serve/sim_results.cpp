// The simulator's result objects: metrics, deployment and memory, capacity,
// token accounting, time series, per-request records and the Chrome trace.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "mem/inference_memory.hpp"
#include "perf/power.hpp"
#include "serve/moe_step.hpp"
#include "serve/serving_metrics.hpp"
#include "serve/simulation.hpp"
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

bool Simulation::all_completed() const { return completed_ == static_cast<int64_t>(reqs_.size()); }

std::vector<RequestOutcome> Simulation::outcomes() const {
  std::vector<RequestOutcome> out(reqs_.size());
  for (size_t i = 0; i < reqs_.size(); ++i) out[i] = outcome_of(reqs_[i]);
  return out;
}

ServingMetrics Simulation::serving_metrics() const {
  int64_t good = 0;
  int64_t in_tokens = 0, out_tokens = 0;
  for (const Req& q : reqs_) {
    if (q.state != State::Done) continue;
    in_tokens += q.spec.prompt;
    out_tokens += q.spec.output;
    if (spec_.slo.enabled && meets_slo(outcome_of(q), spec_.slo)) ++good;
  }
  const TimeNs end = std::max(last_event_, now_);
  const double duration = std::max(1e-9, static_cast<double>(std::max<TimeNs>(1, (completed_ > 0 ? last_event_ : end) - first_arrival_)) * 1e-9);
  const double span = std::max(1.0, static_cast<double>(now_ - first_arrival_));
  ServingMetrics m;
  const int64_t n = static_cast<int64_t>(reqs_.size());
  m.requests = {n, completed_, dropped_, n - completed_ - dropped_};
  m.duration_s = duration;
  // One value per completed request, one metric at a time in one list sized
  // once: four lists at once were 32 bytes a request at a large run's peak.
  std::vector<double> v;
  v.reserve(static_cast<size_t>(completed_));
  const auto completed_values = [&](auto value_of) -> std::vector<double>& {
    v.clear();
    for (const Req& q : reqs_)
      if (q.state == State::Done) value_of(q);
    return v;
  };
  m.ttft_ms = summarize(completed_values([&](const Req& q) { v.push_back(static_cast<double>(q.first_token - q.spec.arrival) * 1e-6); }));
  m.tpot_ms = summarize(completed_values([&](const Req& q) {
                          if (q.spec.output > 1)
                            v.push_back(static_cast<double>(q.completion - q.first_token) * 1e-6 /
                                        static_cast<double>(q.spec.output - 1));
                        }),
                        completed_ > 0 ? "TPOT is defined over output tokens after the first: no completed "
                                         "request had more than one output token"
                                       : "no request completed");
  m.itl_ms = stats_.itl_ms();
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
void Simulation::fill_rates(ServingMetrics& m, double duration, int64_t in_tokens, int64_t out_tokens, int64_t good) const {
  int gpus = 0;
  for (const Replica& r : replicas_) gpus += r.layout.tp * r.layout.pp;
  m.throughput = {static_cast<double>(completed_) / duration,
                  static_cast<double>(in_tokens) / duration,
                  static_cast<double>(out_tokens) / duration,
                  static_cast<double>(in_tokens + out_tokens) / duration,
                  static_cast<double>(out_tokens) / duration / std::max(1, gpus),
                  gpus};
  if (spec_.slo.enabled) {
    // Each condition of the SLO over the whole run (no warm-up skipped),
    // counted as the steady-state verdict counts it; a long run's verdict.
    SloShareCounter shares(spec_.slo);
    for (const Req& q : reqs_) shares.add(outcome_of(q));
    m.goodput = ServingMetrics::Goodput{static_cast<double>(good) / duration,
                                        safe_div(static_cast<double>(good), static_cast<double>(m.requests.total)),
                                        shares.to_json(), shares.meets()};
  }
}

// Concurrency, the KV cache and the prefix cache.
void Simulation::fill_cache(ServingMetrics& m, double span) const {
  int64_t blocks_total = 0, peak_sum = 0;
  double peak_util = 0;
  for (const Replica& r : replicas_)
    for (const Engine& e : r.engines) {
      blocks_total += e.kv.pool.total();
      peak_sum += e.kv.pool.peak_used();
      peak_util = std::max(peak_util, safe_div(static_cast<double>(e.kv.pool.peak_used()), static_cast<double>(e.kv.pool.total())));
    }
  m.concurrency = {rec_.running_integral() / span,
                   rec_.max_running(),
                   rec_.waiting_integral() / span,
                   rec_.max_waiting(),
                   stats_.mean_batch(),
                   stats_.mean_tokens(),
                   stats_.steps()};
  m.kv_cache = {to_string(spec_.kv.allocation),
                blocks_total,
                peak_sum,
                peak_util,
                safe_div(rec_.kv_used_integral(), span * static_cast<double>(blocks_total)),
                safe_div(rec_.kv_tokens_integral(), rec_.kv_allocated_tokens_integral()),
                rec_.kv_allocated_tokens_integral() > 0 ? 1.0 - rec_.kv_tokens_integral() / rec_.kv_allocated_tokens_integral() : 0.0,
                rec_.counts().preemptions,
                rec_.counts().recomputes,
                rec_.counts().swaps_out};
  if (spec_.kv.prefix_caching) {
    int64_t evictions = 0;
    for (const Replica& r : replicas_)
      for (const Engine& e : r.engines) evictions += e.kv.pool.evictions();
    m.prefix_cache = ServingMetrics::PrefixCache{
        kv_.admissions(), kv_.admissions_with_hits(), rec_.counts().cached,
        safe_div(static_cast<double>(rec_.counts().cached), static_cast<double>(tok_prompt_)), evictions};
  }
}

// Speculative decoding, LoRA adapters, KV transfers between pools and MoE:
// each present when the scenario uses it.
void Simulation::fill_features(ServingMetrics& m) const {
  double step_s = 0;
  for (const Replica& r : replicas_) step_s += r.step_s;
  if (spec_k_ > 0) {
    // (1 - a^(k+1)) / (1 - a): accepted prefix of k draws plus the target's token.
    const double expected = acceptance_length_at(spec_.speculative.acceptance_rate, spec_k_);
    m.speculative = ServingMetrics::Speculative{
        to_string(spec_.speculative.method),
        spec_k_,
        spec_.speculative.acceptance_rate,
        spec_.speculative.acceptance_assumed,
        rec_.counts().verify_items,
        safe_div(static_cast<double>(rec_.counts().verify_committed), static_cast<double>(rec_.counts().verify_items)),
        expected,
        rec_.counts().spec_rejected,
        safe_div(pricer_.totals().draft_s, step_s),
        spec_.speculative.published};
  }
  const PricedTime& priced = pricer_.totals();
  if (spec_.lora.enabled)
    m.lora = ServingMetrics::Lora{spec_.lora.adapters,
                                  priced.adapter_loads,
                                  priced.lora_load_s,
                                  pricer_.lora_load_time_s() * 1e3,
                                  safe_div(priced.lora_load_s, step_s),
                                  safe_div(priced.lora_gemm_s, step_s)};
  if (spec_.cluster.disaggregated)
    m.kv_transfer = ServingMetrics::KvTransfer{spec_.cluster.kv_transfer_link->id, stats_.transfers(),
                                               stats_.transfer_ms(), stats_.mean_transfer_MiB()};
  if (s_.model.is_moe()) {
    // The hot-expert factor the first pool's steps were priced with, and where it comes from.
    const MoeRouting routing = serving_moe_routing(spec_.moe, s_.model, replicas_.front().layout, 0);
    m.moe = ServingMetrics::Moe{routing.load_imbalance, spec_.moe.expert_parallel, safe_div(priced.expert_s, step_s),
                                spec_.moe.attention_data_parallel, spec_.moe.redundant_experts,
                                serving_load_imbalance_basis(spec_.moe, routing.experts_per_gpu)};
  }
}

// Busy time and achieved utilization, energy (perf/power.hpp: each step's
// GPUs at the power of the step's achieved utilization while they run it,
// idle power for the rest of the run) and cost.
void Simulation::fill_gpu_energy_cost(ServingMetrics& m, double duration, int64_t out_tokens, int64_t in_tokens) const {
  int gpus = 0;
  double busy_energy = 0, idle_energy = 0, busy_gpu_s = 0, step_s = 0;
  for (const Replica& r : replicas_) {
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
  const PricedTime& priced = pricer_.totals();
  for (int f = 0; f < PricedTime::kFamilies; ++f)
    if (priced.family_s[f] > 0) fam[kFamilyNames[f]] = priced.family_s[f];
  if (priced.draft_s > 0) fam["draft_model"] = priced.draft_s;
  if (priced.swap_s > 0) fam["kv_swap"] = priced.swap_s;
  if (priced.lora_load_s > 0) fam["lora_adapter_load"] = priced.lora_load_s;
  if (priced.cpu_s > 0) fam["scheduler_cpu"] = priced.cpu_s;
  m.gpu.busy_fraction = safe_div(busy_gpu_s, duration * gpus);
  m.gpu.mfu = stats_.mfu(duration, gpus);
  m.gpu.mbu = stats_.mbu(duration, gpus);
  m.gpu.step_time_s = step_s;
  m.energy = {energy, busy_energy, idle_energy, safe_div(energy, static_cast<double>(out_tokens)),
              safe_div(energy, duration * gpus)};
  if (spec_.usd_per_gpu_hour) {
    const double usd = *spec_.usd_per_gpu_hour * gpus * duration / 3600.0;
    m.cost = ServingMetrics::Cost{*spec_.usd_per_gpu_hour, usd, safe_div(usd, static_cast<double>(out_tokens) / 1e6),
                                  safe_div(usd, static_cast<double>(in_tokens + out_tokens) / 1e6)};
  }
}

json Simulation::metrics() const { return serving_metrics().to_json(); }

}  // namespace sightline::serve
