// vLLM benchmark_serving.py / `vllm bench serve` and SGLang bench_serving
// result objects (SGLang's script began as a copy of vLLM's: the load and
// total keys are shared, the latency keys differ).
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "api/bench_import_fields.hpp"
#include "api/bench_import_readers.hpp"
#include "core/error.hpp"

namespace sightline::api::bench {

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

// Keys both scripts write that do not change what the figures read mean, each
// with why it is not read. Every other key a reader did not take is refused at
// the key (refuse_unread_keys): a wrong answer that looks right is worse than a
// refusal. Listed in docs/calibrate-from-benchmarks.md ("Keys not read").
struct IgnoredKey {
  const char* key;
  const char* why;
};
constexpr IgnoredKey kIgnoredServingKeys[] = {
    {"date", "when the run was made"},
    {"label", "the user's label"},
    {"tag", "the user's tag"},
    {"backend", "the client's request API"},
    {"endpoint_type", "the client's request API"},
    {"tokenizer_id", "the tokenizer the client counted with"},
    {"dataset_name", "the prompt generator; the lengths are read from the totals"},
    {"random_input_len", "the generator's setting; the lengths are read from the totals"},
    {"random_output_len", "the generator's setting; the lengths are read from the totals"},
    {"random_range_ratio", "the generator's setting; the lengths are read from the totals"},
    {"sharegpt_output_len", "the generator's setting; the lengths are read from the totals"},
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
    {"input_lens", "per-request prompt lengths (--save-detailed), checked against num_prompts; the total is read"},
    {"output_lens", "per-request output lengths (--save-detailed), checked against num_prompts; the total is read"},
    {"ttfts", "per-request TTFTs (--save-detailed), checked against num_prompts; their mean is read"},
    {"itls", "per-request inter-token latencies (--save-detailed); their mean is read"},
    {"generated_texts", "the outputs' text"},
    {"errors", "the failed requests' messages; their count (failed) is read"},
    {"server_info",
     "the server's settings as SGLang reports them: the replay runs the base scenario's deployment, which this "
     "reader does not compare with them (a note says so)"},
};

// Other statistics of the latency distributions whose mean and median are read:
// mean_, median_, std_ and pNN_ of ttft, tpot, itl, e2el / e2e_latency, in ms.
bool is_latency_statistic(const std::string& key) {
  static const char* kStats[] = {"mean_", "median_", "std_", "p"};
  static const char* kMetrics[] = {"ttft_ms", "tpot_ms", "itl_ms", "e2el_ms", "e2e_latency_ms"};
  for (const char* stat : kStats) {
    const std::string s = stat;
    if (key.rfind(s, 0) != 0) continue;
    size_t at = s.size();
    if (s == "p") {  // pNN_ or pNN.N_
      const size_t digits = key.find_first_not_of("0123456789.", at);
      if (digits == at || digits == std::string::npos || key[digits] != '_') continue;
      at = digits + 1;
    }
    for (const char* m : kMetrics)
      if (key.compare(at, std::string::npos, m) == 0) return true;
  }
  return false;
}

// Every key of the run's object that the reader neither took nor lists as not
// changing what it read: refused, all named, at the first.
void refuse_unread_keys(const json& j, const Fields& f, BenchRun& r) {
  std::vector<std::string> unread;
  for (const auto& [key, value] : j.items()) {
    if (value.is_null() || is_latency_statistic(key)) continue;
    if (std::find(r.used.begin(), r.used.end(), f.at(key)) != r.used.end()) continue;
    bool ignored = false;
    for (const IgnoredKey& k : kIgnoredServingKeys) ignored = ignored || key == k.key;
    if (!ignored) unread.push_back(key);
  }
  if (j.contains("server_info") && !j["server_info"].is_null())
    r.notes.push_back("server_info is not read: the replay runs the base scenario's deployment; check that it is the server's");
  if (unread.empty()) return;
  std::string names;
  for (const std::string& k : unread) names += (names.empty() ? "'" : ", '") + printable(k, 40) + "'";
  refuse(error_code::kNotImplemented, r.file, f.at(unread.front()),
         "keys this " + r.format + " reader does not know: " + names +
             "; a key that may change what the figures mean is refused, not passed over (the keys it reads and "
             "the ones it lists as not changing them: docs/calibrate-from-benchmarks.md)");
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
  refuse_unread_keys(j, f, r);
  r.asks.push_back("GPU, parallelism and engine settings (the base scenario)");
  return r;
}

BenchRun read_sglang_object(const json& j, const std::string& file, const std::string& where) {
  BenchRun r = new_bench_run("sglang", file, where);
  const Fields f(j, file, where, &r);
  refuse_unreplayed_keys(j, f, r);
  read_serving_load(f, r, false);
  read_serving_totals(f, r);
  read_serving_figures(f, "mean_e2e_latency_ms");
  read_serving_spread(f, r);
  if (!f.has("mean_ttft_ms") && f.has("median_ttft_ms"))
    r.notes.push_back("late-2024 bench_serving layout: TTFT and ITL recorded as medians only; compared as medians");
  // Vision tokens make a prompt the replay's text-only prefill does not price.
  if (f.maybe("total_input_vision_tokens", 0, kMaxBenchTokens).value_or(0) > 0)
    refuse(error_code::kNotImplemented, r.file, f.at("total_input_vision_tokens"),
           "the prompts carried images (total_input_vision_tokens > 0); a multimodal run is not replayed");
  refuse_unread_keys(j, f, r);
  r.asks.push_back("model (bench_serving lines do not record it)");
  r.asks.push_back("GPU, parallelism and engine settings (the base scenario)");
  return r;
}

}  // namespace sightline::api::bench
