// The serving metrics: one row per metric, the only place a serving metric is
// defined. Each row holds its catalogue words (id, label, unit, the JSON
// pointer where the result writes it, the input it needs, a description, how
// the run's end-to-end speed reaches it), the name it goes by in a compare
// block, and how it is read from the run's typed figures:
//
//   SERVING_METRIC(id, label, unit, pointer, needs, description, speed, comparison, getter)
//   SERVING_COMPARED_FIGURE(comparison, getter)  -- compared in a compare block, no catalogue row
//   SERVING_COMPARE_RESULT(id, label, group, name)  -- a compare block's figure: compare.<group>.<name>
//     (group: ratio or speedup; name: a comparison name of a row above or below), unit "x",
//     its pointer /compare/<group>/<name>; serve/serving_key_metrics.cpp refuses a name no row compares
//
// speed: speed_time, speed_rate or not_speed (MetricInfo::speed: which
// figures the kind's measured end-to-end error band widens). comparison: not_compared, compared("ratio_name") (compare.ratio, this /
// baseline) or compared("ratio_name", "speedup_name") (and compare.speedup,
// baseline / this). getter: an expression of serve/serving_key_metrics.cpp's
// helpers over its ServingFigures (M = ServingMetrics, S = Summary).
//
// An X-macro table, with no include guard: the includer defines the three macros
// and the table undefines them. scenario/metric_catalogue.cpp expands each row
// into its MetricInfo and drops the last two columns (the scenario layer sees
// no serve type: the getter is never compiled there); serve/serving_key_metrics.cpp
// expands each row into its figure row and drops the words. So a serving
// metric cannot have words without a getter or a getter without words: the
// two are one row. Rows stay in this order: it is the catalogue's order
// (registries, CLI tables, "valid: ..." lists).
#if !defined(SERVING_METRIC) || !defined(SERVING_COMPARED_FIGURE) || !defined(SERVING_COMPARE_RESULT)
#error "define SERVING_METRIC, SERVING_COMPARED_FIGURE and SERVING_COMPARE_RESULT before including scenario/serving_metric_table.hpp"
#endif

SERVING_METRIC("e2e_p50_s", "P50 E2E latency", "s", "/metrics/e2e_s/p50", "", "",
               speed_time, compared("e2e_p50_s"), dist(&M::e2e_s, &S::p50))
SERVING_METRIC("e2e_p99_s", "P99 E2E latency", "s", "/metrics/e2e_s/p99", "", "",
               speed_time, compared("e2e_p99_s"), dist(&M::e2e_s, &S::p99))
SERVING_METRIC("e2e_mean_s", "mean E2E latency", "s", "/metrics/e2e_s/mean", "", "",
               speed_time, compared("e2e_mean_s", "e2e_mean"), dist(&M::e2e_s, &S::mean))
SERVING_METRIC("ttft_p50_ms", "P50 TTFT", "ms", "/metrics/ttft_ms/p50", "", "",
               speed_time, compared("ttft_p50_ms"), dist(&M::ttft_ms, &S::p50))
SERVING_METRIC("ttft_p99_ms", "P99 TTFT", "ms", "/metrics/ttft_ms/p99", "", "",
               speed_time, compared("ttft_p99_ms"), dist(&M::ttft_ms, &S::p99))
SERVING_METRIC("ttft_mean_ms", "mean TTFT", "ms", "/metrics/ttft_ms/mean", "", "",
               speed_time, compared("ttft_mean_ms", "ttft_mean"), dist(&M::ttft_ms, &S::mean))
SERVING_METRIC("ttft_stddev_ms", "TTFT standard deviation", "ms", "/metrics/ttft_ms/stddev", "", "",
               not_speed, compared("ttft_stddev_ms"), dist(&M::ttft_ms, &S::stddev))
SERVING_METRIC("tpot_p50_ms", "P50 TPOT", "ms", "/metrics/tpot_ms/p50", "", "",
               speed_time, compared("tpot_p50_ms"), dist(&M::tpot_ms, &S::p50))
SERVING_METRIC("tpot_p99_ms", "P99 TPOT", "ms", "/metrics/tpot_ms/p99", "", "",
               speed_time, compared("tpot_p99_ms"), dist(&M::tpot_ms, &S::p99))
