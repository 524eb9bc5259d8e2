// The searches' metrics: one row per metric, the only place a search metric
// is defined. Each row holds its catalogue words (id, label, unit, the JSON
// pointer where the search writes it, the input it needs, a description) and
// how it is written from the ranked candidate:
//
//   DEPLOYMENT_SEARCH_METRIC(id, label, unit, pointer, needs, description, getter)
//   TRAINING_SEARCH_METRIC(id, label, unit, pointer, needs, description, getter)
//
// getter: an expression of search/search_key_metrics.cpp's helpers (bounded
// over a field of the outcome, with its interval from the cost-bound runs;
// size_of, no interval; candidate_gpus; search_total, the whole search's count).
//
// An X-macro table, with no include guard: the includer defines both macros
// and the table undefines them. scenario/metric_catalogue.cpp expands each row
// into its MetricInfo and drops the getter (the scenario layer sees no search
// type: the getter is never compiled there); search/search_key_metrics.cpp
// expands each search's rows into its getters and drops the words. So a
// search metric cannot have words without a getter or a getter without words.
// Rows stay in this order: it is the catalogue's order (registries, CLI tables).
#if !defined(DEPLOYMENT_SEARCH_METRIC) || !defined(TRAINING_SEARCH_METRIC)
#error "define DEPLOYMENT_SEARCH_METRIC and TRAINING_SEARCH_METRIC before including scenario/search_metric_table.hpp"
#endif

// The searches headline their answer (cheapest_meeting_slo, best); each
// ranked row carries the same metrics of its own configuration.
DEPLOYMENT_SEARCH_METRIC("usd_per_million_tokens", "Cost per million tokens", "USD", "/cheapest_meeting_slo/usd_per_million_tokens", "", "the deployment's price per hour over the input and output tokens per hour it carries",
                         bounded(&CandidateOutcome::usd_per_million_tokens))
DEPLOYMENT_SEARCH_METRIC("ttft_p99_ms", "P99 TTFT at the target rate", "ms", "/cheapest_meeting_slo/ttft_p99_ms", "", "",
                         bounded(&CandidateOutcome::ttft_p99_ms))
DEPLOYMENT_SEARCH_METRIC("tpot_p99_ms", "P99 TPOT at the target rate", "ms", "/cheapest_meeting_slo/tpot_p99_ms", "", "",
                         bounded(&CandidateOutcome::tpot_p99_ms))
DEPLOYMENT_SEARCH_METRIC("ttft_p90_ms", "P90 TTFT at the target rate", "ms", "/cheapest_meeting_slo/ttft_p90_ms", "", "the answer's TTFT and the Pareto front's axis when the question judges TTFT at P90 (question_percentiles)",
                         bounded(&CandidateOutcome::ttft_p90_ms))
DEPLOYMENT_SEARCH_METRIC("ttft_p50_ms", "P50 TTFT at the target rate", "ms", "/cheapest_meeting_slo/ttft_p50_ms", "", "the answer's TTFT and the Pareto front's axis when the question judges TTFT at P50 (question_percentiles)",
                         bounded(&CandidateOutcome::ttft_p50_ms))
DEPLOYMENT_SEARCH_METRIC("tpot_p90_ms", "P90 TPOT at the target rate", "ms", "/cheapest_meeting_slo/tpot_p90_ms", "", "the answer's TPOT when the question judges TPOT at P90 (question_percentiles)",
                         bounded(&CandidateOutcome::tpot_p90_ms))
DEPLOYMENT_SEARCH_METRIC("tpot_p50_ms", "P50 TPOT at the target rate", "ms", "/cheapest_meeting_slo/tpot_p50_ms", "", "the answer's TPOT when the question judges TPOT at P50 (question_percentiles)",
                         bounded(&CandidateOutcome::tpot_p50_ms))
DEPLOYMENT_SEARCH_METRIC("max_qps", "max sustainable QPS under the SLO", "req/s", "/cheapest_meeting_slo/max_qps", "", "the budget question: the highest rate the deployment sustains within the SLO (steady-state capacity search)",
                         bounded(&CandidateOutcome::max_qps))
DEPLOYMENT_SEARCH_METRIC("gpus", "GPUs", "GPUs", "/cheapest_meeting_slo/gpus", "", "GPUs of the cheapest deployment meeting the SLO",
                         candidate_gpus())
DEPLOYMENT_SEARCH_METRIC("deployments_simulated", "Deployments simulated", "deployments", "/space/simulated", "", "candidates run after pruning",
                         search_total())
TRAINING_SEARCH_METRIC("tokens_per_usd", "Tokens per dollar", "tokens/USD", "/best/tokens_per_usd", "", "tokens trained per dollar of GPU time",
                       bounded(&TrainOutcome::tokens_per_usd))
TRAINING_SEARCH_METRIC("time_to_train_days", "Time to train", "days", "/best/time_to_train_days", "", "the base's tokens_to_train at this throughput",
                       bounded(&TrainOutcome::time_to_train_days))
TRAINING_SEARCH_METRIC("step_time_ms", "Step time", "ms", "/best/step_time_ms", "", "one optimizer step, all micro-batches",
                       bounded(&TrainOutcome::step_time_ms))
TRAINING_SEARCH_METRIC("tokens_per_s", "Throughput", "tokens/s", "/best/tokens_per_s", "", "tokens trained per second, all GPUs",
                       bounded(&TrainOutcome::tokens_per_s))
TRAINING_SEARCH_METRIC("mfu_pct", "MFU", "%", "/best/mfu_pct", "", "model FLOPs / (time × GPUs × bf16 peak)",
                       bounded(&TrainOutcome::mfu_pct))
TRAINING_SEARCH_METRIC("cost_usd", "Cost to train", "USD", "/best/cost_usd", "", "the base's tokens_to_train at the GPUs' price per hour",
                       bounded(&TrainOutcome::cost_usd))
TRAINING_SEARCH_METRIC("memory_per_gpu_GiB", "Memory per GPU", "GiB", "/best/memory_per_gpu_GiB", "", "peak, most loaded GPU",
                       size_of(&TrainOutcome::memory_GiB))
TRAINING_SEARCH_METRIC("gpus", "GPUs", "GPUs", "/best/gpus", "", "GPUs of the best configuration",
                       candidate_gpus())
TRAINING_SEARCH_METRIC("configurations_estimated", "Configurations estimated", "configurations", "/space/estimated", "", "configurations run after pruning",
                       search_total())

#undef DEPLOYMENT_SEARCH_METRIC
#undef TRAINING_SEARCH_METRIC
