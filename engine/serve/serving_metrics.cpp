#include "serve/serving_metrics.hpp"

namespace sightline::serve {

namespace {

json utilization_json(const ServingMetrics::Utilization& u) {
  return json{{"over_wall_time", u.over_wall_time}, {"over_busy_time", u.over_busy_time}, {"per_step", u.per_step.to_json()}};
}

}  // namespace

// The sessions and KV offload blocks, each present when the scenario has it.
void ServingMetrics::write_sessions_and_offload(json& m) const {
  if (sessions)
    m["sessions"] = {{"total", sessions->total},
                     {"completed", sessions->completed},
                     {"dropped", sessions->dropped},
                     {"cut_at_max_model_len", sessions->cut_at_max_model_len},
                     {"turns", sessions->turns},
                     {"turns_completed", sessions->turns_completed},
                     {"turns_per_session", sessions->turns_per_session.to_json()},
                     {"ttft_first_turn_ms", sessions->ttft_first_turn_ms.to_json()},
                     {"ttft_returning_turn_ms", sessions->ttft_returning_turn_ms.to_json()},
                     {"session_duration_s", sessions->session_duration_s.to_json()},
                     {"returning_cached_token_fraction", sessions->returning_cached_token_fraction}};
  if (kv_offload) {
    json tiers = json::array();
    for (const OffloadTier& t : kv_offload->tiers)
      tiers.push_back({{"name", t.name},
                       {"hit_tokens", t.hit_tokens},
                       {"hit_token_fraction", t.hit_token_fraction},
                       {"stored_blocks", t.stored_blocks},
                       {"dropped_blocks", t.dropped_blocks},
                       {"reloaded_GiB_per_gpu", t.reloaded_GiB_per_gpu}});
    m["kv_offload"] = {{"hbm_hit_tokens", kv_offload->hbm_hit_tokens},
                       {"hbm_hit_token_fraction", kv_offload->hbm_hit_token_fraction},
                       {"tiers", tiers},
                       {"reload_overlap", kv_offload->reload_overlap},
                       {"reload_time_s", kv_offload->reload_time_s},
                       {"exposed_reload_time_s", kv_offload->exposed_reload_time_s}};
  }
}

// Speculative decoding, LoRA adapters, KV transfers and MoE, each present
// when the scenario uses it.
void ServingMetrics::write_features(json& m) const {
  if (speculative)
    m["speculative"] = {{"method", speculative->method},
                        {"k", speculative->k},
                        {"acceptance_rate", speculative->acceptance_rate},
                        {"acceptance_rate_assumed", speculative->acceptance_rate_assumed},
                        {"verify_steps", speculative->verify_steps},
                        {"tokens_per_verify_step", speculative->tokens_per_verify_step},
                        {"expected_tokens_per_verify_step", speculative->expected_tokens_per_verify_step},
                        {"rejected_tokens", speculative->rejected_tokens},
                        {"draft_time_fraction", speculative->draft_time_fraction}};
  if (speculative && speculative->published) {
    const AcceptanceEstimate& e = *speculative->published;
    m["speculative"]["acceptance_published"] = {{"basis", e.basis},
                                                {"rate_low", e.low},
                                                {"rate_high", e.high},
                                                {"rows", e.rows}};
  }
  if (lora)
    m["lora"] = {{"adapters", lora->adapters},
                 {"adapter_loads", lora->adapter_loads},
                 {"load_time_s", lora->load_time_s},
                 {"load_time_per_adapter_ms", lora->load_time_per_adapter_ms},
                 {"load_time_fraction", lora->load_time_fraction},
                 {"lora_gemm_time_fraction", lora->lora_gemm_time_fraction}};
  if (kv_transfer)
    m["kv_transfer"] = {{"link", kv_transfer->link},
                        {"transfers", kv_transfer->transfers},
                        {"transfer_ms", kv_transfer->transfer_ms.to_json()},
                        {"MiB_per_transfer", kv_transfer->MiB_per_transfer}};
  if (moe) {
    m["moe"] = {{"load_imbalance", moe->load_imbalance},
                {"load_imbalance_basis", moe->load_imbalance_basis},
                {"expert_parallel", moe->expert_parallel},
                {"expert_time_fraction", moe->expert_time_fraction}};
    if (moe->attention_data_parallel > 1) m["moe"]["attention_data_parallel"] = moe->attention_data_parallel;
    if (moe->redundant_experts > 0) m["moe"]["redundant_experts"] = moe->redundant_experts;
    if (moe->two_batch_overlap)
      m["moe"]["two_batch_overlap"] = {{"all_to_all_exposed_fraction", moe->all_to_all_exposed_fraction}};
  }
}

json ServingMetrics::to_json() const {
  json m;
  m["requests"] = {{"total", requests.total},
                   {"completed", requests.completed},
                   {"dropped", requests.dropped},
                   {"unfinished", requests.unfinished}};
  m["duration_s"] = duration_s;
  m["ttft_ms"] = ttft_ms.to_json();
  m["tpot_ms"] = tpot_ms.to_json();
  m["itl_ms"] = itl_ms.to_json();
  m["e2e_s"] = e2e_s.to_json();
  m["queueing_ms"] = queueing_ms.to_json();
  m["decode_tokens_per_s_per_request"] =
      decode_tokens_per_s_per_request ? json(*decode_tokens_per_s_per_request) : json(nullptr);
  m["throughput"] = {{"requests_per_s", throughput.requests_per_s},
                     {"input_tokens_per_s", throughput.input_tokens_per_s},
                     {"output_tokens_per_s", throughput.output_tokens_per_s},
                     {"total_tokens_per_s", throughput.total_tokens_per_s},
                     {"output_tokens_per_s_per_gpu", throughput.output_tokens_per_s_per_gpu},
                     {"gpus", throughput.gpus}};
  if (goodput)
    m["goodput"] = {{"requests_per_s", goodput->requests_per_s},
                    {"slo_attainment", goodput->slo_attainment},
                    {"conditions", goodput->conditions},
                    {"meets_slo", goodput->meets_slo}};
  else
    m["goodput"] = nullptr;
  m["concurrency"] = {{"running_mean", concurrency.running_mean},
                      {"running_max", concurrency.running_max},
                      {"waiting_mean", concurrency.waiting_mean},
                      {"waiting_max", concurrency.waiting_max},
                      {"batch_size_mean", concurrency.batch_size_mean},
                      {"tokens_per_step_mean", concurrency.tokens_per_step_mean},
                      {"steps", concurrency.steps}};
  m["kv_cache"] = {{"allocation", kv_cache.allocation},
                   {"blocks_total", kv_cache.blocks_total},
                   {"peak_blocks_used", kv_cache.peak_blocks_used},
                   {"peak_block_utilization", kv_cache.peak_block_utilization},
                   {"mean_block_utilization", kv_cache.mean_block_utilization},
                   {"token_utilization", kv_cache.token_utilization},
                   {"fragmentation", kv_cache.fragmentation},
                   {"preemptions", kv_cache.preemptions},
                   {"recomputes", kv_cache.recomputes},
                   {"swaps_out", kv_cache.swaps_out}};
  if (prefix_cache)
    m["prefix_cache"] = {{"admissions", prefix_cache->admissions},
                         {"admissions_with_hits", prefix_cache->admissions_with_hits},
                         {"cached_tokens", prefix_cache->cached_tokens},
                         {"cached_token_fraction", prefix_cache->cached_token_fraction},
                         {"evicted_blocks", prefix_cache->evicted_blocks}};
  write_sessions_and_offload(m);
  write_features(m);
  json fam = json::object();
  for (const auto& [name, s] : gpu.busy_time_s_by_family) fam[name] = s;
  m["gpu"] = {{"busy_fraction", gpu.busy_fraction},
              {"mfu", utilization_json(gpu.mfu)},
              {"mbu", utilization_json(gpu.mbu)},
              {"step_time_s", gpu.step_time_s},
              {"busy_time_s_by_family", fam}};
  m["energy"] = {{"total_J", energy.total_J},
                 {"busy_J", energy.busy_J},
                 {"idle_J", energy.idle_J},
                 {"per_output_token_J", energy.per_output_token_J},
                 {"mean_power_per_gpu_W", energy.mean_power_per_gpu_W},
                 {"model", "per GPU: idle_power_W + (tdp_W - idle_power_W) x min(1, MFU + 0.5 x MBU) while a step runs "
                           "(the step's own MFU and MBU), idle_power_W otherwise"}};
  if (cost)
    m["cost"] = {{"usd_per_gpu_hour", cost->usd_per_gpu_hour},
                 {"usd_total", cost->usd_total},
                 {"usd_per_million_output_tokens", cost->usd_per_million_output_tokens},
                 {"usd_per_million_tokens", cost->usd_per_million_tokens}};
  else
    m["cost"] = nullptr;
  return m;
}

}  // namespace sightline::serve