SERVING_METRIC("tpot_mean_ms", "mean TPOT", "ms", "/metrics/tpot_ms/mean", "", "",
               speed_time, compared("tpot_mean_ms", "tpot_mean"), dist(&M::tpot_ms, &S::mean))
SERVING_METRIC("itl_p99_ms", "P99 inter-token latency", "ms", "/metrics/itl_ms/p99", "", "",
               speed_time, compared("itl_p99_ms"), dist(&M::itl_ms, &S::p99))
SERVING_METRIC("itl_mean_ms", "mean inter-token latency", "ms", "/metrics/itl_ms/mean", "", "",
               speed_time, not_compared, dist(&M::itl_ms, &S::mean))
SERVING_METRIC("itl_p50_ms", "P50 inter-token latency", "ms", "/metrics/itl_ms/p50", "", "",
               speed_time, not_compared, dist(&M::itl_ms, &S::p50))
SERVING_METRIC("itl_stddev_ms", "inter-token latency standard deviation", "ms", "/metrics/itl_ms/stddev", "", "",
               not_speed, not_compared, dist(&M::itl_ms, &S::stddev))
SERVING_METRIC("tpot_stddev_ms", "TPOT standard deviation", "ms", "/metrics/tpot_ms/stddev", "", "",
               not_speed, not_compared, dist(&M::tpot_ms, &S::stddev))
// The distributions' sample counts: what a statistic's standard error divides by.
SERVING_METRIC("ttft_count", "requests with a first token", "count", "/metrics/ttft_ms/count", "", "",
               not_speed, not_compared, count([](const M& m) { return m.ttft_ms.count; }))
SERVING_METRIC("tpot_count", "requests with a TPOT (two or more output tokens)", "count", "/metrics/tpot_ms/count", "", "",
               not_speed, not_compared, count([](const M& m) { return m.tpot_ms.count; }))
SERVING_METRIC("itl_count", "inter-token gaps", "count", "/metrics/itl_ms/count", "", "",
               not_speed, not_compared, count([](const M& m) { return m.itl_ms.count; }))
SERVING_METRIC("itl_max_ms", "max inter-token latency", "ms", "/metrics/itl_ms/max", "", "",
               not_speed, not_compared, dist(&M::itl_ms, &S::max))
SERVING_METRIC("decode_tokens_per_s", "decode speed per request (1/mean TPOT)", "tokens/s", "/metrics/decode_tokens_per_s_per_request", "", "",
               speed_rate, not_compared, [](const ServingFigures& f) { return figure_or_missing(f.metrics->decode_tokens_per_s_per_request); })
SERVING_METRIC("output_tokens_per_s", "throughput (output tokens)", "tokens/s", "/metrics/throughput/output_tokens_per_s", "", "",
               speed_rate, compared("output_tokens_per_s"), real([](const M& m) { return m.throughput.output_tokens_per_s; }))
SERVING_METRIC("total_tokens_per_s", "throughput (prompt + output tokens)", "tokens/s", "/metrics/throughput/total_tokens_per_s", "", "",
               speed_rate, not_compared, real([](const M& m) { return m.throughput.total_tokens_per_s; }))
SERVING_METRIC("requests_per_s", "throughput", "req/s", "/metrics/throughput/requests_per_s", "", "",
               speed_rate, compared("requests_per_s"), real([](const M& m) { return m.throughput.requests_per_s; }))
SERVING_METRIC("output_tokens_per_s_per_gpu", "throughput per GPU (output tokens)", "tokens/s", "/metrics/throughput/output_tokens_per_s_per_gpu", "", "",
               speed_rate, compared("output_tokens_per_s_per_gpu"), real([](const M& m) { return m.throughput.output_tokens_per_s_per_gpu; }))
SERVING_METRIC("goodput_requests_per_s", "goodput under the SLO (whole run)", "req/s", "/metrics/goodput/requests_per_s", "", "completions within every SLO bound per second of the whole run, warm-up and drain included",
               not_speed, compared("goodput_requests_per_s"), in_block<M::Goodput>(&M::goodput, [](const M::Goodput& b) { return number(b.requests_per_s); }))
SERVING_METRIC("slo_attainment", "share of requests within the SLO (whole run)", "fraction", "/metrics/goodput/slo_attainment", "", "over the whole run, warm-up and drain included",
               not_speed, not_compared, in_block<M::Goodput>(&M::goodput, [](const M::Goodput& b) { return number(b.slo_attainment); }))
