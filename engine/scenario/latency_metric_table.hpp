// The latency metrics: one row per metric, the only place a latency metric
// is defined. Each row holds its catalogue words (id, label, unit, the JSON
// pointer where the result writes it, the input it needs, a description, how
// the run's end-to-end speed reaches it) and how it is read from the typed
// result:
//
//   LATENCY_METRIC(id, label, unit, pointer, needs, description, speed, getter)
//
// speed: speed_time, speed_rate or not_speed (MetricInfo::speed: which figures
// the kind's measured end-to-end error band widens).
// getter: an expression of infer/latency_result.cpp's helpers (metric over a
// field of the metrics, floor_ms over a floor, cost_figure; R = LatencyResult).
//
// An X-macro table, with no include guard: the includer defines the macro and
// the table undefines it. scenario/metric_catalogue.cpp expands each row into
// its MetricInfo and drops the getter (the scenario layer sees no infer type:
// the getter is never compiled there); infer/latency_result.cpp expands each
// row into its getter and drops the words. So a latency metric cannot have
// words without a getter or a getter without words. Rows stay in this order:
// it is the catalogue's order (registries, CLI tables).
#ifndef LATENCY_METRIC
#error "define LATENCY_METRIC before including scenario/latency_metric_table.hpp"
#endif

LATENCY_METRIC("ttft_ms", "Time to first token", "ms", "/metrics/ttft_ms", "", "prompt processing of the whole batch",
               speed_time, metric(&R::Metrics::ttft_ms))
LATENCY_METRIC("tpot_ms", "Time per output token", "ms", "/metrics/tpot_ms", "", "one decode step",
               speed_time, metric(&R::Metrics::tpot_ms))
LATENCY_METRIC("e2e_ms", "End-to-end latency", "ms", "/metrics/e2e_ms", "", "first token plus every decode step",
               speed_time, metric(&R::Metrics::e2e_ms))
LATENCY_METRIC("output_tokens_per_s", "Output throughput", "tokens/s", "/metrics/output_tokens_per_s", "", "output tokens of the batch / end-to-end time",
               speed_rate, metric(&R::Metrics::output_tokens_per_s))
LATENCY_METRIC("output_tokens_per_s_per_gpu", "Output throughput per GPU", "tokens/s", "/metrics/output_tokens_per_s_per_gpu", "", "",
               speed_rate, metric(&R::Metrics::output_tokens_per_s_per_gpu))
LATENCY_METRIC("decode_tokens_per_s", "Decode throughput", "tokens/s", "/metrics/decode_tokens_per_s", "", "batch / time per output token",
               speed_rate, metric(&R::Metrics::decode_tokens_per_s))
LATENCY_METRIC("prefill_tokens_per_s", "Prefill throughput", "tokens/s", "/metrics/prefill_tokens_per_s", "", "prompt tokens of the batch / time to first token",
               speed_rate, metric(&R::Metrics::prefill_tokens_per_s))
LATENCY_METRIC("energy_J_per_output_token", "Energy per output token", "J", "/metrics/energy_J_per_output_token", "", "all GPUs, power from each step's MFU and MBU (the serving simulator's power model)",
               not_speed, metric(&R::Metrics::energy_J_per_output_token))
LATENCY_METRIC("prefill_mfu", "Prefill MFU", "fraction", "/metrics/prefill_mfu", "", "the prefill step's FLOPs (each operator at the dense peak of its compute dtype) / (its time x peak)",
               not_speed, metric(&R::Metrics::prefill_mfu))
LATENCY_METRIC("prefill_mbu", "Prefill MBU", "fraction", "/metrics/prefill_mbu", "", "the prefill step's HBM bytes / (its time x peak bandwidth)",
               not_speed, metric(&R::Metrics::prefill_mbu))
LATENCY_METRIC("decode_mfu", "Decode MFU", "fraction", "/metrics/decode_mfu", "", "the decode steps' FLOPs at dense peak / their time",
               not_speed, metric(&R::Metrics::decode_mfu))
LATENCY_METRIC("decode_mbu", "Decode MBU", "fraction", "/metrics/decode_mbu", "", "the decode steps' HBM bytes at peak bandwidth / their time: how close decode runs to the memory roofline",
               not_speed, metric(&R::Metrics::decode_mbu))
LATENCY_METRIC("prefill_compute_ms", "Prefill floor (FLOPs at peak)", "ms", "/floors/prefill_compute_ms", "", "the prefill's FLOPs at peak tensor-core throughput",
               not_speed, floor_ms(&R::prefill_compute_floor_ms))
LATENCY_METRIC("decode_weight_read_ms", "Decode floor (weights / HBM bandwidth)", "ms", "/floors/decode_weight_read_ms", "", "reading every weight once per decode step at full HBM bandwidth",
               not_speed, floor_ms(&R::decode_weight_read_floor_ms))
LATENCY_METRIC("usd_per_million_output_tokens", "Cost per million output tokens", "USD", "/metrics/usd_per_million_output_tokens", "gpu_hour_usd", "",
               not_speed, cost_figure())

#undef LATENCY_METRIC
