// Each format's list of keys that do not change what its reader's figures mean,
// each with why (fit/bench_import_keys.hpp says how a path is matched). Every
// key of a file is read, on its format's list, or refused at its place in the
// file. Kept in docs/calibrate-from-benchmarks.md ("Keys not read"). SGLang's
// server_info is read argument by argument (fit/bench_server_args.hpp).
#include <iterator>
#include <map>

#include "fit/bench_import_fields.hpp"
#include "fit/bench_import_keys.hpp"
#include "core/error.hpp"

namespace sightline::fit::bench {

namespace {

constexpr const char* kOtherStatistic = "another statistic of a distribution whose mean (or median) is read";
constexpr const char* kGeneratorSetting = "the prompt generator's setting; the lengths are read from what was sent";

// vLLM benchmark_serving / `vllm bench serve` and SGLang bench_serving: the keys of one run's object.
constexpr IgnoredKey kServingKeys[] = {
    {"date", "when the run was made"},
    {"label", "the user's label"},
    {"tag", "the user's tag"},
    {"backend", "the client's request API"},
    {"endpoint_type", "the client's request API"},
    {"tokenizer_id", "the tokenizer the client counted with"},
    // Read where they fix the lengths' distribution (SGLang's random dataset,
    // fit/bench_import_serving.cpp); on any other run they do not apply.
    {"dataset_name", kGeneratorSetting},
    {"random_input_len", kGeneratorSetting},
    {"random_output_len", kGeneratorSetting},
    {"random_range_ratio", kGeneratorSetting},
    {"sharegpt_output_len", kGeneratorSetting},
    {"total_output_tokens_retokenized", "the output re-counted by the client's tokenizer; total_output_tokens is read"},
    {"total_input_text_tokens", "the text part of total_input_tokens, which is read"},
    {"run_number", "the repetition's index in a sweep"},
    {"duration", "the run's span; its rates are read"},
    {"total_token_throughput", "derived from the figures read"},
    {"total_throughput", "derived from the figures read"},
    {"input_throughput", "derived from the figures read"},
    {"max_output_tokens_per_s", "the peak of a per-second series; the mean rate is read"},
    {"max_concurrent_requests", "the peak requests in flight the client saw; the cap (max_concurrency) is read"},
    {"concurrency", "the mean requests in flight the client saw; the cap (max_concurrency) is read"},
    {"request_goodput", "goodput under the client's own --goodput bounds; the latencies themselves are read"},
    {"rtfx", "an audio real-time factor (speech models)"},
    {"burstiness", "the gamma shape of a finite request_rate, read there; without one it does not apply"},
    // mean_, median_, std_, pNN_ of each latency in ms: the means (and the
    // late-2024 SGLang medians) are read, the std_ where a mean is.
    {"mean_e2el_ms", kOtherStatistic}, {"median_e2el_ms", kOtherStatistic}, {"std_e2el_ms", kOtherStatistic},
    {"p#_e2el_ms", kOtherStatistic}, {"mean_e2e_latency_ms", kOtherStatistic},
    {"median_e2e_latency_ms", kOtherStatistic}, {"std_e2e_latency_ms", kOtherStatistic},
    {"p#_e2e_latency_ms", kOtherStatistic}, {"median_tpot_ms", kOtherStatistic}, {"std_tpot_ms", kOtherStatistic},
    {"p#_tpot_ms", kOtherStatistic}, {"std_ttft_ms", kOtherStatistic}, {"p#_ttft_ms", kOtherStatistic},
    {"std_itl_ms", kOtherStatistic}, {"p#_itl_ms", kOtherStatistic},
    {"input_lens", "per-request prompt lengths (--save-detailed), checked against num_prompts; the total is read"},
    {"output_lens", "per-request output lengths (--save-detailed), checked against num_prompts; the total is read"},
    {"ttfts", "per-request TTFTs (--save-detailed), checked against num_prompts; their mean is read"},
    {"itls", "per-request inter-token latencies (--save-detailed); their mean is read"},
    {"generated_texts", "the outputs' text"},
    {"errors", "the failed requests' messages; their count is read"},
};

// GuideLLM reports, 0.2 and 0.5: the paths below the document.
constexpr const char* kNotMeasured = "the figure over errored, incomplete or all requests; the one over the successful requests is read";
constexpr const char* kScheduler = "the scheduler's clock and bookkeeping, not the requests' figures";
constexpr const char* kClientSide = "the client's own settings or bookkeeping, not the load it applied (read from the strategy)";
constexpr IgnoredKey kGuidellmKeys[] = {
    {"metadata", "the report's tool version and platform"},
    {"args", "the command line of 0.5; what each benchmark applied is in its config, read there"},
    {"benchmarks/#/id_", "the benchmark's id"},
    {"benchmarks/#/run_id", "the run's id"},
    {"benchmarks/#/run_index", "the benchmark's index in the run"},
    {"benchmarks/#/start_time", "the measured window's clock; its rates are read"},
    {"benchmarks/#/end_time", "the measured window's clock; its rates are read"},
    {"benchmarks/#/duration", "the measured window's span; its rates are read (where a run cut in flight is stopped)"},
    {"benchmarks/#/warmup_duration", "the warm-up left out of the metrics (refused before a run cut in flight)"},
    {"benchmarks/#/cooldown_duration", "the cool-down left out of the metrics (refused after a run cut in flight)"},
    {"benchmarks/#/requests", "the per-request records; their summaries under metrics are read"},
    {"benchmarks/#/worker", "the client's worker description (0.2)"},
    {"benchmarks/#/request_loader", "the prompt data loader (0.2); the lengths are read from metrics"},
    {"benchmarks/#/extras", "the user's extra fields"},
    {"benchmarks/#/env_args", "the client's environment (0.2)"},
    // 0.5: the settings under config (0.2: under args).
    {"benchmarks/#/*/id_", "the benchmark's id"},
    {"benchmarks/#/*/run_id", "the run's id"},
    {"benchmarks/#/*/run_index", "the benchmark's index in the run"},
    {"benchmarks/#/*/strategy_index", "the strategy's index in the profile"},
    {"benchmarks/#/*/sample_requests", "how many per-request records the report keeps"},
    {"benchmarks/#/*/warmup", "the warm-up left out of the metrics (which are read)"},
    {"benchmarks/#/*/cooldown", "the cool-down left out of the metrics (which are read)"},
    {"benchmarks/#/*/warmup_number", "the warm-up left out of the metrics (which are read)"},
    {"benchmarks/#/*/warmup_duration", "the warm-up left out of the metrics (which are read)"},
    {"benchmarks/#/*/cooldown_number", "the cool-down left out of the metrics (which are read)"},
    {"benchmarks/#/*/cooldown_duration", "the cool-down left out of the metrics (which are read)"},
    {"benchmarks/#/*/max_number", "a stop condition; what it cut is read from the request counts"},
    {"benchmarks/#/*/max_duration", "a stop condition; what it cut is read from the request counts"},
    {"benchmarks/#/*/constraints", "the stop conditions; what they cut is read from the request counts"},
    {"benchmarks/#/*/prefer_response_metrics", "whether token counts come from the server's usage reply or the client's tokenizer"},
    {"benchmarks/#/*/profile", "the profile (sweep) that chose this benchmark's strategy, which is read"},
    {"benchmarks/#/*/requests", "the prompt data loader; the lengths are read from metrics"},
    {"benchmarks/#/*/environment", "the client's process environment"},
    {"benchmarks/#/*/strategy/worker_count", "the client's worker processes"},
    {"benchmarks/#/*/strategy/random_seed", "the seed of the arrival draws"},
    {"benchmarks/#/*/backend/target", "the server's address"},
    {"benchmarks/#/*/backend/timeout", kClientSide},
    {"benchmarks/#/*/backend/timeout_connect", kClientSide},
    {"benchmarks/#/*/backend/http2", kClientSide},
    {"benchmarks/#/*/backend/follow_redirects", kClientSide},
    {"benchmarks/#/*/backend/verify", kClientSide},
    {"benchmarks/#/*/backend/openai_paths", "the server's URL paths"},
    {"benchmarks/#/*/backend/validate_backend", "the health check the client made"},
    // The scheduler's own bookkeeping over the whole run (warm-up and cool-down included).
    {"benchmarks/#/scheduler_state/node_id", kScheduler},
    {"benchmarks/#/scheduler_state/num_processes", kScheduler},
    {"benchmarks/#/scheduler_state/*_time", kScheduler},
    {"benchmarks/#/scheduler_state/*_constraints", "which stop condition ended the run; what it cut is read from the request counts"},
    {"benchmarks/#/scheduler_state/progress", kScheduler},
    {"benchmarks/#/scheduler_state/*_requests", "the scheduler's counts over the whole run; the measured window's are read (and cancelled_requests)"},
    {"benchmarks/#/*/*_time", kScheduler},
    {"benchmarks/#/*/*_avg", "the client's timing averages; TTFT and latency are timed from each request's send"},
    // metrics: the ones not read.
    {"benchmarks/#/metrics/request_concurrency", "the requests in flight the client saw; the load is read from the strategy"},
    {"benchmarks/#/metrics/request_streaming_iterations_count", "the streamed chunks per request"},
    {"benchmarks/#/metrics/total_token_count", "the sum of the prompt and output counts, which are read"},
    {"benchmarks/#/metrics/time_per_output_token_ms", "the latency over every token, the first included; inter_token_latency_ms is read"},
    {"benchmarks/#/metrics/prompt_tokens_per_second", "derived from the figures read"},
    {"benchmarks/#/metrics/tokens_per_second", "derived from the figures read"},
    {"benchmarks/#/metrics/output_tokens_per_iteration", "the tokens per streamed chunk"},
    {"benchmarks/#/metrics/iter_tokens_per_iteration", "the tokens per streamed chunk"},
    {"benchmarks/#/metrics/text", "the prompts' and outputs' words and characters; their tokens are read"},
    {"benchmarks/#/metrics/*/errored", kNotMeasured},
    {"benchmarks/#/metrics/*/incomplete", kNotMeasured},
    {"benchmarks/#/metrics/*/total", kNotMeasured},
    {"benchmarks/#/metrics/*/successful/median", kOtherStatistic},
    {"benchmarks/#/metrics/*/successful/mode", kOtherStatistic},
    {"benchmarks/#/metrics/*/successful/variance", kOtherStatistic},
    {"benchmarks/#/metrics/*/successful/std_dev", kOtherStatistic},
    {"benchmarks/#/metrics/*/successful/min", kOtherStatistic},
    {"benchmarks/#/metrics/*/successful/max", kOtherStatistic},
    {"benchmarks/#/metrics/*/successful/count", kOtherStatistic},
    {"benchmarks/#/metrics/*/successful/total_sum", kOtherStatistic},
    {"benchmarks/#/metrics/*/successful/percentiles", kOtherStatistic},
    {"benchmarks/#/metrics/*/successful/pdf", kOtherStatistic},
    {"benchmarks/#/metrics/*/successful/cumulative_distribution", kOtherStatistic},
};

// genai-perf and AIPerf profile exports: the metric objects and input_config.
constexpr IgnoredKey kProfileExportKeys[] = {
    {"*/p#", kOtherStatistic},
    {"*/min", kOtherStatistic},
    {"*/max", kOtherStatistic},
    {"*/std", kOtherStatistic},
    {"*/count", kOtherStatistic},
    {"*/sum", kOtherStatistic},
    {"schema_version", "the export's schema version"},
    {"aiperf_version", "the tool's version"},
    {"benchmark_id", "the run's id"},
    {"run_info", "the run's id, seed, trial and command line (input_config holds the settings, read there)"},
    {"start_time", "the run's clock"},
    {"end_time", "the run's clock"},
    {"benchmark_duration", "the run's span; its rates are read"},
    {"telemetry_data", "GPU telemetry the client sampled"},
    {"time_to_second_token", "the first inter-token gap; inter_token_latency is read"},
    {"time_to_first_output_token", "TTFT excluding reasoning tokens; time_to_first_token is read"},
    {"inter_chunk_latency", "the gap between streamed chunks; inter_token_latency is read"},
    {"output_token_throughput_per_user", "derived from inter_token_latency, which is read"},
    {"output_token_throughput_per_request", "derived from the figures read"},
    {"e2e_output_token_throughput", "derived from the figures read"},
    {"prefill_throughput_per_user", "derived from the figures read"},
    {"total_token_throughput", "derived from the figures read"},
    {"output_token_count", "the output lengths, read as output_sequence_length"},
    {"total_output_tokens", "the total of output_sequence_length, which is read"},
    {"total_osl", "the total of output_sequence_length, which is read"},
    {"total_isl", "the total of input_sequence_length, which is read"},
    {"osl_mismatch_diff_pct", "how far outputs fell from the requested length; the lengths sent are read"},
    {"osl_mismatch_count", "how many outputs fell short of the requested length; the lengths sent are read"},
    {"http_req_*", "the HTTP client's timing breakdown of request_latency, which is read"},
    {"input_config/endpoint", "the server's address and request API"},
    {"input_config/endpoint_type", "the client's request API"},
    {"input_config/backend", "the client's request API"},
    {"input_config/streaming", "streaming is required: time_to_first_token is read"},
    {"input_config/url", "the server's address"},
    {"input_config/artifacts", "where the client wrote its files"},
    {"input_config/runtime", "the client's console"},
    {"input_config/gpu_telemetry", "GPU telemetry the client sampled"},
    {"input_config/server_metrics", "the server metrics the client scraped"},
    {"input_config/mlflow", "experiment tracking"},
    {"input_config/otel", "tracing"},
    {"input_config/tokenizer", "the tokenizer the client counted with"},
    {"input_config/random_seed", "the seed of the prompt draws"},
    {"input_config/request_count", "the requests asked for; request_count (the completed ones) is read"},
    {"input_config/synthetic_input_tokens_mean", kGeneratorSetting},
    {"input_config/synthetic_input_tokens_stddev", kGeneratorSetting},
    {"input_config/output_tokens_mean", kGeneratorSetting},
    {"input_config/output_tokens_stddev", kGeneratorSetting},
    {"input_config/datasets/#/dataset", "the prompt data set; the lengths are read from what was sent"},
    {"input_config/datasets/#/entries", "the data set's size"},
    {"input_config/datasets/#/name", "the data set's name"},
    {"input_config/datasets/#/path", "the data set's file"},
    {"input_config/datasets/#/random_seed", "the seed of the prompt draws"},
    {"input_config/datasets/#/type", "where the data set came from (public, synthetic, file)"},
    {"telemetry_stats", "GPU telemetry the client sampled (genai-perf)"},
    // genai-perf's config-file layout (wellflat/k8s-dev@e17e8f5b:bench/etl/profile_export_genai_perf.json).
    {"input_config/subcommand", "the tool's subcommand"},
    {"input_config/verbose", "logging"},
    {"input_config/template_filename", "the config file's name"},
    {"input_config/analyze", "a sweep's range; this export's load is its stimulus, read"},
    {"input_config/output", "where the client wrote its files"},
    {"input_config/process", "the export's own processing"},
    {"input_config/perf_analyzer/path", "the load generator's binary"},
    {"input_config/perf_analyzer/verbose", "logging"},
    {"input_config/perf_analyzer/stability_percentage", "when the client judged its measurement stable"},
    {"input_config/perf_analyzer/measurement", "how long the client measured; the completed requests are read"},
    {"input_config/perf_analyzer/warmup_request_count", "warm-up requests sent before the measurement, in none of its figures"},
    {"input_config/input/extra", "extra request fields"},
    {"input_config/input/goodput", "the client's goodput bounds; the latencies themselves are read"},
    {"input_config/input/header", "HTTP headers"},
    {"input_config/input/file", "the prompt file; the lengths are read from what was sent"},
    {"input_config/input/num_dataset_entries", "the data set's size"},
    {"input_config/input/random_seed", "the seed of the prompt draws"},
    {"input_config/input/prompt_source", "where the prompts came from; the lengths are read from what was sent"},
    {"input_config/input/synthetic_files", "the prompt files; the lengths are read from what was sent"},
    {"input_config/input/output_tokens", kGeneratorSetting},
    {"input_config/input/synthetic_tokens", kGeneratorSetting},
    {"input_config/input/prefix_prompt/length", "the prefix's length, with prefix_prompt.num 0 (read): no prefix"},
    {"input_config/input/sessions/turns", "the turns of sessions, with sessions.num 0 (read): none"},
    {"input_config/input/sessions/turn_delay", "the delay between turns, with sessions.num 0 (read): none"},
    {"input_config/input/image/*/stddev", "the spread of an image size whose mean 0 (read) says no images"},
    {"input_config/input/image/batch_size", "images per request, with no images"},
    {"input_config/input/image/format", "the images' format, with no images"},
    {"input_config/input/audio/length/stddev", "the spread of an audio length whose mean 0 (read) says no audio"},
    {"input_config/input/audio/batch_size", "audio clips per request, with no audio"},
    {"input_config/input/audio/format", "the audio's format, with no audio"},
    {"input_config/input/audio/depths", "the audio's format, with no audio"},
    {"input_config/input/audio/sample_rates", "the audio's format, with no audio"},
    {"input_config/input/audio/num_channels", "the audio's format, with no audio"},
    {"input_config/phases/#/name", "the phase's name"},
    {"input_config/phases/#/requests", "the requests the phase asked for; request_count (the completed ones) is read"},
    {"input_config/phases/#/exclude_from_results", "read (false when absent)"},
};

// MLPerf LoadGen mlperf_log_summary.txt: the keys of its "key : value" lines and its other lines.
constexpr const char* kConstraintCheck = "one of LoadGen's checks, summed up by 'Result is' (read)";
constexpr IgnoredKey kMlperfLines[] = {
    {"========*", "a section rule"},
    {"MLPerf Results Summary", "the banner"},
    {"Additional Stats", "a section title"},
    {"Test Parameters Used", "a section title"},
    {"Performance constraints satisfied", kConstraintCheck},
    {"Min duration satisfied", kConstraintCheck},
    {"Min queries satisfied", kConstraintCheck},
    {"Early stopping satisfied", kConstraintCheck},
    {"TTFT Early Stopping Result", kConstraintCheck},
    {"TPOT Early Stopping Result", kConstraintCheck},
    {"* Run successful.", kConstraintCheck},
    {"No warnings encountered during test.", "LoadGen found nothing to warn of"},
    {"No errors encountered during test.", "LoadGen found no error"},
    {"Generated samples per query might be different as the one in the setting.", "the sample_concatenate_permutation warning, read at its first line"},
    {"Check the generated_samples_per_query line in the detailed log for the real", "the sample_concatenate_permutation warning, read at its first line"},
    {"samples_per_query value", "the sample_concatenate_permutation warning, read at its first line"},
    {"Min latency (ns)", "read with Mean latency (ns)"},
    {"Max latency (ns)", "read with Mean latency (ns)"},
    {"# percentile latency (ns)", kOtherStatistic},
    {"# percentile first token latency (ns)", kOtherStatistic},
    {"# percentile time to output token (ns)", kOtherStatistic},
    {"# percentile time per output token (ns)", kOtherStatistic},
    {"Min First Token latency (ns)", kOtherStatistic},
    {"Max First Token latency (ns)", kOtherStatistic},
    {"Min Time to Output Token (ns)", kOtherStatistic},
    {"Max Time to Output Token (ns)", kOtherStatistic},
    {"Min Time per Output Token (ns)", kOtherStatistic},
    {"Max Time per Output Token (ns)", kOtherStatistic},
    {"target_qps", "the rate asked for; 'Scheduled samples per second' (what LoadGen scheduled) is read where printed, and the Offline run is one query"},
    {"ttft_latency (ns)", "the TTFT bound the run was judged against, not a measurement"},
    {"tpot_latency (ns)", "the TPOT bound the run was judged against, not a measurement"},
    {"min_query_count", "read for a Server run; an Offline run is one query"},
    {"min_duration (ms)", "read for a Server run; an Offline run is one query of samples_per_query"},
    {"qsl_rng_seed", "a seed of LoadGen's draws"},
    {"sample_index_rng_seed", "a seed of LoadGen's draws"},
    {"schedule_rng_seed", "a seed of LoadGen's draws"},
    {"accuracy_log_rng_seed", "which responses the accuracy log keeps"},
    {"accuracy_log_probability", "which responses the accuracy log keeps"},
    {"accuracy_log_sampling_target", "which responses the accuracy log keeps"},
    {"print_timestamps", "logging"},
    {"performance_sample_count", "the loaded sample set; read where it pads the count (sample_concatenate_permutation)"},
    {"accuracy_sample_count", "the accuracy data set's size"},
};


constexpr IgnoredKeyList kServingKeysList{kServingKeys, std::size(kServingKeys)};
constexpr IgnoredKeyList kGuidellmKeysList{kGuidellmKeys, std::size(kGuidellmKeys)};
constexpr IgnoredKeyList kProfileExportKeysList{kProfileExportKeys, std::size(kProfileExportKeys)};
constexpr IgnoredKeyList kMlperfLinesList{kMlperfLines, std::size(kMlperfLines)};

}  // namespace

const IgnoredKeyList& ignored_keys(const std::string& format) {
  static const std::map<std::string, const IgnoredKeyList*> kLists = {
      {"vllm", &kServingKeysList},        {"sglang", &kServingKeysList},        {"guidellm", &kGuidellmKeysList},
      {"genai-perf", &kProfileExportKeysList}, {"aiperf", &kProfileExportKeysList}, {"mlperf", &kMlperfLinesList},
  };
  const auto it = kLists.find(format);
  if (it == kLists.end()) fail(error_code::kInternal, "", "no list of keys not read for the format '" + format + "'");
  return *it->second;
}

}  // namespace sightline::fit::bench