// The steady window's figures: what the verdict judges. They stand in for
// the whole run's goodput and attainment among the headline cards when
// the run's verdict was judged (headline_metrics), so the cards and the
// verdict line read the same numbers.
SERVING_METRIC("steady_goodput_requests_per_s", "goodput under the SLO (steady window)", "req/s", "/headline/goodput_qps", "", "completions within every SLO bound per second over the steady arrival window (warm-up and drain left out), the window the verdict judges",
               not_speed, not_compared, steady([](const ServingHeadline& h) { return h.goodput_qps; }))
SERVING_METRIC("steady_slo_attainment", "share of requests within the SLO (steady window)", "fraction", "/headline/slo_attainment", "", "share of the steady arrival window's requests within every SLO bound (warm-up and drain left out), the window the verdict judges",
               not_speed, not_compared, steady([](const ServingHeadline& h) { return h.slo_attainment; }))
// The steady window's completions per second, with or without an SLO: the
// headline's throughput (an interval figure by its pointer, serve/serving_job.cpp).
SERVING_METRIC("steady_requests_per_s", "throughput (steady window)", "req/s", "/headline/throughput_qps", "", "",
               speed_rate, not_compared, steady([](const ServingHeadline& h) { return h.throughput_qps; }, false))
SERVING_METRIC("max_qps", "max sustainable QPS under the SLO", "req/s", "/max_qps/qps", "", "",
               not_speed, not_compared, [](const ServingFigures& f) { return figure_or_missing(f.max_qps); })
SERVING_METRIC("queue_depth_max", "max queue depth (waiting requests)", "requests", "/metrics/concurrency/waiting_max", "", "",
               not_speed, not_compared, count([](const M& m) { return m.concurrency.waiting_max; }))
SERVING_METRIC("queue_depth_mean", "mean queue depth (waiting requests)", "requests", "/metrics/concurrency/waiting_mean", "", "",
               not_speed, not_compared, real([](const M& m) { return m.concurrency.waiting_mean; }))
SERVING_METRIC("queueing_p99_ms", "P99 queueing delay", "ms", "/metrics/queueing_ms/p99", "", "",
               not_speed, not_compared, dist(&M::queueing_ms, &S::p99))
SERVING_METRIC("running_max", "max concurrent running requests", "requests", "/metrics/concurrency/running_max", "", "",
               not_speed, compared("running_max"), count([](const M& m) { return m.concurrency.running_max; }))
SERVING_METRIC("running_mean", "mean concurrent running requests", "requests", "/metrics/concurrency/running_mean", "", "",
               not_speed, compared("running_mean"), real([](const M& m) { return m.concurrency.running_mean; }))
SERVING_METRIC("batch_size_mean", "mean batch size", "requests", "/metrics/concurrency/batch_size_mean", "", "",
               not_speed, not_compared, real([](const M& m) { return m.concurrency.batch_size_mean; }))
SERVING_METRIC("gpu_utilization", "GPU busy fraction (a step running)", "fraction", "/metrics/gpu/busy_fraction", "", "share of GPU time a step is running, however little of the GPU it uses: near 1 whenever requests are in flight; see mfu_* and mbu_* for achieved use",
               not_speed, not_compared, real([](const M& m) { return m.gpu.busy_fraction; }))
SERVING_METRIC("mfu_wall", "MFU over wall time", "fraction", "/metrics/gpu/mfu/over_wall_time", "", "the steps' FLOPs (each operator at the dense peak of its compute dtype) / (run duration x GPUs x peak)",
               not_speed, not_compared, real([](const M& m) { return m.gpu.mfu.over_wall_time; }))
SERVING_METRIC("mfu_busy", "MFU while busy", "fraction", "/metrics/gpu/mfu/over_busy_time", "", "the steps' FLOPs at dense peak / the GPUs' busy time (time-weighted over steps)",
               not_speed, not_compared, real([](const M& m) { return m.gpu.mfu.over_busy_time; }))
SERVING_METRIC("mfu_step_p50", "P50 MFU per step", "fraction", "/metrics/gpu/mfu/per_step/p50", "", "median over steps of each step's FLOPs at dense peak / its time",
               not_speed, not_compared, [](const ServingFigures& f) { return statistic(f.metrics->gpu.mfu.per_step, &S::p50); })
