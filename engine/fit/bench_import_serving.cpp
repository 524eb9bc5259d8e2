// vLLM benchmark_serving.py / `vllm bench serve` and SGLang bench_serving
// result objects (SGLang's script began as a copy of vLLM's: the load and
// total keys are shared, the latency keys differ).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "fit/bench_import_fields.hpp"
#include "fit/bench_import_readers.hpp"
#include "fit/bench_server_settings.hpp"
#include "core/error.hpp"

namespace sightline::fit::bench {

namespace {

constexpr int64_t kMaxBenchRequests = 1'000'000'000;
constexpr double kMaxBenchTokens = 1e13;

// request_rate and max_concurrency as both scripts apply them: a finite rate
// draws arrivals (vLLM: gamma of shape `burstiness`, 1 = Poisson; SGLang:
// Poisson), and a cap holds an arrival that finds that many requests in
// flight at the client until one ends (serve/client_cap.hpp); an infinite
// rate sends every request at t = 0, and a cap then makes the run a closed
// loop of that many clients.
void read_serving_load(const Fields& f, BenchRun& r, bool has_burstiness) {
  const auto rate = f.rate("request_rate");
  if (!rate) refuse(error_code::kMissingKey, r.file, f.at("request_rate"), "missing 'request_rate' (the load of the run)");
  r.load_source = f.at("request_rate");
  const auto cap = f.maybe_integer("max_concurrency", 1, 1'000'000);
  if (std::isinf(*rate)) {
    if (cap) {
      r.load = "closed_loop";
      r.concurrency = *cap;
      r.load_source = f.at("max_concurrency");
    } else {
      r.load = "burst";
      r.notes.push_back("request_rate inf without max_concurrency: every request sent at t = 0");
    }
    return;
  }
  r.load = "rate";
  r.rate_qps = *rate;
  if (cap) {
    r.max_concurrency = *cap;
    r.notes.push_back("a rate with max_concurrency " + std::to_string(*cap) +
                      ": an arrival that finds " + std::to_string(*cap) +
                      " requests in flight waits at the client and is timed from its send");
  }
  if (has_burstiness) {
    const auto b = f.maybe("burstiness", 1e-4, 1e4);
    if (b && *b != 1) {
      r.arrival = "gamma";
      r.arrival_cv = 1 / std::sqrt(*b);
    }
  }
}

// completed, total_input_tokens, total_output_tokens: the run's count and mean lengths.
void read_serving_totals(const Fields& f, BenchRun& r) {
  r.requests = f.integer("completed", 0, kMaxBenchRequests);
  r.requests_source = f.at("completed");
  const double in = f.number("total_input_tokens", 0, kMaxBenchTokens);
  const double out = f.number("total_output_tokens", 0, kMaxBenchTokens);
  if (r.requests > 0) {
    r.prompt_tokens_mean = in / static_cast<double>(r.requests);
    r.output_tokens_mean = out / static_cast<double>(r.requests);
  }
  r.prompt_source = f.at("total_input_tokens");
  r.output_source = f.at("total_output_tokens");
}

// SGLang bench_serving's random dataset draws each prompt's length uniformly
// in [max(int(random_input_len x random_range_ratio), 1), random_input_len]
// and each output's in [int(random_output_len x random_range_ratio),
// random_output_len] (sample_random_requests, sgl-project/sglang
// python/sglang/bench_serving.py, the same in the late-2024 copies and at
// 0033168f0f; outputs run to their length: ignore_eos unless
// --disable-ignore-eos). The replay draws from the same ranges, not a fixed
// mean: a run's batch and KV use depend on the spread, not only on the mean.
// A range is taken only where the run's recorded mean agrees with it (within
// four standard errors of the mean of `completed` draws, and half a token):
// outputs cut at EOS or at the context do not follow it, and are replayed at
// their recorded mean, with a note; a ratio of 1 draws one length, which the
// mean replays. An output range from 0 starts at 1 (a request the engine
// serves emits a token).
void read_sglang_random_lengths(const Fields& f, BenchRun& r) {
  if (f.text("dataset_name") != "random" || r.requests <= 0) return;
  const auto in_len = f.maybe_integer("random_input_len", 1, 1 << 30);
  const auto out_len = f.maybe_integer("random_output_len", 1, 1 << 30);
  const auto ratio = f.maybe("random_range_ratio", 0, 1);
  if (!in_len || !out_len || !ratio) return;
  auto take = [&](std::optional<BenchRun::LengthRange>& range, const char* what, int64_t lo, int64_t hi,
                  const std::optional<double>& mean, const char* key) {
    if (lo >= hi) return;  // one length: the recorded mean is it
    const double width = static_cast<double>(hi - lo + 1);
    const double draws_sd = std::sqrt((width * width - 1) / 12);  // a uniform integer's standard deviation
    const double expected = (static_cast<double>(lo) + static_cast<double>(hi)) / 2;
    const double tolerance = 4 * draws_sd / std::sqrt(static_cast<double>(r.requests)) + 0.5;
    char line[320];
    if (!mean || std::fabs(*mean - expected) > tolerance) {
      std::snprintf(line, sizeof line,
                    "random dataset: the recorded mean %s (%.1f tokens) is not the generator's (%.1f +- %.1f over "
                    "[%lld, %lld]); replayed at the recorded mean",
                    what, mean.value_or(0), expected, tolerance, static_cast<long long>(lo), static_cast<long long>(hi));
      r.notes.push_back(line);
      return;
    }
    range = BenchRun::LengthRange{std::max<int64_t>(lo, 1), hi, f.at(key)};
    std::snprintf(line, sizeof line, "random dataset: %s lengths replayed as drawn, uniform in [%lld, %lld]", what,
                  static_cast<long long>(range->min), static_cast<long long>(hi));
    r.notes.push_back(line);
  };
  take(r.prompt_range, "prompt", std::max<int64_t>(static_cast<int64_t>(*in_len * *ratio), 1), *in_len,
       r.prompt_tokens_mean, "random_input_len");
  take(r.output_range, "output", static_cast<int64_t>(*out_len * *ratio), *out_len, r.output_tokens_mean,
       "random_output_len");
}

// The latency and throughput keys both scripts write; only the end-to-end key differs.
void read_serving_figures(const Fields& f, const char* e2e_key) {
  f.figure("ttft_mean_ms", "mean_ttft_ms");
  f.figure("ttft_median_ms", "median_ttft_ms");
  f.figure("tpot_mean_ms", "mean_tpot_ms");
  f.figure("itl_mean_ms", "mean_itl_ms");
  f.figure("itl_median_ms", "median_itl_ms");
  f.figure("e2e_mean_ms", e2e_key);
  f.figure("requests_per_s", "request_throughput");
  f.figure("output_tokens_per_s", "output_throughput");
}

// The spread both scripts record beside each mean: how well the benchmark
// pinned that mean down (a cold first request makes a run's mean TTFT
// uncertain), which the fit weighs its residual by.
void read_serving_spread(const Fields& f, BenchRun& r) {
  if (r.requests <= 0) return;
  for (auto [metric, key] : {std::pair<const char*, const char*>{"ttft_mean_ms", "std_ttft_ms"},
                             {"tpot_mean_ms", "std_tpot_ms"},
                             {"itl_mean_ms", "std_itl_ms"}}) {
    for (BenchFigure& m : r.measured)
      if (m.metric == metric && m.value > 0)
        if (const auto sd = f.maybe(key, 0, 1e12))
          m.rel_se = *sd / m.value / std::sqrt(static_cast<double>(r.requests));
  }
}

// Keys that change what a run's figures mean, which the replay does not
// model: refused at the key, never read past. Speculative decoding (vLLM
// `spec_decode_*`, SGLang `accept_length`) emits several tokens a step, so
// TPOT and ITL are not one decode step's; a multi-turn run (`mode`,
// `num_conversations`, `turns_per_conversation`) sends prompts that carry the
// conversation so far. A null value says the feature was off.
struct UnreplayedKey {
  const char* key;
  bool prefix;
  const char* what;
};
constexpr UnreplayedKey kUnreplayedKeys[] = {
    {"spec_decode_", true, "speculative decoding: a step may emit several tokens, so TPOT and ITL are not per decode step"},
    {"accept_length", false, "speculative decoding: a step may emit several tokens, so TPOT and ITL are not per decode step"},
    {"mode", false, "a benchmark mode this reader does not know (multi-turn?)"},
    {"num_conversations", false, "multi-turn conversations: each turn's prompt carries the conversation so far"},
    {"turns_per_conversation", false, "multi-turn conversations: each turn's prompt carries the conversation so far"},
};

void refuse_unreplayed_keys(const json& j, const Fields& f, const BenchRun& r) {
  if (!j.is_object()) return;
  for (const auto& [key, value] : j.items()) {
    if (value.is_null()) continue;
    for (const UnreplayedKey& u : kUnreplayedKeys)
      if (u.prefix ? key.rfind(u.key, 0) == 0 : key == u.key)
        refuse(error_code::kNotImplemented, r.file, f.at(key),
               "'" + printable(key, 40) + "' is set: " + u.what + "; such a run is not replayed");
  }
}

}  // namespace

BenchRun read_vllm_object(const json& j, const std::string& file, const std::string& where) {
  BenchRun r = new_bench_run("vllm", file, where);
  const Fields f(j, file, where, &r);
  refuse_unreplayed_keys(j, f, r);
  r.model = f.text("model_id");
  if (r.model.empty()) r.asks.push_back("model (the file has no model_id)");
  read_serving_load(f, r, true);
  read_serving_totals(f, r);
  if (const auto failed = f.maybe_integer("failed", 0, kMaxBenchRequests); failed && *failed > 0)
    r.notes.push_back(std::to_string(*failed) + " requests failed; the figures are over the completed ones");
  read_serving_figures(f, "mean_e2el_ms");
  read_serving_spread(f, r);
  // Per-request arrays (--save-detailed): one entry per prompt sent, so a
  // shorter array is a truncated file.
  const auto prompts = f.maybe_integer("num_prompts", 1, kMaxBenchRequests);
  for (const char* key : {"input_lens", "output_lens", "ttfts"}) {
    const json* a = f.array(key);
    if (!a) continue;
    for (size_t i = 0; i < a->size(); ++i)
      if (!(*a)[i].is_number())
        refuse(error_code::kType, file, pointer_append(f.at(key), i), "must be a number, got " + json_type_name((*a)[i]));
    if (prompts && static_cast<int64_t>(a->size()) != *prompts)
      refuse(error_code::kInvalidValue, file, f.at(key),
             std::string("'") + key + "' has " + std::to_string(a->size()) + " entries, but num_prompts is " +
                 std::to_string(*prompts) + " (truncated file?)");
  }
  // A sweep's summary records the server's --max-num-seqs of each run: the replay runs with it.
  if (const auto seqs = f.maybe_integer("max_num_seqs", 1, 65536)) {
    r.server_max_num_seqs = *seqs;
    r.notes.push_back("the server ran with max_num_seqs " + std::to_string(*seqs) + "; the replay does too");
  }
  r.asks.push_back("GPU, parallelism and engine settings (the base scenario)");
  return r;
}

BenchRun read_sglang_object(const json& j, const std::string& file, const std::string& where) {
  BenchRun r = new_bench_run("sglang", file, where);
  const Fields f(j, file, where, &r);
  refuse_unreplayed_keys(j, f, r);
  read_serving_load(f, r, false);
  read_serving_totals(f, r);
  read_sglang_random_lengths(f, r);
  read_serving_figures(f, "mean_e2e_latency_ms");
  read_serving_spread(f, r);
  if (!f.has("mean_ttft_ms") && f.has("median_ttft_ms"))
    r.notes.push_back("late-2024 bench_serving layout: TTFT and ITL recorded as medians only; compared as medians");
  // Vision tokens make a prompt the replay's text-only prefill does not price.
  if (f.maybe("total_input_vision_tokens", 0, kMaxBenchTokens).value_or(0) > 0)
    refuse(error_code::kNotImplemented, r.file, f.at("total_input_vision_tokens"),
           "the prompts carried images (total_input_vision_tokens > 0); a multimodal run is not replayed");
  read_sglang_server_info(f, r);
  r.asks.push_back("model (bench_serving lines do not record it)");
  r.asks.push_back("GPU, parallelism and engine settings (the base scenario)");
  return r;
}

}  // namespace sightline::fit::bench
