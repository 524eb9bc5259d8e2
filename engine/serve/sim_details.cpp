// SimReport::details: a serving run's deployment, memory, KV capacity, token
// accounting, warnings, limits and (detailed runs) records, one step each.
#include "serve/sim_details.hpp"

#include <algorithm>
#include <cstdio>

#include "mem/inference_memory.hpp"
#include "serve/sim_report.hpp"

namespace sightline::serve {

json ServingCapacity::to_json() const {
  json c = {{"kv_bytes_per_token_per_gpu", kv_bytes_per_token_per_gpu},
            {"kv_KiB_per_token", kv_KiB_per_token},
            {"kv_GiB_per_max_len_request", kv_GiB_per_max_len_request},
            {"kv_tokens_per_replica", kv_tokens_per_replica},
            {"kv_blocks_per_replica", kv_blocks_per_replica},
            {"max_model_len", max_model_len},
            {"max_concurrent_at_max_len", max_concurrent_at_max_len}};
  if (versus_mha) {
    c["kv_KiB_per_token_if_mha"] = versus_mha->kv_KiB_per_token_if_mha;
    c["kv_reduction_vs_mha"] = versus_mha->kv_reduction_vs_mha;
    c["num_heads"] = versus_mha->num_heads;
    c["num_kv_heads"] = versus_mha->num_kv_heads;
  }
  return c;
}

json ServingLimits::to_json() const {
  return {{"events", events},
          {"max_events", max_events},
          {"simulated_s", simulated_s},
          {"max_sim_time_s", max_sim_time_s},
          {"limit_hit", limit_hit.empty() ? json(nullptr) : json(limit_hit)}};
}

SimDetails SimReport::details() const {
  SimDetails d;
  d.deployment = deployment_json();
  d.memory_per_gpu = json::array();
  for (size_t i = 0; i < spec_.cluster.pools.size(); ++i) {
    json mem = sim_.cluster.pool_memory[i].to_json();
    mem["pool"] = spec_.cluster.pools[i].name;
    d.memory_per_gpu.push_back(mem);
  }
  d.first_pool_weights_GiB = sim_.cluster.pool_memory.front().weights_GiB;
  d.capacity = replica_capacity();
  d.tokens = token_accounting();
  d.warnings = run_warnings();
  d.limits = {run_.events, spec_.limits.max_events, to_s(run_.now), spec_.limits.max_sim_time_s, run_.limit_hit};
  if (sim_.detailed) {
    d.time_series = sim_.trace.series_json();
    d.requests = request_records();
    if (spec_.outputs.trace) d.trace = sim_.trace.chrome_trace(sim_.cluster.replicas, spec_.cluster.pools);
  }
  return d;
}

json SimReport::deployment_json() const {
  json pools = json::array();
  int gpus = 0;
  for (const PoolSpec& p : spec_.cluster.pools) {
    const GpuSpec& gpu = p.gpu ? *p.gpu : sim_.s.hardware.gpu;
    gpus += p.replicas * p.layout.tp * p.layout.pp;
    pools.push_back({{"name", p.name},
                     {"role", to_string(p.role)},
                     {"replicas", p.replicas},
                     {"tp", p.layout.tp},
                     {"pp", p.layout.pp},
                     {"gpu", gpu.id}});
  }
  json d = {{"gpus", gpus},
            {"pools", pools},
            {"router", to_string(spec_.cluster.router)},
            {"scheduler", to_string(spec_.scheduler.policy)},
            {"priority", to_string(spec_.scheduler.priority)},
            {"kv_allocation", to_string(spec_.kv.allocation)},
            {"block_size", block_size_},
            {"weights", dtype_name(sim_.s.precision.weights)},
            {"kv_cache", dtype_name(sim_.s.precision.kv_cache)},
            {"speculative", to_string(spec_.speculative.method)},
            {"prefix_caching", spec_.kv.prefix_caching},
            {"disaggregated", spec_.cluster.disaggregated}};
  if (spec_.colocated.enabled) d["colocated_model"] = spec_.colocated.model->name;
  // Said where the scenario left its scheduler to its stack.
  if (!spec_.scheduler.policy_source.empty()) d["scheduler_source"] = spec_.scheduler.policy_source;
  // Said where a request's KV is reserved to completion, and why where its stack chose it.
  if (spec_.kv.admission != KvAdmission::OnDemand) d["kv_admission"] = to_string(spec_.kv.admission);
  if (!spec_.kv.admission_source.empty()) d["kv_admission_source"] = spec_.kv.admission_source;
  // Said where the scenario left the running-batch limit to its stack.
  if (!spec_.scheduler.max_num_seqs_source.empty()) {
    d["max_num_seqs"] = spec_.scheduler.max_num_seqs;
    d["max_num_seqs_source"] = spec_.scheduler.max_num_seqs_source;
  }
  return d;
}

// Capacity of one replica of the first pool.
ServingCapacity SimReport::replica_capacity() const {
  const PoolSpec& p = spec_.cluster.pools.front();
  const EngineMemory& em = sim_.cluster.pool_memory.front().engines.front();
  const double per_token_replica =
      kv_bytes_per_token_per_gpu(sim_.s.model, sim_.s.precision, p.layout.tp, sim_.s.model.num_layers) * p.layout.tp;
  ServingCapacity c;
  c.kv_bytes_per_token_per_gpu = em.kv_bytes_per_token;
  c.kv_KiB_per_token = per_token_replica / 1024.0;
  c.kv_GiB_per_max_len_request = per_token_replica * static_cast<double>(spec_.kv.max_model_len) / kBytesPerGiB;
  c.kv_tokens_per_replica = em.blocks * block_size_;
  c.kv_blocks_per_replica = em.blocks;
  c.max_model_len = spec_.kv.max_model_len;
  c.max_concurrent_at_max_len =
      em.blocks / kv_blocks_for(windowed_pages(em.kv_bytes_per_token, em.windowed), block_size_, spec_.kv.max_model_len);
  if (!sim_.s.model.mla.enabled) {
    const double mha = 2.0 * sim_.s.model.num_layers * sim_.s.model.num_heads * static_cast<double>(sim_.s.model.head_dim) *
                       dtype_bytes(sim_.s.precision.kv_cache);
    const double actual = 2.0 * sim_.s.model.num_layers * sim_.s.model.num_kv_heads * static_cast<double>(sim_.s.model.head_dim) *
                          dtype_bytes(sim_.s.precision.kv_cache);
    c.versus_mha = ServingCapacity::VersusMha{mha / 1024.0, actual > 0 ? mha / actual : 0.0, sim_.s.model.num_heads,
                                              sim_.s.model.num_kv_heads};
  }
  return c;
}

// Token accounting over completed requests: each put prompt + output - 1
// tokens into its KV cache, minus prefix-cache hits, plus what recompute
// preemptions threw away.
json SimReport::token_accounting() const {
  int64_t prompt = 0, output = 0, processed = 0, cached = 0, discarded = 0, violations = 0, completed = 0;
  for (const Req& q : sim_.reqs) {
    if (q.state != State::Done) continue;
    ++completed;
    prompt += q.spec.prompt;
    output += q.spec.output;
    processed += q.processed;
    cached += q.cached_tokens;
    discarded += q.discarded;
    if (q.processed != q.spec.prompt + q.spec.output - 1 - q.cached_tokens + q.discarded) ++violations;
  }
  return {{"prompt", prompt},
          {"output", output},
          {"processed", processed},
          {"cached_prefix", cached},
          {"discarded_by_preemption", discarded},
          {"padding", sim_.rec.counts().padding},
          {"speculative_rejected", sim_.rec.counts().spec_rejected},
          {"expected_processed", prompt + output - completed - cached + discarded},
          {"conservation_violations", violations}};
}

std::vector<std::string> SimReport::run_warnings() const {
  std::vector<std::string> warnings;
  const int64_t total = static_cast<int64_t>(sim_.reqs.size());
  if (sim_.reqs.empty()) warnings.push_back("the workload produced no requests (duration_s shorter than the first arrival)");
  if (sim_.workload.truncated_outputs > 0)
    warnings.push_back(std::to_string(sim_.workload.truncated_outputs) +
                       " requests had their output shortened to fit max_model_len");
  if (sim_.workload.capped)
    warnings.push_back("the workload's duration asked for more than limits.max_requests (" +
                       std::to_string(spec_.limits.max_requests) + ") requests; generation stopped there");
  if (!run_.limit_hit.empty()) {
    // The requests due after the stop never arrived (still Pending): no judge
    // reads them (serve/steady_state.hpp arrived_by_arrival), and the warning says so.
    const int64_t due_after = run_.arrivals_pending;
    warnings.push_back("the run stopped at limits." + run_.limit_hit + "; " +
                       std::to_string(total - run_.completed - run_.dropped - due_after) +
                       " requests that arrived are unfinished, and " + std::to_string(due_after) +
                       " were due after the stop (no figure reads them)");
  }
  else if (run_.stopped)
    warnings.push_back("the run stopped at the benchmark's end; " + std::to_string(total - run_.completed - run_.dropped) +
                       " requests in flight or not yet arrived are in no figure");
  else if (run_.completed + run_.dropped < total)
    warnings.push_back(std::to_string(total - run_.completed - run_.dropped) + " requests could never be scheduled (unfinished)");
  if (run_.dropped > 0) {
    std::vector<std::pair<std::string, int64_t>> reasons;
    for (const Req& q : sim_.reqs) {
      if (q.state != State::Dropped) continue;
      const char* reason = drop_reason_text(q.drop_reason);
      auto it = std::find_if(reasons.begin(), reasons.end(), [&](const auto& p) { return p.first == reason; });
      if (it == reasons.end()) reasons.emplace_back(reason, 1);
      else ++it->second;
    }
    for (const auto& [reason, count] : reasons) warnings.push_back(std::to_string(count) + " requests dropped: " + reason);
  }
  if (sim_.spec_k > 0 && spec_.speculative.acceptance_assumed) {
    char what[200];
    std::snprintf(what, sizeof what, "%.2f", spec_.speculative.acceptance_rate);
    warnings.push_back(std::string("speculative decoding: acceptance per drafted position assumed ") + what +
                       (spec_.speculative.method == SpecMethod::Mtp
                            ? " (a generic default; the DeepSeek-V3 report measured 85-90% for its MTP module's "
                              "second token, arXiv 2412.19437 section 5.4.3)"
                            : " (a generic default)") +
                       "; it depends on the model and the data: set /serving/speculative/acceptance_rate");
  }
  if (sim_.trace.truncated())
    warnings.push_back("the trace keeps the first " + std::to_string(spec_.outputs.trace_max_steps) +
                       " steps (outputs.trace_max_steps)");
  return warnings;
}

json SimReport::request_records() const {
  json rows = json::array();
  const int64_t limit = std::min<int64_t>(spec_.outputs.max_request_records, static_cast<int64_t>(sim_.reqs.size()));
  auto t_s = [](TimeNs t) { return t < 0 ? json(nullptr) : json(to_s(t)); };
  for (int64_t i = 0; i < limit; ++i) {
    const Req& q = sim_.reqs[static_cast<size_t>(i)];
    const char* state = q.state == State::Done ? "completed" : q.state == State::Dropped ? "dropped" : "unfinished";
    rows.push_back(json::array({i, t_s(q.spec.arrival), q.spec.prompt, q.spec.output, t_s(q.first_scheduled),
                                t_s(q.first_token), t_s(q.completion), q.preemptions, q.cached_tokens, q.replica, state}));
  }
  return {{"columns", json::array({"id", "arrival_s", "prompt_tokens", "output_tokens", "first_scheduled_s",
                                   "first_token_s", "completion_s", "preemptions", "cached_tokens", "replica", "state"})},
          {"rows", rows},
          {"total", sim_.reqs.size()},
          {"truncated", limit < static_cast<int64_t>(sim_.reqs.size())}};
}

}  // namespace sightline::serve