SERVING_METRIC("mfu_step_p90", "P90 MFU per step", "fraction", "/metrics/gpu/mfu/per_step/p90", "", "",
               not_speed, not_compared, [](const ServingFigures& f) { return statistic(f.metrics->gpu.mfu.per_step, &S::p90); })
SERVING_METRIC("mbu_wall", "MBU over wall time", "fraction", "/metrics/gpu/mbu/over_wall_time", "", "the steps' HBM bytes at peak bandwidth / (run duration x GPUs)",
               not_speed, not_compared, real([](const M& m) { return m.gpu.mbu.over_wall_time; }))
SERVING_METRIC("mbu_busy", "MBU while busy", "fraction", "/metrics/gpu/mbu/over_busy_time", "", "the steps' HBM bytes at peak bandwidth / the GPUs' busy time (time-weighted over steps)",
               not_speed, not_compared, real([](const M& m) { return m.gpu.mbu.over_busy_time; }))
SERVING_METRIC("mbu_step_p50", "P50 MBU per step", "fraction", "/metrics/gpu/mbu/per_step/p50", "", "median over steps of each step's HBM bytes at peak bandwidth / its time",
               not_speed, not_compared, [](const ServingFigures& f) { return statistic(f.metrics->gpu.mbu.per_step, &S::p50); })
SERVING_METRIC("mbu_step_p90", "P90 MBU per step", "fraction", "/metrics/gpu/mbu/per_step/p90", "", "",
               not_speed, not_compared, [](const ServingFigures& f) { return statistic(f.metrics->gpu.mbu.per_step, &S::p90); })
SERVING_METRIC("mean_power_per_gpu_W", "mean power per GPU", "W", "/metrics/energy/mean_power_per_gpu_W", "", "idle + (TDP - idle) x min(1, MFU + 0.5 x MBU) while a step runs, idle power otherwise, averaged over the run",
               not_speed, not_compared, real([](const M& m) { return m.energy.mean_power_per_gpu_W; }))
SERVING_METRIC("kv_peak_utilization", "peak KV blocks in use", "fraction", "/metrics/kv_cache/peak_block_utilization", "", "",
               not_speed, not_compared, real([](const M& m) { return m.kv_cache.peak_block_utilization; }))
SERVING_METRIC("kv_memory_utilization", "KV memory holding tokens (of allocated)", "fraction", "/metrics/kv_cache/token_utilization", "", "",
               not_speed, compared("kv_token_utilization"), real([](const M& m) { return m.kv_cache.token_utilization; }))
// Compared only (compare_kv_peak_ratio reads its ratio): no catalogue row of its own.
SERVING_COMPARED_FIGURE(compared("kv_peak_blocks_used"), count([](const M& m) { return m.kv_cache.peak_blocks_used; }))
SERVING_METRIC("kv_fragmentation", "KV memory allocated but holding no token", "fraction", "/metrics/kv_cache/fragmentation", "", "",
               not_speed, not_compared, real([](const M& m) { return m.kv_cache.fragmentation; }))
SERVING_METRIC("preemptions", "preemptions", "count", "/metrics/kv_cache/preemptions", "", "",
               not_speed, compared("preemptions"), count([](const M& m) { return m.kv_cache.preemptions; }))
SERVING_METRIC("kv_per_token_KiB", "KV cache per token (all GPUs of a replica)", "KiB", "/capacity/kv_KiB_per_token", "", "",
               not_speed, compared("kv_KiB_per_token"), capacity([](const ServingCapacity& c) { return number(c.kv_KiB_per_token); }))
SERVING_METRIC("kv_GiB_per_max_len_request", "KV cache of one max_model_len request", "GiB", "/capacity/kv_GiB_per_max_len_request", "", "",
               not_speed, not_compared, capacity([](const ServingCapacity& c) { return number(c.kv_GiB_per_max_len_request); }))
SERVING_METRIC("kv_reduction_vs_mha", "KV cache reduction vs multi-head attention", "x", "/capacity/kv_reduction_vs_mha", "", "",
               not_speed, not_compared, capacity([](const ServingCapacity& c) { return c.versus_mha ? number(c.versus_mha->kv_reduction_vs_mha) : ServingFigure{}; }))
