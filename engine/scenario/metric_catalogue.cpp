#include "scenario/metric_catalogue.hpp"

namespace sightline {

namespace {
// The entry of `list` that `match` accepts; nullptr when none does.
template <class T, class Match>
const T* find_in(const std::vector<T>& list, Match match) {
  for (const T& e : list)
    if (match(e)) return &e;
  return nullptr;
}

constexpr MetricKind kLatency = MetricKind::kLatency;
constexpr MetricKind kServing = MetricKind::kServing;
constexpr MetricKind kTraining = MetricKind::kTraining;
constexpr MetricKind kDeploymentSearch = MetricKind::kDeploymentSearch;
constexpr MetricKind kTrainingSearch = MetricKind::kTrainingSearch;
}  // namespace

const char* metric_kind_name(MetricKind kind) {
  switch (kind) {
    case MetricKind::kLatency: return "latency";
    case MetricKind::kServing: return "serving";
    case MetricKind::kTraining: return "training";
    case MetricKind::kDeploymentSearch: return "deployment_search";
    case MetricKind::kTrainingSearch: return "training_search";
  }
  return "";
}

const std::vector<MetricInfo>& metric_catalogue() {
  static const std::vector<MetricInfo> list = {
      {kLatency, "ttft_ms", "Time to first token", "ms", "/metrics/ttft_ms", "", "prompt processing of the whole batch"},
      {kLatency, "tpot_ms", "Time per output token", "ms", "/metrics/tpot_ms", "", "one decode step"},
      {kLatency, "e2e_ms", "End-to-end latency", "ms", "/metrics/e2e_ms", "", "first token plus every decode step"},
      {kLatency, "output_tokens_per_s", "Output throughput", "tokens/s", "/metrics/output_tokens_per_s", "", "output tokens of the batch / end-to-end time"},
      {kLatency, "output_tokens_per_s_per_gpu", "Output throughput per GPU", "tokens/s", "/metrics/output_tokens_per_s_per_gpu", "", ""},
      {kLatency, "decode_tokens_per_s", "Decode throughput", "tokens/s", "/metrics/decode_tokens_per_s", "", "batch / time per output token"},
      {kLatency, "prefill_tokens_per_s", "Prefill throughput", "tokens/s", "/metrics/prefill_tokens_per_s", "", "prompt tokens of the batch / time to first token"},
      {kLatency, "energy_J_per_output_token", "Energy per output token", "J", "/metrics/energy_J_per_output_token", "",
       "all GPUs, power from each step's MFU and MBU (the serving simulator's power model)"},
      {kLatency, "prefill_mfu", "Prefill MFU", "fraction", "/metrics/prefill_mfu", "",
       "the prefill step's FLOPs (each operator at the dense peak of its compute dtype) / (its time x peak)"},
      {kLatency, "prefill_mbu", "Prefill MBU", "fraction", "/metrics/prefill_mbu", "", "the prefill step's HBM bytes / (its time x peak bandwidth)"},
      {kLatency, "decode_mfu", "Decode MFU", "fraction", "/metrics/decode_mfu", "", "the decode steps' FLOPs at dense peak / their time"},
      {kLatency, "decode_mbu", "Decode MBU", "fraction", "/metrics/decode_mbu", "",
       "the decode steps' HBM bytes at peak bandwidth / their time: how close decode runs to the memory roofline"},
      {kLatency, "prefill_compute_ms", "Prefill floor (FLOPs at peak)", "ms", "/floors/prefill_compute_ms", "", "the prefill's FLOPs at peak tensor-core throughput"},
      {kLatency, "decode_weight_read_ms", "Decode floor (weights / HBM bandwidth)", "ms", "/floors/decode_weight_read_ms", "", "reading every weight once per decode step at full HBM bandwidth"},
      {kLatency, "usd_per_million_output_tokens", "Cost per million output tokens", "USD", "/metrics/usd_per_million_output_tokens", "gpu_hour_usd", ""},
      {kServing, "e2e_p50_s", "P50 E2E latency", "s", "/metrics/e2e_s/p50", "", ""},
      {kServing, "e2e_p99_s", "P99 E2E latency", "s", "/metrics/e2e_s/p99", "", ""},
      {kServing, "e2e_mean_s", "mean E2E latency", "s", "/metrics/e2e_s/mean", "", ""},
      {kServing, "ttft_p50_ms", "P50 TTFT", "ms", "/metrics/ttft_ms/p50", "", ""},
      {kServing, "ttft_p99_ms", "P99 TTFT", "ms", "/metrics/ttft_ms/p99", "", ""},
      {kServing, "ttft_mean_ms", "mean TTFT", "ms", "/metrics/ttft_ms/mean", "", ""},
      {kServing, "ttft_stddev_ms", "TTFT standard deviation", "ms", "/metrics/ttft_ms/stddev", "", ""},
      {kServing, "tpot_p50_ms", "P50 TPOT", "ms", "/metrics/tpot_ms/p50", "", ""},
      {kServing, "tpot_p99_ms", "P99 TPOT", "ms", "/metrics/tpot_ms/p99", "", ""},
      {kServing, "tpot_mean_ms", "mean TPOT", "ms", "/metrics/tpot_ms/mean", "", ""},
      {kServing, "itl_p99_ms", "P99 inter-token latency", "ms", "/metrics/itl_ms/p99", "", ""},
      {kServing, "itl_mean_ms", "mean inter-token latency", "ms", "/metrics/itl_ms/mean", "", ""},
      {kServing, "itl_p50_ms", "P50 inter-token latency", "ms", "/metrics/itl_ms/p50", "", ""},
      {kServing, "itl_stddev_ms", "inter-token latency standard deviation", "ms", "/metrics/itl_ms/stddev", "", ""},
      {kServing, "tpot_stddev_ms", "TPOT standard deviation", "ms", "/metrics/tpot_ms/stddev", "", ""},
      // The distributions' sample counts: what a statistic's standard error divides by.
      {kServing, "ttft_count", "requests with a first token", "count", "/metrics/ttft_ms/count", "", ""},
      {kServing, "tpot_count", "requests with a TPOT (two or more output tokens)", "count", "/metrics/tpot_ms/count", "", ""},
      {kServing, "itl_count", "inter-token gaps", "count", "/metrics/itl_ms/count", "", ""},
      {kServing, "itl_max_ms", "max inter-token latency", "ms", "/metrics/itl_ms/max", "", ""},
      {kServing, "decode_tokens_per_s", "decode speed per request (1/mean TPOT)", "tokens/s", "/metrics/decode_tokens_per_s_per_request", "", ""},
      {kServing, "output_tokens_per_s", "throughput (output tokens)", "tokens/s", "/metrics/throughput/output_tokens_per_s", "", ""},
      {kServing, "total_tokens_per_s", "throughput (prompt + output tokens)", "tokens/s", "/metrics/throughput/total_tokens_per_s", "", ""},
      {kServing, "requests_per_s", "throughput", "req/s", "/metrics/throughput/requests_per_s", "", ""},
      {kServing, "output_tokens_per_s_per_gpu", "throughput per GPU (output tokens)", "tokens/s", "/metrics/throughput/output_tokens_per_s_per_gpu", "", ""},
      {kServing, "goodput_requests_per_s", "goodput under the SLO (whole run)", "req/s", "/metrics/goodput/requests_per_s", "",
       "completions within every SLO bound per second of the whole run, warm-up and drain included"},
      {kServing, "slo_attainment", "share of requests within the SLO (whole run)", "fraction", "/metrics/goodput/slo_attainment", "",
       "over the whole run, warm-up and drain included"},
      // The steady window's figures: what the verdict judges. They stand in for
      // the whole run's goodput and attainment among the headline cards when
      // the run's verdict was judged (headline_metrics), so the cards and the
      // verdict line read the same numbers.
      {kServing, "steady_goodput_requests_per_s", "goodput under the SLO (steady window)", "req/s", "/headline/goodput_qps", "",
       "completions within every SLO bound per second over the steady arrival window (warm-up and drain left out), the window the verdict judges"},
      {kServing, "steady_slo_attainment", "share of requests within the SLO (steady window)", "fraction",
       "/headline/slo_attainment", "",
       "share of the steady arrival window's requests within every SLO bound (warm-up and drain left out), the window the verdict judges"},
      {kServing, "max_qps", "max sustainable QPS under the SLO", "req/s", "/max_qps/qps", "", ""},
      {kServing, "queue_depth_max", "max queue depth (waiting requests)", "requests", "/metrics/concurrency/waiting_max", "", ""},
      {kServing, "queue_depth_mean", "mean queue depth (waiting requests)", "requests", "/metrics/concurrency/waiting_mean", "", ""},
      {kServing, "queueing_p99_ms", "P99 queueing delay", "ms", "/metrics/queueing_ms/p99", "", ""},
      {kServing, "running_max", "max concurrent running requests", "requests", "/metrics/concurrency/running_max", "", ""},
      {kServing, "running_mean", "mean concurrent running requests", "requests", "/metrics/concurrency/running_mean", "", ""},
      {kServing, "batch_size_mean", "mean batch size", "requests", "/metrics/concurrency/batch_size_mean", "", ""},
      {kServing, "gpu_utilization", "GPU busy fraction (a step running)", "fraction", "/metrics/gpu/busy_fraction", "",
       "share of GPU time a step is running, however little of the GPU it uses: near 1 whenever requests are in flight; see mfu_* and mbu_* for achieved use"},
      {kServing, "mfu_wall", "MFU over wall time", "fraction", "/metrics/gpu/mfu/over_wall_time", "",
       "the steps' FLOPs (each operator at the dense peak of its compute dtype) / (run duration x GPUs x peak)"},
      {kServing, "mfu_busy", "MFU while busy", "fraction", "/metrics/gpu/mfu/over_busy_time", "",
       "the steps' FLOPs at dense peak / the GPUs' busy time (time-weighted over steps)"},
      {kServing, "mfu_step_p50", "P50 MFU per step", "fraction", "/metrics/gpu/mfu/per_step/p50", "",
       "median over steps of each step's FLOPs at dense peak / its time"},
      {kServing, "mfu_step_p90", "P90 MFU per step", "fraction", "/metrics/gpu/mfu/per_step/p90", "", ""},
      {kServing, "mbu_wall", "MBU over wall time", "fraction", "/metrics/gpu/mbu/over_wall_time", "",
       "the steps' HBM bytes at peak bandwidth / (run duration x GPUs)"},
      {kServing, "mbu_busy", "MBU while busy", "fraction", "/metrics/gpu/mbu/over_busy_time", "",
       "the steps' HBM bytes at peak bandwidth / the GPUs' busy time (time-weighted over steps)"},
      {kServing, "mbu_step_p50", "P50 MBU per step", "fraction", "/metrics/gpu/mbu/per_step/p50", "",
       "median over steps of each step's HBM bytes at peak bandwidth / its time"},
      {kServing, "mbu_step_p90", "P90 MBU per step", "fraction", "/metrics/gpu/mbu/per_step/p90", "", ""},
      {kServing, "mean_power_per_gpu_W", "mean power per GPU", "W", "/metrics/energy/mean_power_per_gpu_W", "",
       "idle + (TDP - idle) x min(1, MFU + 0.5 x MBU) while a step runs, idle power otherwise, averaged over the run"},
      {kServing, "kv_peak_utilization", "peak KV blocks in use", "fraction", "/metrics/kv_cache/peak_block_utilization", "", ""},
      {kServing, "kv_memory_utilization", "KV memory holding tokens (of allocated)", "fraction", "/metrics/kv_cache/token_utilization", "", ""},
      {kServing, "kv_fragmentation", "KV memory allocated but holding no token", "fraction", "/metrics/kv_cache/fragmentation", "", ""},
      {kServing, "preemptions", "preemptions", "count", "/metrics/kv_cache/preemptions", "", ""},
      {kServing, "kv_per_token_KiB", "KV cache per token (all GPUs of a replica)", "KiB", "/capacity/kv_KiB_per_token", "", ""},
      {kServing, "kv_GiB_per_max_len_request", "KV cache of one max_model_len request", "GiB", "/capacity/kv_GiB_per_max_len_request", "", ""},
      {kServing, "kv_reduction_vs_mha", "KV cache reduction vs multi-head attention", "x", "/capacity/kv_reduction_vs_mha", "", ""},
      {kServing, "max_concurrent_at_max_len", "max concurrent max_model_len requests", "requests", "/capacity/max_concurrent_at_max_len", "", ""},
      {kServing, "kv_capacity_tokens", "KV cache capacity per replica", "tokens", "/capacity/kv_tokens_per_replica", "", ""},
      {kServing, "weights_GiB", "weights per GPU", "GiB", "/memory_per_gpu/0/weights_GiB", "", ""},
      {kServing, "prefix_hit_rate", "prefix cache: prompt tokens served from cache", "fraction", "/metrics/prefix_cache/cached_token_fraction", "", ""},
      {kServing, "session_ttft_first_mean_ms", "mean TTFT of a session's first turn", "ms", "/metrics/sessions/ttft_first_turn_ms/mean", "sessions", ""},
      {kServing, "session_ttft_returning_mean_ms", "mean TTFT of returning turns", "ms", "/metrics/sessions/ttft_returning_turn_ms/mean", "sessions",
       "turns after a session's first: their context is in a cache unless it was evicted"},
      {kServing, "session_ttft_returning_p99_ms", "P99 TTFT of returning turns", "ms", "/metrics/sessions/ttft_returning_turn_ms/p99", "sessions", ""},
      {kServing, "session_duration_mean_s", "mean session completion time", "s", "/metrics/sessions/session_duration_s/mean", "sessions",
       "first turn's arrival to last turn's last token, think times included"},
      {kServing, "session_returning_hit_rate", "returning turns: prompt tokens served from cache", "fraction",
       "/metrics/sessions/returning_cached_token_fraction", "sessions", ""},
      {kServing, "offload_hbm_hit_rate", "prompt tokens found in HBM", "fraction", "/metrics/kv_offload/hbm_hit_token_fraction", "kv_offload", ""},
      {kServing, "offload_tier1_hit_rate", "prompt tokens reloaded from the first offload tier", "fraction",
       "/metrics/kv_offload/tiers/0/hit_token_fraction", "kv_offload", ""},
      {kServing, "offload_tier2_hit_rate", "prompt tokens reloaded from the second offload tier", "fraction",
       "/metrics/kv_offload/tiers/1/hit_token_fraction", "kv_offload", ""},
      {kServing, "offload_exposed_reload_s", "reload time the steps could not hide", "s", "/metrics/kv_offload/exposed_reload_time_s", "kv_offload", ""},
      {kServing, "spec_tokens_per_step", "speculative: tokens per verification step", "tokens", "/metrics/speculative/tokens_per_verify_step", "", ""},
      {kServing, "lora_load_fraction", "adapter loading share of busy time", "fraction", "/metrics/lora/load_time_fraction", "", ""},
      {kServing, "lora_adapter_loads", "adapter loads", "count", "/metrics/lora/adapter_loads", "", ""},
      {kServing, "lora_gemm_fraction", "LoRA GEMM share of busy time", "fraction", "/metrics/lora/lora_gemm_time_fraction", "", ""},
      {kServing, "kv_transfer_mean_ms", "mean KV transfer time", "ms", "/metrics/kv_transfer/transfer_ms/mean", "", ""},
      {kServing, "moe_expert_time_fraction", "expert GEMM share of busy time", "fraction", "/metrics/moe/expert_time_fraction", "", ""},
      {kServing, "energy_per_output_token_J", "energy per output token", "J", "/metrics/energy/per_output_token_J", "",
       "all GPUs over the run (power from each step's MFU and MBU, idle power between steps) / output tokens"},
      {kServing, "usd_per_million_output_tokens", "cost per million output tokens", "USD", "/metrics/cost/usd_per_million_output_tokens", "", ""},
      {kServing, "quant_decode_speedup", "decode step speedup vs unquantized weights (same GPUs, batch 1)", "x", "/quantization/decode_speedup", "", ""},
      {kServing, "quant_weight_reduction", "weight memory reduction vs unquantized", "x", "/quantization/weight_reduction", "", ""},
      {kServing, "quant_unquantized_fits", "unquantized weights fit these GPUs", "bool", "/quantization/unquantized_fits", "", ""},
      {kServing, "compare_throughput_ratio", "output throughput vs baseline", "x", "/compare/ratio/output_tokens_per_s", "", ""},
      {kServing, "compare_goodput_ratio", "goodput vs baseline", "x", "/compare/ratio/goodput_requests_per_s", "", ""},
      {kServing, "compare_ttft_mean_ratio", "mean TTFT vs baseline", "x", "/compare/ratio/ttft_mean_ms", "", ""},
      {kServing, "compare_ttft_p99_ratio", "P99 TTFT vs baseline", "x", "/compare/ratio/ttft_p99_ms", "", ""},
      {kServing, "compare_ttft_stddev_ratio", "TTFT standard deviation vs baseline", "x", "/compare/ratio/ttft_stddev_ms", "", ""},
      {kServing, "compare_tpot_mean_ratio", "mean TPOT vs baseline", "x", "/compare/ratio/tpot_mean_ms", "", ""},
      {kServing, "compare_tpot_p99_ratio", "P99 TPOT vs baseline", "x", "/compare/ratio/tpot_p99_ms", "", ""},
      {kServing, "compare_e2e_p50_ratio", "P50 E2E vs baseline", "x", "/compare/ratio/e2e_p50_s", "", ""},
      {kServing, "compare_running_mean_ratio", "mean concurrent requests vs baseline", "x", "/compare/ratio/running_mean", "", ""},
      {kServing, "compare_running_max_ratio", "max concurrent requests vs baseline", "x", "/compare/ratio/running_max", "", ""},
      {kServing, "compare_kv_capacity_ratio", "KV capacity (tokens per replica) vs baseline", "x", "/compare/ratio/kv_tokens_per_replica", "", ""},
      {kServing, "compare_kv_peak_ratio", "peak KV blocks in use vs baseline", "x", "/compare/ratio/kv_peak_blocks_used", "", ""},
      {kServing, "compare_throughput_per_gpu_ratio", "output throughput per GPU vs baseline", "x", "/compare/ratio/output_tokens_per_s_per_gpu", "", ""},
      {kServing, "compare_decode_speedup", "decode speedup vs baseline (baseline TPOT / TPOT)", "x", "/compare/speedup/tpot_mean", "", ""},
      {kServing, "compare_e2e_speedup", "E2E speedup vs baseline (baseline E2E / E2E)", "x", "/compare/speedup/e2e_mean", "", ""},
      // The rest of the ratios and speedups a compare block holds (serve/serving_job.cpp), so that every one has words.
      {kServing, "compare_requests_ratio", "request throughput vs baseline", "x", "/compare/ratio/requests_per_s", "", ""},
      {kServing, "compare_ttft_p50_ratio", "P50 TTFT vs baseline", "x", "/compare/ratio/ttft_p50_ms", "", ""},
      {kServing, "compare_tpot_p50_ratio", "P50 TPOT vs baseline", "x", "/compare/ratio/tpot_p50_ms", "", ""},
      {kServing, "compare_itl_p99_ratio", "P99 inter-token latency vs baseline", "x", "/compare/ratio/itl_p99_ms", "", ""},
      {kServing, "compare_e2e_mean_ratio", "mean E2E vs baseline", "x", "/compare/ratio/e2e_mean_s", "", ""},
      {kServing, "compare_e2e_p99_ratio", "P99 E2E vs baseline", "x", "/compare/ratio/e2e_p99_s", "", ""},
      {kServing, "compare_kv_token_utilization_ratio", "KV memory holding tokens vs baseline", "x", "/compare/ratio/kv_token_utilization", "", ""},
      {kServing, "compare_preemptions_ratio", "preemptions vs baseline", "x", "/compare/ratio/preemptions", "", ""},
      {kServing, "compare_energy_ratio", "energy per output token vs baseline", "x", "/compare/ratio/energy_per_output_token_J", "", ""},
      {kServing, "compare_kv_per_token_ratio", "KV cache per token vs baseline", "x", "/compare/ratio/kv_KiB_per_token", "", ""},
      {kServing, "compare_max_concurrent_ratio", "max concurrent max_model_len requests vs baseline", "x", "/compare/ratio/max_concurrent_at_max_len", "", ""},
      {kServing, "compare_ttft_speedup", "TTFT speedup vs baseline (baseline mean TTFT / mean TTFT)", "x", "/compare/speedup/ttft_mean", "", ""},
      // Shown by the CLI table and the page's serving view beside the headline metrics.
      {kServing, "input_tokens_per_s", "throughput (prompt tokens)", "tokens/s", "/metrics/throughput/input_tokens_per_s", "", ""},
      {kServing, "tokens_per_step_mean", "mean tokens per step", "tokens", "/metrics/concurrency/tokens_per_step_mean", "", "prompt and output tokens the batch processes in one engine step"},
      {kServing, "kv_blocks_total", "KV blocks (all replicas)", "blocks", "/metrics/kv_cache/blocks_total", "", ""},
      {kServing, "kv_recomputes", "preemptions by recompute", "count", "/metrics/kv_cache/recomputes", "", ""},
      {kServing, "kv_swaps_out", "preemptions by swap to host", "count", "/metrics/kv_cache/swaps_out", "", ""},
      {kServing, "spec_expected_tokens_per_step", "speculative: expected tokens per verification step", "tokens", "/metrics/speculative/expected_tokens_per_verify_step", "", "from the acceptance rate alone"},
      {kServing, "kv_transfer_p99_ms", "P99 KV transfer time", "ms", "/metrics/kv_transfer/transfer_ms/p99", "", ""},
      {kServing, "requests_total", "requests", "count", "/metrics/requests/total", "", ""},
      {kServing, "requests_completed", "completed requests", "count", "/metrics/requests/completed", "", ""},
      {kServing, "requests_dropped", "dropped requests", "count", "/metrics/requests/dropped", "", ""},
      {kServing, "requests_unfinished", "unfinished requests", "count", "/metrics/requests/unfinished", "", ""},
      {kServing, "duration_s", "simulated duration", "s", "/metrics/duration_s", "", ""},
      {kServing, "quant_decode_step_ms", "decode step, batch 1", "ms", "/quantization/decode_step_ms", "", ""},
      {kServing, "quant_decode_step_unquantized_ms", "decode step, batch 1, unquantized weights", "ms", "/quantization/decode_step_ms_unquantized", "", ""},
      {kServing, "quant_prefill_speedup", "prefill speedup vs unquantized weights", "x", "/quantization/prefill_speedup", "", ""},
      {kServing, "quant_weights_GiB", "weights per GPU", "GiB", "/quantization/weights_GiB", "", ""},
      {kServing, "quant_weights_unquantized_GiB", "unquantized weights per GPU", "GiB", "/quantization/weights_GiB_unquantized", "", ""},
      {kTraining, "step_time_ms", "Step time", "ms", "/metrics/step_time_ms", "", "one optimizer step, all micro-batches"},
      {kTraining, "tokens_per_s", "Throughput", "tokens/s", "/metrics/tokens_per_s", "", "tokens trained per second, all GPUs"},
      {kTraining, "tokens_per_s_per_gpu", "Throughput per GPU", "tokens/s/GPU", "/metrics/tokens_per_s_per_gpu", "", ""},
      {kTraining, "samples_per_s", "Sequences per second", "seq/s", "/metrics/samples_per_s", "", ""},
      {kTraining, "mfu_pct", "MFU", "%", "/metrics/mfu_pct", "", "model FLOPs (see flop_convention) / (time × GPUs × bf16 peak)"},
      {kTraining, "hfu_pct", "HFU", "%", "/metrics/hfu_pct", "", "model FLOPs plus recomputed FLOPs (MFU's convention, so HFU ≥ MFU) / (time × GPUs × bf16 peak)"},
      {kTraining, "model_tflops_per_gpu", "Model TFLOP/s per GPU", "TFLOP/s", "/metrics/model_tflops_per_gpu", "", ""},
      {kTraining, "attention_fwd_bwd_ms", "Attention fwd+bwd (one layer)", "ms", "/per_layer/attention_core_fwd_bwd_ms", "", "attention kernels of one layer for one micro-batch: forward + backward"},
      {kTraining, "attention_block_fwd_bwd_ms", "Attention block fwd+bwd (one layer)", "ms", "/per_layer/attention_block_fwd_bwd_ms", "", "norm, QKV, RoPE, attention, output projection, TP comm"},
      {kTraining, "mlp_fwd_bwd_ms", "MLP fwd+bwd (one layer)", "ms", "/per_layer/mlp_block_fwd_bwd_ms", "", "norm, up/gate, activation, down projection, TP comm"},
      {kTraining, "mlp_achieved_tflops", "MLP achieved TFLOP/s", "TFLOP/s", "/per_layer/mlp_achieved_tflops", "", ""},
      {kTraining, "layer_fwd_bwd_ms", "Layer fwd+bwd", "ms", "/per_layer/layer_fwd_bwd_ms", "", "one transformer layer"},
      {kTraining, "layer_iteration_ms", "Layer training iteration", "ms", "/per_layer/layer_iteration_ms", "", "one layer: forward + backward (+ recompute) + its optimizer update"},
      {kTraining, "dp_allreduce_one_shot_ms", "DP gradient all-reduce (one message)", "ms", "/communication/dp/allreduce_one_shot_ms", "", "all gradients of one GPU all-reduced as a single message"},
      {kTraining, "dp_allreduce_intra_node_ms", "Same all-reduce inside one NVLink domain", "ms", "/communication/dp/allreduce_one_shot_intra_node_ms", "", ""},
      {kTraining, "dp_inter_over_intra", "DP all-reduce: topology / NVLink-only", "x", "/communication/dp/inter_over_intra", "", ""},
      {kTraining, "dp_grad_sync_ms", "DP gradient sync per step", "ms", "/communication/dp/sync_ms", "", "bucketed all-reduce, or reduce-scatter + parameter all-gather under ZeRO"},
      {kTraining, "dp_grad_sync_exposed_ms", "DP gradient sync exposed", "ms", "/communication/dp/exposed_ms", "", ""},
      {kTraining, "dp_comm_overlap_pct", "DP/FSDP communication hidden behind compute", "%", "/communication/dp/overlap_pct", "", "share of the data-parallel (DDP or FSDP) communication time overlapped with compute"},
      {kTraining, "dp_comm_to_compute_ratio", "DP/FSDP communication / compute", "x", "/communication/dp/comm_to_compute_ratio", "", "time of the data-parallel communication over compute time; above 1 when communication takes longer"},
      {kTraining, "tp_all_gather_ms", "TP all-gather per step", "ms", "/communication/tp/all_gather_ms", "", ""},
      {kTraining, "tp_all_gather_call_us", "TP all-gather (one call)", "us", "/communication/tp/all_gather_call_us", "", ""},
      {kTraining, "tp_comm_ms", "TP communication per step", "ms", "/communication/tp/total_ms", "", ""},
      {kTraining, "tp_comm_exposed_pct", "TP communication exposed (share of step)", "%", "/communication/tp/exposed_pct", "", ""},
      {kTraining, "ep_all_to_all_ms", "EP all-to-all per step", "ms", "/communication/ep/all_to_all_ms", "", ""},
      {kTraining, "ep_all_to_all_call_us", "EP all-to-all (one call)", "us", "/communication/ep/all_to_all_call_us", "", ""},
      {kTraining, "cp_ring_ms", "CP ring exchange per step", "ms", "/communication/cp/total_ms", "", ""},
      {kTraining, "pp_bubble_pct", "Pipeline bubble", "%", "/pipeline/bubble_pct", "", "idle share of the pipeline schedule"},
      {kTraining, "max_micro_batch", "Max micro-batch before OOM", "seq", "/memory_per_gpu/max_micro_batch", "", ""},
      {kTraining, "memory_per_gpu_GiB", "Memory per GPU", "GiB", "/memory_per_gpu/total_GiB", "", "peak, most loaded GPU"},
      {kTraining, "memory_overflow_GiB", "Memory overflow", "GiB", "/memory_per_gpu/overflow_GiB", "", ""},
      {kTraining, "activations_GiB", "Activation memory per GPU", "GiB", "/memory_per_gpu/activations_GiB", "", ""},
      {kTraining, "fits", "Fits in GPU memory", "", "/memory_per_gpu/fits", "", ""},
      {kTraining, "trainable_params_M", "Trainable parameters", "M", "/model/trainable_params_M", "", ""},
      {kTraining, "global_batch_size", "Global batch", "seq", "/batch/global_batch_size", "", ""},
      {kTraining, "global_batch_tokens", "Global batch", "tokens", "/batch/global_batch_tokens", "", ""},
      {kTraining, "attention_compute_pct", "Attention share of compute", "%", "/per_layer/attention_share_of_compute_pct", "", ""},
      {kTraining, "time_to_train_hours", "Time to train", "hours", "/training_run/time_hours", "tokens_to_train", ""},
      {kTraining, "time_to_train_days", "Time to train", "days", "/training_run/time_days", "tokens_to_train", ""},
      {kTraining, "gpu_hours", "GPU-hours", "GPU·h", "/training_run/gpu_hours", "tokens_to_train", ""},
      {kTraining, "energy_MWh", "Energy", "MWh", "/training_run/energy_MWh", "tokens_to_train", ""},
      {kTraining, "cost_usd", "Cost", "USD", "/training_run/cost_usd", "gpu_hour_usd", ""},
      {kTraining, "scaling_efficiency_pct", "Scaling efficiency (last point)", "%", "/scaling/final_efficiency_pct", "scaling", "tokens/s/GPU at the last point / at the first"},
      {kTraining, "compare_throughput_ratio", "Throughput: this / first variant", "x", "/compare/0/base_over_variant_throughput", "compare", ""},
      {kTraining, "compare_memory_ratio", "Memory: first variant / this", "x", "/compare/0/variant_over_base_memory", "compare", ""},
      {kTraining, "compare_activation_ratio", "Activations: first variant / this", "x", "/compare/0/variant_over_base_activations", "compare", ""},
      // Shown by the CLI table and the page's training view beside the headline metrics.
      {kTraining, "hardware_tflops_per_gpu", "Hardware TFLOP/s per GPU", "TFLOP/s", "/metrics/hardware_tflops_per_gpu", "", "model FLOPs plus the FLOPs recomputation runs again (MFU's convention), the HFU basis"},
      {kTraining, "tp_comm_exposed_ms", "TP communication exposed per step", "ms", "/communication/tp/exposed_ms", "", ""},
      {kTraining, "cp_ring_exposed_ms", "CP ring exchange exposed per step", "ms", "/communication/cp/exposed_ms", "", ""},
      {kTraining, "pp_bubble_formula_pct", "Pipeline bubble (formula)", "%", "/pipeline/bubble_formula_pct", "", "(PP - 1) / (m·v + PP - 1), for comparison"},
      {kTraining, "pp_mean_idle_pct", "Pipeline idle, mean of all ranks", "%", "/pipeline/mean_idle_pct", "", "adds the idle time of less loaded stages"},
      {kTraining, "pp_makespan_ms", "Pipeline makespan", "ms", "/pipeline/makespan_ms", "", "from the first pass to the last pass on any rank"},
      {kTraining, "pp_p2p_transfer_us", "Stage-to-stage transfer", "us", "/pipeline/p2p_transfer_us", "", "one activation (or gradient) transfer between neighbouring stages"},
      // The searches headline their answer (cheapest_meeting_slo, best); each
      // ranked row carries the same metrics of its own configuration.
      {kDeploymentSearch, "usd_per_million_tokens", "Cost per million tokens", "USD", "/cheapest_meeting_slo/usd_per_million_tokens", "",
       "the deployment's price per hour over the input and output tokens per hour it carries"},
      {kDeploymentSearch, "ttft_p99_ms", "P99 TTFT at the target rate", "ms", "/cheapest_meeting_slo/ttft_p99_ms", "", ""},
      {kDeploymentSearch, "tpot_p99_ms", "P99 TPOT at the target rate", "ms", "/cheapest_meeting_slo/tpot_p99_ms", "", ""},
      {kDeploymentSearch, "max_qps", "max sustainable QPS under the SLO", "req/s", "/cheapest_meeting_slo/max_qps", "",
       "the budget question: the highest rate the deployment sustains within the SLO (steady-state capacity search)"},
      {kDeploymentSearch, "gpus", "GPUs", "GPUs", "/cheapest_meeting_slo/gpus", "", "GPUs of the cheapest deployment meeting the SLO"},
      {kDeploymentSearch, "deployments_simulated", "Deployments simulated", "deployments", "/space/simulated", "", "candidates run after pruning"},
      {kTrainingSearch, "tokens_per_usd", "Tokens per dollar", "tokens/USD", "/best/tokens_per_usd", "", "tokens trained per dollar of GPU time"},
      {kTrainingSearch, "time_to_train_days", "Time to train", "days", "/best/time_to_train_days", "", "the base's tokens_to_train at this throughput"},
      {kTrainingSearch, "step_time_ms", "Step time", "ms", "/best/step_time_ms", "", "one optimizer step, all micro-batches"},
      {kTrainingSearch, "tokens_per_s", "Throughput", "tokens/s", "/best/tokens_per_s", "", "tokens trained per second, all GPUs"},
      {kTrainingSearch, "mfu_pct", "MFU", "%", "/best/mfu_pct", "", "model FLOPs / (time × GPUs × bf16 peak)"},
      {kTrainingSearch, "cost_usd", "Cost to train", "USD", "/best/cost_usd", "", "the base's tokens_to_train at the GPUs' price per hour"},
      {kTrainingSearch, "memory_per_gpu_GiB", "Memory per GPU", "GiB", "/best/memory_per_gpu_GiB", "", "peak, most loaded GPU"},
      {kTrainingSearch, "gpus", "GPUs", "GPUs", "/best/gpus", "", "GPUs of the best configuration"},
      {kTrainingSearch, "configurations_estimated", "Configurations estimated", "configurations", "/space/estimated", "", "configurations run after pruning"},
  };
  return list;
}

const MetricInfo* find_metric(MetricKind kind, const std::string& id) {
  return find_in(metric_catalogue(), [&](const MetricInfo& m) { return m.kind == kind && id == m.id; });
}

std::vector<std::string> metric_ids(MetricKind kind) {
  std::vector<std::string> ids;
  for (const auto& m : metric_catalogue())
    if (m.kind == kind) ids.emplace_back(m.id);
  return ids;
}

const std::vector<std::string>& default_key_metrics(MetricKind kind) {
  static const std::vector<std::string> latency = {"ttft_ms", "tpot_ms", "e2e_ms", "output_tokens_per_s"};
  static const std::vector<std::string> serving = {"ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms",
                                                   "e2e_p50_s",   "e2e_p99_s",   "output_tokens_per_s"};
  static const std::vector<std::string> training = {"tokens_per_s_per_gpu", "mfu_pct", "step_time_ms",
                                                    "memory_per_gpu_GiB"};
  static const std::vector<std::string> none;
  switch (kind) {
    case MetricKind::kLatency: return latency;
    case MetricKind::kServing: return serving;
    case MetricKind::kTraining: return training;
    case MetricKind::kDeploymentSearch:
    case MetricKind::kTrainingSearch: return none;
  }
  return none;
}

std::vector<std::string> headline_metrics(MetricKind kind, const std::function<bool(const std::string&)>& has_optional) {
  struct Card {
    const char* id;
    bool optional;  // shown only where the run has the figure (has_optional)
    // The steady window's counterpart, shown instead where the run has it
    // (has_optional): the figure the verdict judges.
    const char* steady_id = nullptr;
  };
  static const std::vector<Card> latency = {
      {"ttft_ms", false}, {"tpot_ms", false}, {"e2e_ms", false}, {"output_tokens_per_s", false}};
  static const std::vector<Card> serving = {
      {"ttft_p50_ms", false},         {"ttft_p99_ms", false},
      {"tpot_p50_ms", false},         {"e2e_p99_s", false},
      {"output_tokens_per_s", false}, {"output_tokens_per_s_per_gpu", false},
      {"goodput_requests_per_s", false, "steady_goodput_requests_per_s"},
      {"slo_attainment", false, "steady_slo_attainment"},
      {"max_qps", true}};
  static const std::vector<Card> training = {{"step_time_ms", false},
                                             {"tokens_per_s_per_gpu", false},
                                             {"mfu_pct", false},
                                             {"time_to_train_days", true},
                                             {"memory_per_gpu_GiB", false}};
  static const std::vector<Card> none;
  const std::vector<Card>* cards = &none;
  switch (kind) {
    case MetricKind::kLatency: cards = &latency; break;
    case MetricKind::kServing: cards = &serving; break;
    case MetricKind::kTraining: cards = &training; break;
    case MetricKind::kDeploymentSearch:
    case MetricKind::kTrainingSearch: break;
  }
  std::vector<std::string> ids;
  for (const Card& c : *cards)
    if (c.steady_id && has_optional(c.steady_id)) ids.emplace_back(c.steady_id);
    else if (!c.optional || has_optional(c.id)) ids.emplace_back(c.id);
  return ids;
}

json headline_metrics_json(MetricKind kind, const std::function<bool(const std::string&)>& has_optional) {
  json out = json::array();
  for (const std::string& id : headline_metrics(kind, has_optional)) out.push_back(id);
  return out;
}

const json* metric_value(const MetricInfo& m, const json& result) {
  const json::json_pointer ptr(m.pointer);
  return result.contains(ptr) ? &result.at(ptr) : nullptr;
}

const std::vector<DistributionInfo>& distribution_catalogue() {
  static const std::vector<DistributionInfo> list = {
      {"ttft_ms", "TTFT", "ms", "/metrics/ttft_ms", "time to first token of each request"},
      {"tpot_ms", "TPOT", "ms", "/metrics/tpot_ms", "time per output token after the first, per request"},
      {"itl_ms", "inter-token latency", "ms", "/metrics/itl_ms", "time between two output tokens of a request"},
      {"e2e_s", "E2E latency", "s", "/metrics/e2e_s", "arrival to last token of each request"},
      {"queueing_ms", "queueing delay", "ms", "/metrics/queueing_ms", "arrival to first scheduling of each request"},
  };
  return list;
}

const std::vector<std::string>& distribution_stats() {
  static const std::vector<std::string> stats = {"mean", "p50", "p90", "p99", "max"};
  return stats;
}

json distribution_catalogue_json() {
  json out = json::array();
  for (const auto& d : distribution_catalogue())
    out.push_back({{"kind", "serving"},
                   {"id", d.id},
                   {"label", d.label},
                   {"unit", d.unit},
                   {"pointer", d.pointer},
                   {"stats", distribution_stats()},
                   {"description", d.description}});
  return out;
}

const std::vector<MemoryPartInfo>& memory_parts() {
  static const std::vector<MemoryPartInfo> list = {
      {kLatency, "weights_GiB", "Weights", "model weights resident on each GPU (after TP/PP sharding)"},
      {kLatency, "kv_cache_GiB", "KV cache", "attention key/value cache for the whole batch at full length"},
      {kLatency, "activations_GiB", "Activations", "peak transient activations"},
      {kLatency, "runtime_overhead_GiB", "Runtime overhead", "CUDA context, allocator and framework reserve"},
      {kLatency, "free_GiB", "Free", "capacity left over"},
      {kLatency, "capacity_GiB", "Capacity", "GPU memory"},
      {kServing, "weights_GiB", "Weights", "model weights resident on each GPU of the pool (after TP/PP sharding)"},
      {kServing, "kv_cache_GiB", "KV cache", "KV blocks allocated from what the other parts leave of the usable memory"},
      {kServing, "activations_GiB", "Activations", "peak transient activations of the largest step"},
      {kServing, "draft_weights_GiB", "Draft model", "weights of the speculative draft model"},
      {kServing, "lora_adapters_GiB", "LoRA adapters", "adapter slots resident on the GPU"},
      {kServing, "runtime_overhead_GiB", "Runtime overhead", "CUDA context, allocator and framework reserve"},
      {kServing, "unused_GiB", "Unused", "capacity outside gpu_memory_utilization"},
      {kServing, "usable_GiB", "Usable", "gpu_memory_utilization x capacity"},
      {kServing, "capacity_GiB", "Capacity", "GPU memory"},
      {kTraining, "params_GiB", "Parameters", "model weights held by this GPU (after TP/PP/ZeRO-3 sharding)"},
      {kTraining, "grads_GiB", "Gradients", "gradient buffers (sharded with ZeRO-2/3)"},
      {kTraining, "optimizer_states_GiB", "Optimizer states", "master weights and optimizer moments in GPU memory (sharded with ZeRO >= 1)"},
      {kTraining, "activations_GiB", "Activations", "stored activations of the micro-batches in flight, plus the working set"},
      {kTraining, "temporary_GiB", "Temporary buffers", "logits, communication and gather buffers at the peak"},
      {kTraining, "runtime_overhead_GiB", "Runtime overhead", "CUDA context, workspaces and NCCL buffers"},
      {kTraining, "free_GiB", "Free", "capacity left over"},
      {kTraining, "activations_stored_GiB", "of which stored activations", "activations kept from the forward until the backward"},
      {kTraining, "activations_working_GiB", "of which working set", "activations alive inside one layer at the peak"},
      {kTraining, "logits_GiB", "of which logits", "output logits of one micro-batch"},
      {kTraining, "host_optimizer_states_GiB", "Optimizer states in host memory", "with CPU offload, in host memory (not counted on the GPU)"},
      {kTraining, "overflow_GiB", "Over capacity", "what does not fit: total minus capacity"},
      {kTraining, "total_GiB", "Total (peak)", "peak memory on the most loaded GPU"},
      {kTraining, "capacity_GiB", "Capacity", "GPU memory"},
  };
  return list;
}

const MemoryPartInfo* find_memory_part(MetricKind kind, const std::string& id) {
  return find_in(memory_parts(), [&](const MemoryPartInfo& p) { return p.kind == kind && id == p.id; });
}

json memory_parts_json() {
  json out = json::array();
  for (const auto& p : memory_parts())
    out.push_back({{"kind", metric_kind_name(p.kind)},
                   {"id", p.id},
                   {"label", p.label},
                   {"unit", "GiB"},
                   {"description", p.description}});
  return out;
}

const std::vector<StepPartInfo>& step_parts() {
  static const std::vector<StepPartInfo> list = {
      {"compute", "Compute", "kernels of one family, forward and backward"},
      {"recompute", "Recomputation", "forward passes recomputed in the backward"},
      {"exposed_comm/tp", "Exposed TP communication", "tensor-parallel collectives not hidden behind compute"},
      {"exposed_comm/ep", "Exposed EP all-to-all", "expert-parallel all-to-all not hidden behind compute"},
      {"exposed_comm/cp", "Exposed CP ring exchange", "context-parallel ring exchange not hidden behind compute"},
      {"exposed_comm/fsdp", "Exposed FSDP gather", "FSDP parameter all-gathers not hidden behind compute"},
      {"exposed_comm/dp", "Exposed DP gradient sync", "data-parallel gradient sync not hidden behind compute"},
      {"pipeline_bubble", "Pipeline bubble and waits", "idle time of the pipeline schedule (fill, drain and waits)"},
      {"optimizer", "Optimizer step", "optimizer update and parameter casts"},
      {"cpu_offload", "CPU offload", "optimizer update in host memory and its PCIe transfers"},
      {"framework", "Framework", "gradient-norm and FP8 amax all-reduces, input batch copies"},
      {"overhead", "Overhead", "host and framework overhead"},
  };
  return list;
}

const StepPartInfo* find_step_part(const std::string& id) {
  return find_in(step_parts(), [&](const StepPartInfo& p) { return id == p.id; });
}

json step_parts_json() {
  json out = json::array();
  for (const auto& p : step_parts())
    out.push_back({{"kind", "training"}, {"id", p.id}, {"label", p.label}, {"unit", "ms"}, {"description", p.description}});
  return out;
}

json metric_catalogue_json() {
  json out = json::array();
  for (const auto& m : metric_catalogue())
    out.push_back({{"kind", metric_kind_name(m.kind)},
                   {"id", m.id},
                   {"label", m.label},
                   {"unit", m.unit},
                   {"pointer", m.pointer},
                   {"needs", m.needs},
                   {"description", m.description}});
  return out;
}

}  // namespace sightline
