#include "scenario/policy_registry.hpp"

namespace sightline::serve {

const std::vector<RegistryEntry>& arrival_processes() {
  static const std::vector<RegistryEntry> r = {
      {"poisson", "exponential inter-arrival times at rate_qps"},
      {"gamma", "gamma inter-arrival times at rate_qps with coefficient of variation cv (burstiness; cv 1 = Poisson)"},
      {"fixed", "one request every 1/rate_qps seconds"},
      {"all_at_once", "every request arrives at time 0 (offline batch)"},
      {"trace", "replay inline CSV rows arrival_s,prompt_tokens,output_tokens[,prefix_group,prefix_tokens]"},
  };
  return r;
}

const std::vector<RegistryEntry>& length_distributions() {
  static const std::vector<RegistryEntry> r = {
      {"fixed", "always value"},
      {"uniform", "uniform integers in [min, max]"},
      {"normal", "normal(mean, stddev), rounded and clamped to [min, max]"},
      {"lognormal", "lognormal with the given mean and cv (stddev/mean), rounded and clamped to [min, max]"},
      {"zipf", "zipf over [min, max]: P(min + i) proportional to (i + 1)^-theta"},
  };
  return r;
}

const std::vector<RegistryEntry>& routers() {
  static const std::vector<RegistryEntry> r = {
      {"round_robin", "replicas in turn"},
      {"least_outstanding", "the replica with the fewest unfinished requests"},
      {"least_kv_load", "the replica with the smallest share of KV blocks used or asked for by its queue"},
  };
  return r;
}

const std::vector<RegistryEntry>& pool_roles() {
  static const std::vector<RegistryEntry> r = {
      {"mixed", "prefill and decode on the same replicas"},
      {"prefill", "disaggregated: prompts only; the KV cache then moves to a decode replica"},
      {"decode", "disaggregated: decodes only, after the KV transfer"},
  };
  return r;
}

const std::vector<RegistryEntry>& scheduler_policies() {
  static const std::vector<RegistryEntry> r = {
      {"continuous", "iteration-level batching with vLLM limits (max_num_seqs, max_num_batched_tokens, KV watermark)"},
      {"chunked_prefill", "Sarathi-style: a token budget (chunk_size) per step, prompts split into chunks"},
      {"static", "request-level batches padded to the longest; a batch runs to its end before the next starts"},
  };
  return r;
}

const std::vector<RegistryEntry>& scheduler_priorities() {
  static const std::vector<RegistryEntry> r = {
      {"prefill_first", "admitted prompts run in their own step and stall decodes (vLLM v0 default)"},
      {"decode_first", "running decodes are always scheduled; prompts fill the remaining token budget (stall-free)"},
      {"fcfs", "the token budget goes to requests in arrival order, running or waiting"},
  };
  return r;
}

const std::vector<RegistryEntry>& kv_allocations() {
  static const std::vector<RegistryEntry> r = {
      {"paged", "PagedAttention: blocks allocated on demand as sequences grow"},
      {"contiguous", "each request reserves max_model_len tokens on admission (reports fragmentation)"},
  };
  return r;
}

const std::vector<RegistryEntry>& preemption_modes() {
  static const std::vector<RegistryEntry> r = {
      {"recompute", "free the victim's blocks; its prompt and output so far are prefilled again"},
      {"swap", "copy the victim's blocks to host memory over PCIe and back (falls back to recompute when full)"},
  };
  return r;
}

const std::vector<RegistryEntry>& speculative_methods() {
  static const std::vector<RegistryEntry> r = {
      {"draft", "a smaller draft model proposes k tokens; the target verifies k+1 in one pass"},
      {"ngram", "prompt-lookup (n-gram) proposals at negligible cost"},
  };
  return r;
}

const std::vector<RegistryEntry>& lora_targets() {
  static const std::vector<RegistryEntry> r = {
      {"attention", "adapters on the QKV and output projections"},
      {"all_linear", "adapters on the attention and MLP projections"},
  };
  return r;
}

std::vector<std::string> registry_names(const std::vector<RegistryEntry>& r) {
  std::vector<std::string> out;
  for (const auto& e : r) out.emplace_back(e.name);
  return out;
}

json registries_json() {
  auto list = [](const std::vector<RegistryEntry>& r) {
    json a = json::array();
    for (const auto& e : r) a.push_back({{"name", e.name}, {"description", e.description}});
    return a;
  };
  json km = json::array();
  for (const auto& e : key_metric_registry())
    km.push_back({{"id", e.id}, {"label", e.label}, {"unit", e.unit}, {"pointer", e.pointer}});
  return {{"arrival_processes", list(arrival_processes())},
          {"length_distributions", list(length_distributions())},
          {"routers", list(routers())},
          {"pool_roles", list(pool_roles())},
          {"scheduler_policies", list(scheduler_policies())},
          {"scheduler_priorities", list(scheduler_priorities())},
          {"kv_allocations", list(kv_allocations())},
          {"preemption_modes", list(preemption_modes())},
          {"speculative_methods", list(speculative_methods())},
          {"lora_targets", list(lora_targets())},
          {"key_metrics", km}};
}

const std::vector<KeyMetricEntry>& key_metric_registry() {
  static const std::vector<KeyMetricEntry> r = {
      {"e2e_p50_s", "P50 E2E latency", "s", "/metrics/e2e_s/p50"},
      {"e2e_p99_s", "P99 E2E latency", "s", "/metrics/e2e_s/p99"},
      {"e2e_mean_s", "mean E2E latency", "s", "/metrics/e2e_s/mean"},
      {"ttft_p50_ms", "P50 TTFT", "ms", "/metrics/ttft_ms/p50"},
      {"ttft_p99_ms", "P99 TTFT", "ms", "/metrics/ttft_ms/p99"},
      {"ttft_mean_ms", "mean TTFT", "ms", "/metrics/ttft_ms/mean"},
      {"ttft_stddev_ms", "TTFT standard deviation", "ms", "/metrics/ttft_ms/stddev"},
      {"tpot_p50_ms", "P50 TPOT", "ms", "/metrics/tpot_ms/p50"},
      {"tpot_p99_ms", "P99 TPOT", "ms", "/metrics/tpot_ms/p99"},
      {"tpot_mean_ms", "mean TPOT", "ms", "/metrics/tpot_ms/mean"},
      {"itl_p99_ms", "P99 inter-token latency", "ms", "/metrics/itl_ms/p99"},
      {"itl_max_ms", "max inter-token latency", "ms", "/metrics/itl_ms/max"},
      {"decode_tokens_per_s", "decode speed per request (1/mean TPOT)", "tokens/s",
       "/metrics/decode_tokens_per_s_per_request"},
      {"output_tokens_per_s", "throughput (output tokens)", "tokens/s", "/metrics/throughput/output_tokens_per_s"},
      {"total_tokens_per_s", "throughput (prompt + output tokens)", "tokens/s", "/metrics/throughput/total_tokens_per_s"},
      {"requests_per_s", "throughput", "req/s", "/metrics/throughput/requests_per_s"},
      {"output_tokens_per_s_per_gpu", "throughput per GPU (output tokens)", "tokens/s",
       "/metrics/throughput/output_tokens_per_s_per_gpu"},
      {"goodput_requests_per_s", "goodput under the SLO", "req/s", "/metrics/goodput/requests_per_s"},
      {"slo_attainment", "share of requests within the SLO", "fraction", "/metrics/goodput/slo_attainment"},
      {"max_qps", "max sustainable QPS under the SLO", "req/s", "/max_qps/qps"},
      {"queue_depth_max", "max queue depth (waiting requests)", "requests", "/metrics/concurrency/waiting_max"},
      {"queue_depth_mean", "mean queue depth (waiting requests)", "requests", "/metrics/concurrency/waiting_mean"},
      {"queueing_p99_ms", "P99 queueing delay", "ms", "/metrics/queueing_ms/p99"},
      {"running_max", "max concurrent running requests", "requests", "/metrics/concurrency/running_max"},
      {"running_mean", "mean concurrent running requests", "requests", "/metrics/concurrency/running_mean"},
      {"batch_size_mean", "mean batch size", "requests", "/metrics/concurrency/batch_size_mean"},
      {"gpu_utilization", "GPU busy fraction", "fraction", "/metrics/gpu/busy_fraction"},
      {"kv_peak_utilization", "peak KV blocks in use", "fraction", "/metrics/kv_cache/peak_block_utilization"},
      {"kv_memory_utilization", "KV memory holding tokens (of allocated)", "fraction",
       "/metrics/kv_cache/token_utilization"},
      {"kv_fragmentation", "KV memory allocated but holding no token", "fraction", "/metrics/kv_cache/fragmentation"},
      {"preemptions", "preemptions", "count", "/metrics/kv_cache/preemptions"},
      {"kv_per_token_KiB", "KV cache per token (all GPUs of a replica)", "KiB", "/capacity/kv_KiB_per_token"},
      {"kv_GiB_per_max_len_request", "KV cache of one max_model_len request", "GiB",
       "/capacity/kv_GiB_per_max_len_request"},
      {"kv_reduction_vs_mha", "KV cache reduction vs multi-head attention", "x", "/capacity/kv_reduction_vs_mha"},
      {"max_concurrent_at_max_len", "max concurrent max_model_len requests", "requests",
       "/capacity/max_concurrent_at_max_len"},
      {"kv_capacity_tokens", "KV cache capacity per replica", "tokens", "/capacity/kv_tokens_per_replica"},
      {"weights_GiB", "weights per GPU", "GiB", "/memory_per_gpu/0/weights_GiB"},
      {"prefix_hit_rate", "prefix cache: prompt tokens served from cache", "fraction",
       "/metrics/prefix_cache/cached_token_fraction"},
      {"spec_tokens_per_step", "speculative: tokens per verification step", "tokens",
       "/metrics/speculative/tokens_per_verify_step"},
      {"lora_load_fraction", "adapter loading share of busy time", "fraction", "/metrics/lora/load_time_fraction"},
      {"lora_adapter_loads", "adapter loads", "count", "/metrics/lora/adapter_loads"},
      {"lora_gemm_fraction", "LoRA GEMM share of busy time", "fraction", "/metrics/lora/lora_gemm_time_fraction"},
      {"kv_transfer_mean_ms", "mean KV transfer time", "ms", "/metrics/kv_transfer/transfer_ms/mean"},
      {"moe_expert_time_fraction", "expert GEMM share of busy time", "fraction", "/metrics/moe/expert_time_fraction"},
      {"energy_per_output_token_J", "energy per output token", "J", "/metrics/energy/per_output_token_J"},
      {"usd_per_million_output_tokens", "cost per million output tokens", "USD", "/metrics/cost/usd_per_million_output_tokens"},
      {"quant_decode_speedup", "decode step speedup vs unquantized weights (same GPUs, batch 1)", "x",
       "/quantization/decode_speedup"},
      {"quant_weight_reduction", "weight memory reduction vs unquantized", "x", "/quantization/weight_reduction"},
      {"quant_unquantized_fits", "unquantized weights fit these GPUs", "bool", "/quantization/unquantized_fits"},
      {"compare_throughput_ratio", "output throughput vs baseline", "x", "/compare/ratio/output_tokens_per_s"},
      {"compare_goodput_ratio", "goodput vs baseline", "x", "/compare/ratio/goodput_requests_per_s"},
      {"compare_ttft_mean_ratio", "mean TTFT vs baseline", "x", "/compare/ratio/ttft_mean_ms"},
      {"compare_ttft_p99_ratio", "P99 TTFT vs baseline", "x", "/compare/ratio/ttft_p99_ms"},
      {"compare_ttft_stddev_ratio", "TTFT standard deviation vs baseline", "x", "/compare/ratio/ttft_stddev_ms"},
      {"compare_tpot_mean_ratio", "mean TPOT vs baseline", "x", "/compare/ratio/tpot_mean_ms"},
      {"compare_tpot_p99_ratio", "P99 TPOT vs baseline", "x", "/compare/ratio/tpot_p99_ms"},
      {"compare_e2e_p50_ratio", "P50 E2E vs baseline", "x", "/compare/ratio/e2e_p50_s"},
      {"compare_running_mean_ratio", "mean concurrent requests vs baseline", "x", "/compare/ratio/running_mean"},
      {"compare_running_max_ratio", "max concurrent requests vs baseline", "x", "/compare/ratio/running_max"},
      {"compare_kv_capacity_ratio", "KV capacity (tokens per replica) vs baseline", "x",
       "/compare/ratio/kv_tokens_per_replica"},
      {"compare_kv_peak_ratio", "peak KV blocks in use vs baseline", "x", "/compare/ratio/kv_peak_blocks_used"},
      {"compare_throughput_per_gpu_ratio", "output throughput per GPU vs baseline", "x",
       "/compare/ratio/output_tokens_per_s_per_gpu"},
      {"compare_decode_speedup", "decode speedup vs baseline (baseline TPOT / TPOT)", "x", "/compare/speedup/tpot_mean"},
      {"compare_e2e_speedup", "E2E speedup vs baseline (baseline E2E / E2E)", "x", "/compare/speedup/e2e_mean"},
  };
  return r;
}

const KeyMetricEntry* find_key_metric(const std::string& id) {
  for (const auto& e : key_metric_registry())
    if (id == e.id) return &e;
  return nullptr;
}

}  // namespace sightline::serve