SERVING_METRIC("max_concurrent_at_max_len", "max concurrent max_model_len requests", "requests", "/capacity/max_concurrent_at_max_len", "", "",
               not_speed, compared("max_concurrent_at_max_len"), capacity([](const ServingCapacity& c) { return integer(c.max_concurrent_at_max_len); }))
SERVING_METRIC("kv_capacity_tokens", "KV cache capacity per replica", "tokens", "/capacity/kv_tokens_per_replica", "", "",
               not_speed, compared("kv_tokens_per_replica"), capacity([](const ServingCapacity& c) { return integer(c.kv_tokens_per_replica); }))
SERVING_METRIC("weights_GiB", "weights per GPU", "GiB", "/memory_per_gpu/0/weights_GiB", "", "",
               not_speed, not_compared, [](const ServingFigures& f) { return number(f.details->first_pool_weights_GiB); })
SERVING_METRIC("prefix_hit_rate", "prefix cache: prompt tokens served from cache", "fraction", "/metrics/prefix_cache/cached_token_fraction", "", "",
               not_speed, not_compared, in_block<M::PrefixCache>(&M::prefix_cache, [](const M::PrefixCache& b) { return number(b.cached_token_fraction); }))
SERVING_METRIC("session_ttft_first_mean_ms", "mean TTFT of a session's first turn", "ms", "/metrics/sessions/ttft_first_turn_ms/mean", "sessions", "",
               not_speed, not_compared, in_block<M::Sessions>(&M::sessions, [](const M::Sessions& b) { return statistic(b.ttft_first_turn_ms, &Summary::mean); }))
SERVING_METRIC("session_ttft_returning_mean_ms", "mean TTFT of returning turns", "ms", "/metrics/sessions/ttft_returning_turn_ms/mean", "sessions", "turns after a session's first: their context is in a cache unless it was evicted",
               not_speed, not_compared, in_block<M::Sessions>(&M::sessions, [](const M::Sessions& b) { return statistic(b.ttft_returning_turn_ms, &Summary::mean); }))
SERVING_METRIC("session_ttft_returning_p99_ms", "P99 TTFT of returning turns", "ms", "/metrics/sessions/ttft_returning_turn_ms/p99", "sessions", "",
               not_speed, not_compared, in_block<M::Sessions>(&M::sessions, [](const M::Sessions& b) { return statistic(b.ttft_returning_turn_ms, &Summary::p99); }))
SERVING_METRIC("session_duration_mean_s", "mean session completion time", "s", "/metrics/sessions/session_duration_s/mean", "sessions", "first turn's arrival to last turn's last token, think times included",
               not_speed, not_compared, in_block<M::Sessions>(&M::sessions, [](const M::Sessions& b) { return statistic(b.session_duration_s, &Summary::mean); }))
SERVING_METRIC("session_returning_hit_rate", "returning turns: prompt tokens served from cache", "fraction", "/metrics/sessions/returning_cached_token_fraction", "sessions", "",
               not_speed, not_compared, in_block<M::Sessions>(&M::sessions, [](const M::Sessions& b) { return number(b.returning_cached_token_fraction); }))
SERVING_METRIC("offload_hbm_hit_rate", "prompt tokens found in HBM", "fraction", "/metrics/kv_offload/hbm_hit_token_fraction", "kv_offload", "",
               not_speed, not_compared, in_block<M::KvOffload>(&M::kv_offload, [](const M::KvOffload& b) { return number(b.hbm_hit_token_fraction); }))
SERVING_METRIC("offload_tier1_hit_rate", "prompt tokens reloaded from the first offload tier", "fraction", "/metrics/kv_offload/tiers/0/hit_token_fraction", "kv_offload", "",
               not_speed, not_compared, in_block<M::KvOffload>(&M::kv_offload, [](const M::KvOffload& b) { return tier_hit_rate(b, 0); }))
SERVING_METRIC("offload_tier2_hit_rate", "prompt tokens reloaded from the second offload tier", "fraction", "/metrics/kv_offload/tiers/1/hit_token_fraction", "kv_offload", "",
               not_speed, not_compared, in_block<M::KvOffload>(&M::kv_offload, [](const M::KvOffload& b) { return tier_hit_rate(b, 1); }))
SERVING_METRIC("offload_exposed_reload_s", "reload time the steps could not hide", "s", "/metrics/kv_offload/exposed_reload_time_s", "kv_offload", "",
               not_speed, not_compared, in_block<M::KvOffload>(&M::kv_offload, [](const M::KvOffload& b) { return number(b.exposed_reload_time_s); }))
SERVING_METRIC("spec_tokens_per_step", "speculative: tokens per verification step", "tokens", "/metrics/speculative/tokens_per_verify_step", "", "",
               not_speed, not_compared, in_block<M::Speculative>(&M::speculative, [](const M::Speculative& b) { return number(b.tokens_per_verify_step); }))
SERVING_METRIC("lora_load_fraction", "adapter loading share of busy time", "fraction", "/metrics/lora/load_time_fraction", "", "",
               not_speed, not_compared, in_block<M::Lora>(&M::lora, [](const M::Lora& b) { return number(b.load_time_fraction); }))
SERVING_METRIC("lora_adapter_loads", "adapter loads", "count", "/metrics/lora/adapter_loads", "", "",
               not_speed, not_compared, in_block<M::Lora>(&M::lora, [](const M::Lora& b) { return integer(b.adapter_loads); }))
SERVING_METRIC("lora_gemm_fraction", "LoRA GEMM share of busy time", "fraction", "/metrics/lora/lora_gemm_time_fraction", "", "",
               not_speed, not_compared, in_block<M::Lora>(&M::lora, [](const M::Lora& b) { return number(b.lora_gemm_time_fraction); }))
SERVING_METRIC("kv_transfer_mean_ms", "mean KV transfer time", "ms", "/metrics/kv_transfer/transfer_ms/mean", "", "",
               not_speed, not_compared, in_block<M::KvTransfer>(&M::kv_transfer, [](const M::KvTransfer& b) { return statistic(b.transfer_ms, &S::mean); }))
SERVING_METRIC("moe_expert_time_fraction", "expert GEMM share of busy time", "fraction", "/metrics/moe/expert_time_fraction", "", "",
               not_speed, not_compared, in_block<M::Moe>(&M::moe, [](const M::Moe& b) { return number(b.expert_time_fraction); }))
SERVING_METRIC("moe_all_to_all_exposed_fraction", "all-to-all exposed, two-batch overlap", "fraction", "/metrics/moe/two_batch_overlap/all_to_all_exposed_fraction", "", "of its steps' dispatch and combine time, the share no stage of the other micro-batch hid",
               not_speed, not_compared, in_block<M::Moe>(&M::moe, [](const M::Moe& b) { return b.two_batch_overlap ? number(b.all_to_all_exposed_fraction) : ServingFigure{}; }))
SERVING_METRIC("energy_per_output_token_J", "energy per output token", "J", "/metrics/energy/per_output_token_J", "", "all GPUs over the run (power from each step's MFU and MBU, idle power between steps) / output tokens",
               not_speed, compared("energy_per_output_token_J"), real([](const M& m) { return m.energy.per_output_token_J; }))
SERVING_METRIC("usd_per_million_output_tokens", "cost per million output tokens", "USD", "/metrics/cost/usd_per_million_output_tokens", "", "",
               not_speed, not_compared, in_block<M::Cost>(&M::cost, [](const M::Cost& b) { return number(b.usd_per_million_output_tokens); }))
SERVING_METRIC("quant_decode_speedup", "decode step speedup vs unquantized weights (same GPUs, batch 1)", "x", "/quantization/decode_speedup", "", "",
               not_speed, not_compared, quantization([](const QuantizationFigures& q) { return number(q.decode_speedup); }))
SERVING_METRIC("quant_weight_reduction", "weight memory reduction vs unquantized", "x", "/quantization/weight_reduction", "", "",
               not_speed, not_compared, quantization([](const QuantizationFigures& q) { return number(q.weight_reduction); }))
SERVING_METRIC("quant_unquantized_fits", "unquantized weights fit these GPUs", "bool", "/quantization/unquantized_fits", "", "",
               not_speed, not_compared, quantization([](const QuantizationFigures& q) { return ServingFigure{Kind::Bool, q.unquantized_fits ? 1.0 : 0.0, ""}; }))
SERVING_COMPARE_RESULT("compare_throughput_ratio", "output throughput vs baseline", ratio, "output_tokens_per_s")
SERVING_COMPARE_RESULT("compare_goodput_ratio", "goodput vs baseline", ratio, "goodput_requests_per_s")
SERVING_COMPARE_RESULT("compare_ttft_mean_ratio", "mean TTFT vs baseline", ratio, "ttft_mean_ms")
SERVING_COMPARE_RESULT("compare_ttft_p99_ratio", "P99 TTFT vs baseline", ratio, "ttft_p99_ms")
SERVING_COMPARE_RESULT("compare_ttft_stddev_ratio", "TTFT standard deviation vs baseline", ratio, "ttft_stddev_ms")
SERVING_COMPARE_RESULT("compare_tpot_mean_ratio", "mean TPOT vs baseline", ratio, "tpot_mean_ms")
SERVING_COMPARE_RESULT("compare_tpot_p99_ratio", "P99 TPOT vs baseline", ratio, "tpot_p99_ms")
SERVING_COMPARE_RESULT("compare_e2e_p50_ratio", "P50 E2E vs baseline", ratio, "e2e_p50_s")
SERVING_COMPARE_RESULT("compare_running_mean_ratio", "mean concurrent requests vs baseline", ratio, "running_mean")
SERVING_COMPARE_RESULT("compare_running_max_ratio", "max concurrent requests vs baseline", ratio, "running_max")
SERVING_COMPARE_RESULT("compare_kv_capacity_ratio", "KV capacity (tokens per replica) vs baseline", ratio, "kv_tokens_per_replica")
SERVING_COMPARE_RESULT("compare_kv_peak_ratio", "peak KV blocks in use vs baseline", ratio, "kv_peak_blocks_used")
SERVING_COMPARE_RESULT("compare_throughput_per_gpu_ratio", "output throughput per GPU vs baseline", ratio, "output_tokens_per_s_per_gpu")
SERVING_COMPARE_RESULT("compare_decode_speedup", "decode speedup vs baseline (baseline TPOT / TPOT)", speedup, "tpot_mean")
SERVING_COMPARE_RESULT("compare_e2e_speedup", "E2E speedup vs baseline (baseline E2E / E2E)", speedup, "e2e_mean")
// The rest of the ratios and speedups a compare block holds (serve/serving_job.cpp), so that every one has words.
SERVING_COMPARE_RESULT("compare_requests_ratio", "request throughput vs baseline", ratio, "requests_per_s")
SERVING_COMPARE_RESULT("compare_ttft_p50_ratio", "P50 TTFT vs baseline", ratio, "ttft_p50_ms")
SERVING_COMPARE_RESULT("compare_tpot_p50_ratio", "P50 TPOT vs baseline", ratio, "tpot_p50_ms")
SERVING_COMPARE_RESULT("compare_itl_p99_ratio", "P99 inter-token latency vs baseline", ratio, "itl_p99_ms")
SERVING_COMPARE_RESULT("compare_e2e_mean_ratio", "mean E2E vs baseline", ratio, "e2e_mean_s")
SERVING_COMPARE_RESULT("compare_e2e_p99_ratio", "P99 E2E vs baseline", ratio, "e2e_p99_s")
SERVING_COMPARE_RESULT("compare_kv_token_utilization_ratio", "KV memory holding tokens vs baseline", ratio, "kv_token_utilization")
SERVING_COMPARE_RESULT("compare_preemptions_ratio", "preemptions vs baseline", ratio, "preemptions")
SERVING_COMPARE_RESULT("compare_energy_ratio", "energy per output token vs baseline", ratio, "energy_per_output_token_J")
SERVING_COMPARE_RESULT("compare_kv_per_token_ratio", "KV cache per token vs baseline", ratio, "kv_KiB_per_token")
SERVING_COMPARE_RESULT("compare_max_concurrent_ratio", "max concurrent max_model_len requests vs baseline", ratio, "max_concurrent_at_max_len")
SERVING_COMPARE_RESULT("compare_ttft_speedup", "TTFT speedup vs baseline (baseline mean TTFT / mean TTFT)", speedup, "ttft_mean")
// Shown by the CLI table and the page's serving view beside the headline metrics.
SERVING_METRIC("input_tokens_per_s", "throughput (prompt tokens)", "tokens/s", "/metrics/throughput/input_tokens_per_s", "", "",
               speed_rate, not_compared, real([](const M& m) { return m.throughput.input_tokens_per_s; }))
SERVING_METRIC("tokens_per_step_mean", "mean tokens per step", "tokens", "/metrics/concurrency/tokens_per_step_mean", "", "prompt and output tokens the batch processes in one engine step",
               not_speed, not_compared, real([](const M& m) { return m.concurrency.tokens_per_step_mean; }))
SERVING_METRIC("kv_blocks_total", "KV blocks (all replicas)", "blocks", "/metrics/kv_cache/blocks_total", "", "",
               not_speed, not_compared, count([](const M& m) { return m.kv_cache.blocks_total; }))
SERVING_METRIC("kv_recomputes", "preemptions by recompute", "count", "/metrics/kv_cache/recomputes", "", "",
               not_speed, not_compared, count([](const M& m) { return m.kv_cache.recomputes; }))
SERVING_METRIC("kv_swaps_out", "preemptions by swap to host", "count", "/metrics/kv_cache/swaps_out", "", "",
               not_speed, not_compared, count([](const M& m) { return m.kv_cache.swaps_out; }))
SERVING_METRIC("spec_expected_tokens_per_step", "speculative: expected tokens per verification step", "tokens", "/metrics/speculative/expected_tokens_per_verify_step", "", "from the acceptance rate alone",
               not_speed, not_compared, in_block<M::Speculative>(&M::speculative, [](const M::Speculative& b) { return number(b.expected_tokens_per_verify_step); }))
SERVING_METRIC("kv_transfer_p99_ms", "P99 KV transfer time", "ms", "/metrics/kv_transfer/transfer_ms/p99", "", "",
               not_speed, not_compared, in_block<M::KvTransfer>(&M::kv_transfer, [](const M::KvTransfer& b) { return statistic(b.transfer_ms, &S::p99); }))
SERVING_METRIC("requests_total", "requests", "count", "/metrics/requests/total", "", "",
               not_speed, not_compared, count([](const M& m) { return m.requests.total; }))
SERVING_METRIC("requests_completed", "completed requests", "count", "/metrics/requests/completed", "", "",
               not_speed, not_compared, count([](const M& m) { return m.requests.completed; }))
SERVING_METRIC("requests_dropped", "dropped requests", "count", "/metrics/requests/dropped", "", "",
               not_speed, not_compared, count([](const M& m) { return m.requests.dropped; }))
SERVING_METRIC("requests_unfinished", "unfinished requests", "count", "/metrics/requests/unfinished", "", "",
               not_speed, not_compared, count([](const M& m) { return m.requests.unfinished; }))
SERVING_METRIC("duration_s", "simulated duration", "s", "/metrics/duration_s", "", "",
               not_speed, not_compared, real([](const M& m) { return m.duration_s; }))
SERVING_METRIC("quant_decode_step_ms", "decode step, batch 1", "ms", "/quantization/decode_step_ms", "", "",
               not_speed, not_compared, quantization([](const QuantizationFigures& q) { return number(q.decode_step_ms); }))
SERVING_METRIC("quant_decode_step_unquantized_ms", "decode step, batch 1, unquantized weights", "ms", "/quantization/decode_step_ms_unquantized", "", "",
               not_speed, not_compared, quantization([](const QuantizationFigures& q) { return number(q.decode_step_ms_unquantized); }))
SERVING_METRIC("quant_prefill_speedup", "prefill speedup vs unquantized weights", "x", "/quantization/prefill_speedup", "", "",
               not_speed, not_compared, quantization([](const QuantizationFigures& q) { return number(q.prefill_speedup); }))
SERVING_METRIC("quant_weights_GiB", "weights per GPU", "GiB", "/quantization/weights_GiB", "", "",
               not_speed, not_compared, quantization([](const QuantizationFigures& q) { return number(q.weights_GiB); }))
SERVING_METRIC("quant_weights_unquantized_GiB", "unquantized weights per GPU", "GiB", "/quantization/weights_GiB_unquantized", "", "",
               not_speed, not_compared, quantization([](const QuantizationFigures& q) { return number(q.weights_GiB_unquantized); }))

#undef SERVING_METRIC
#undef SERVING_COMPARED_FIGURE
#undef SERVING_COMPARE_RESULT
