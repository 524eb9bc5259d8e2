// GuideLLM reports (0.2 and 0.5 layouts) and genai-perf / AIPerf profile exports.
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

#include "fit/bench_import_fields.hpp"
#include "fit/bench_import_readers.hpp"
#include "core/error.hpp"

namespace sightline::fit::bench {

namespace {

// GuideLLM's StatusDistributionSummary: metrics[key].successful.mean.
std::optional<double> guidellm_mean(const Fields& metrics, const std::string& key, BenchRun& r, bool required) {
  const json* m = metrics.object(key);
  if (!m) {
    if (required) refuse(error_code::kMissingKey, r.file, metrics.at(key), "missing metric '" + key + "'");
    return std::nullopt;
  }
  const Fields mf(*m, r.file, metrics.at(key), nullptr);
  const json* s = mf.object("successful");
  if (!s) refuse(error_code::kMissingKey, r.file, mf.at("successful"), "missing 'successful'");
  const Fields sf(*s, r.file, mf.at("successful"), &r);
  return required ? sf.number("mean", 0, 1e12) : sf.maybe("mean", 0, 1e12);
}

void guidellm_figure(const Fields& metrics, const std::string& key, const char* metric, BenchRun& r, double scale = 1) {
  if (const auto v = guidellm_mean(metrics, key, r, false))
    r.measured.push_back({metric, *v * scale, pointer_append(pointer_append(metrics.at(key), "successful"), "mean")});
}

// The strategy as GuideLLM applied it (scheduler/strategies.py): synchronous
// (one request after another), concurrent (`streams` closed-loop streams),
// throughput (all at once, optionally capped at max_concurrency), constant
// and poisson (`rate` requests/s, capped at the client's max_concurrency
// requests in flight when it records one). 0.2's `initial_burst` (its
// default) sends floor(rate) requests at t = 0 first (guidellm
// scheduler/strategy.py, AsyncConstantStrategy): refused above one request.
void read_guidellm_strategy(const Fields& st, BenchRun& r) {
  const std::string type = st.required_text("type_");
  r.load_source = st.at("type_");
  const auto cap = st.maybe_integer("max_concurrency", 1, 1'000'000);
  if (type == "synchronous") {
    r.load = "closed_loop";
    r.concurrency = 1;
  } else if (type == "concurrent") {
    r.load = "closed_loop";
    r.concurrency = st.integer("streams", 1, 1'000'000);
  } else if (type == "throughput") {
    r.load = cap ? "closed_loop" : "burst";
    r.concurrency = cap.value_or(0);
    return;
  } else if (type == "constant" || type == "poisson") {
    r.load = "rate";
    r.rate_qps = st.number("rate", 1e-9, 1e9);
    r.arrival = type == "constant" ? "fixed" : "poisson";
    // A burst of one request is the schedule's own first arrival.
    if (st.flag("initial_burst") && std::floor(r.rate_qps) > 1)
      refuse(error_code::kNotImplemented, r.file, st.at("initial_burst"),
             "initial_burst: GuideLLM sent floor(rate) = " + std::to_string(static_cast<int64_t>(std::floor(r.rate_qps))) +
                 " requests at t = 0 before the rate (its 0.2 default); such a run is not replayed");
    if (cap) {
      r.max_concurrency = *cap;
      r.notes.push_back("a rate with the client's max_concurrency " + std::to_string(*cap) +
                        ": an arrival that finds that many requests in flight waits at the client");
    }
    return;
  } else {
    refuse(error_code::kInvalidValue, r.file, st.at("type_"),
           "unknown strategy '" + printable(type, 40) + "' (synchronous, concurrent, throughput, constant, poisson)");
  }
  // A closed loop's cap is its concurrency (GuideLLM writes it so).
  if (cap && *cap != r.concurrency)
    refuse(error_code::kInvalidValue, r.file, st.at("max_concurrency"),
           "max_concurrency " + std::to_string(*cap) + " is not the " + type + " strategy's " +
               std::to_string(r.concurrency) + " requests in flight");
}

// Images, video or audio in the prompts: a prefill the replay's text-only
// model does not price. metrics.image / video / audio hold zeros otherwise;
// every number under them is read, the first non-zero refused.
void refuse_guidellm_multimodal(const json& node, const std::string& at, BenchRun& r) {
  if (node.is_object()) {
    for (const auto& [k, v] : node.items()) refuse_guidellm_multimodal(v, pointer_append(at, k), r);
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) refuse_guidellm_multimodal(node[i], pointer_append(at, i), r);
  } else if (!node.is_null()) {
    if (!node.is_number()) refuse(error_code::kType, r.file, at, "must be a number, got " + json_type_name(node));
    if (node.get<double>() != 0)
      refuse(error_code::kNotImplemented, r.file, at,
             "the prompts carried images, video or audio (a non-zero multimodal metric): a multimodal run is not replayed");
    r.used.push_back(at);
  }
}

// One {successful, errored, incomplete, total} count object; total must be their sum.
struct RequestCounts {
  int64_t successful = 0, errored = 0, incomplete = 0;
  std::string incomplete_at;
};
RequestCounts guidellm_counts(const Fields& f, const std::string& file) {
  RequestCounts c;
  c.successful = f.integer("successful", 0, 1'000'000'000);
  c.errored = f.maybe_integer("errored", 0, 1'000'000'000).value_or(0);
  c.incomplete = f.maybe_integer("incomplete", 0, 1'000'000'000).value_or(0);
  c.incomplete_at = f.at("incomplete");
  if (const auto total = f.maybe_integer("total", 0, 3'000'000'000); total && *total != c.successful + c.errored + c.incomplete)
    refuse(error_code::kInvalidValue, file, f.at("total"),
           "'total' is not successful + errored + incomplete: the counts do not describe one set of requests");
  return c;
}

std::string short_number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

// An open-loop run cut in flight, replayed as it ran (docs/calibrate-from-
// benchmarks.md, "GuideLLM requests by status"): the measured window's
// requests (metrics.request_totals: successful, errored and incomplete) sent
// at the rate they came in over the window, the replay stopped at the
// window's end (benchmarks[i].duration, 0.5) with its figures over the
// requests it completed by then, as GuideLLM's are over the successful ones.
// The rate is the window's own (sent / duration): the load the server saw, a
// Poisson draw's included. A warm-up or cool-down loaded the server outside
// the window, which a replay of the window alone would not see: refused.
// False when the report does not record the window's duration (0.2).
bool read_guidellm_cut_window(const Fields& bf, const Fields* stats, const RequestCounts& window, BenchRun& r) {
  if (!bf.has("duration")) return false;
  const double duration = bf.number("duration", 1e-3, 1e9);
  for (const char* k : {"warmup_duration", "cooldown_duration"})
    if (bf.maybe(k, 0, 1e9).value_or(0) > 0)
      refuse(error_code::kNotImplemented, r.file, bf.at(k),
             std::to_string(window.incomplete) + " requests were cut in flight in a measured window with a " +
                 (k[0] == 'w' ? "warm-up before" : "cool-down after") +
                 " it: a replay of the window alone would not see that load; not replayed");
  // The scheduler's clock of the same window, where recorded, must agree.
  if (stats && stats->has("measure_start_time") && stats->has("measure_end_time")) {
    const double span = stats->number("measure_end_time", 0, 1e12) - stats->number("measure_start_time", 0, 1e12);
    if (std::fabs(span - duration) > 1e-3)
      refuse(error_code::kInvalidValue, r.file, bf.at("duration"),
             "the benchmark's duration " + short_number(duration) + " s is not its measured window's span (" +
                 "scheduler_metrics.measure_end_time - measure_start_time = " + short_number(span) + " s)");
  }
  r.stop_s = duration;
  r.sent = window.successful + window.errored + window.incomplete;
  r.cut = window.incomplete;
  r.stop_source = bf.at("duration");
  const double configured = r.rate_qps;
  if (r.load == "rate") r.rate_qps = static_cast<double>(r.sent) / r.stop_s;
  const std::string at_rate =
      r.load == "rate" ? " at " + short_number(r.rate_qps) + "/s (the strategy's rate: " + short_number(configured) + "/s)" : "";
  r.notes.push_back(std::to_string(window.incomplete) + " requests were in flight when the benchmark stopped after " +
                    short_number(r.stop_s) + " s and are in no figure: the replay sends the window's " +
                    std::to_string(r.sent) + " requests" + at_rate +
                    ", stops there and compares the requests it completed with the " +
                    std::to_string(window.successful) + " successful ones");
  return true;
}

// The requests of a GuideLLM benchmark by status. The figures are over the
// successful requests of the measured window (metrics.request_totals in 0.5,
// warm-up and cool-down left out; run_stats.requests_made in 0.2). Errored
// requests are left out of them (a note). Incomplete ones were in flight when
// the benchmark stopped (max_seconds, max_requests) and were cancelled: they
// loaded the server, but the figures leave them out. A closed loop has at most
// one per client in flight at any time and its steady state is what its
// figures measure: read, with a note. An open-loop run (a rate, a burst) with
// requests cut in flight in its window is replayed stopped at the window's end
// (read_guidellm_cut_window); without the window's clock, or with requests cut
// only outside the window, it is refused at the count. Requests GuideLLM
// created and cancelled before they were sent (scheduler_state.
// cancelled_requests beyond those in flight, 0.5) never reached the server: a
// note. nirjhar17/guidellm-pd-disaggregation@a7096e55: reports-v2/poisson5-
// benchmarks.json: 618 created, 337 successful, 281 cancelled = 3 in flight in
// the window (metrics.request_totals.incomplete; each has a TTFT) + 278 never
// sent (scheduler_metrics.requests_made counts 50 of them incomplete, with no
// entry in any of the window's metrics, not even a start).
void read_guidellm_requests(const Fields& bf, const Fields& mf, BenchRun& r) {
  const json* totals = mf.object("request_totals");
  const json* stats = bf.object("scheduler_metrics");
  const char* stats_key = stats ? "scheduler_metrics" : "run_stats";
  if (!stats) stats = bf.object("run_stats");
  const Fields* window = nullptr;
  std::optional<Fields> tf, made_f, sf;
  if (stats) {
    sf.emplace(*stats, r.file, bf.at(stats_key), &r);
    if (const json* made = sf->object("requests_made")) made_f.emplace(*made, r.file, sf->at("requests_made"), &r);
  }
  if (totals) tf.emplace(*totals, r.file, mf.at("request_totals"), &r);
  window = tf ? &*tf : made_f ? &*made_f : nullptr;
  if (!window)
    refuse(error_code::kMissingKey, r.file, mf.at("request_totals"),
           "missing the count of successful requests (metrics.request_totals or run_stats.requests_made)");
  const RequestCounts measured = guidellm_counts(*window, r.file);
  const RequestCounts whole = made_f ? guidellm_counts(*made_f, r.file) : measured;
  r.requests = measured.successful;
  r.requests_source = window->at("successful");
  if (measured.errored > 0)
    r.notes.push_back(std::to_string(measured.errored) + " requests errored; the figures are over the successful ones");
  const bool cut_counted_whole = whole.incomplete >= measured.incomplete;
  int64_t cut = cut_counted_whole ? whole.incomplete : measured.incomplete;
  const std::string cut_at = cut_counted_whole ? whole.incomplete_at : measured.incomplete_at;
  const bool open_loop = r.load != "closed_loop";
  if (cut > 0 && r.load == "closed_loop" && cut <= r.concurrency) {
    r.notes.push_back(std::to_string(cut) + " requests in flight when the benchmark stopped were cancelled (at most one per " +
                      "client); the figures are over the " + std::to_string(r.requests) + " successful ones");
  } else if (cut > 0 && open_loop && measured.incomplete > 0 && tf &&
             read_guidellm_cut_window(bf, sf ? &*sf : nullptr, measured, r)) {
    cut = measured.incomplete;
  } else if (cut > 0) {
    refuse(error_code::kNotImplemented, r.file, cut_at,
           std::to_string(cut) + " requests were in flight when the benchmark stopped and were cancelled (incomplete): "
           "they loaded the server, but the figures are over the " + std::to_string(measured.successful) +
           " that finished, which leaves out the latest arrivals, the slowest when a backlog builds; a replay completes "
           "every request it sends, so this " + r.load + " run is not replayed (a run whose requests all finished, a "
           "closed loop, or a rate or burst cut in its measured window with the window's clock recorded, is)");
  }
  if (const json* state = bf.object("scheduler_state")) {
    const Fields st(*state, r.file, bf.at("scheduler_state"), &r);
    const int64_t cancelled = st.maybe_integer("cancelled_requests", 0, 3'000'000'000).value_or(0);
    if (cancelled > cut)
      r.notes.push_back(std::to_string(cancelled - cut) + " requests were created and cancelled before they were sent " +
                        "(scheduler_state.cancelled_requests " + std::to_string(cancelled) + " less " + std::to_string(cut) +
                        " in flight): they never reached the server");
  }
}

BenchRun read_guidellm_benchmark(const json& b, const std::string& file, const std::string& p) {
  BenchRun r = new_bench_run("guidellm", file, p);
  const Fields bf(b, file, p, &r);
  if (bf.has("type_") && bf.text("type_") != "generative_benchmark")
    refuse(error_code::kNotImplemented, file, bf.at("type_"),
           "benchmark type '" + printable(bf.text("type_"), 40) + "' is not a generative (LLM) benchmark");
  // 0.5 keeps the run's settings under "config", 0.2 under "args".
  const json* config = bf.object("config");
  const json* args = bf.object("args");
  const std::string settings_key = config ? "config" : "args";
  const json* settings = config ? config : args;
  if (!settings)
    refuse(error_code::kMissingKey, file, bf.at("config"),
           "missing the benchmark's settings ('config' in GuideLLM 0.5, 'args' in 0.2)");
  const Fields sf(*settings, file, bf.at(settings_key), &r);
  const json* st = sf.object("strategy");
  if (!st) refuse(error_code::kMissingKey, file, sf.at("strategy"), "missing the benchmark's scheduling strategy");
  read_guidellm_strategy(Fields(*st, file, sf.at("strategy"), &r), r);
  if (const json* backend = sf.object("backend")) r.model = Fields(*backend, file, sf.at("backend"), &r).text("model");
  if (r.model.empty()) r.asks.push_back("model (the report does not name it)");

  const json* m = bf.object("metrics");
  if (!m) refuse(error_code::kMissingKey, file, bf.at("metrics"), "missing 'metrics'");
  const Fields mf(*m, file, bf.at("metrics"), &r);
  read_guidellm_requests(bf, mf, r);
  for (const char* k : {"image", "video", "audio"})
    if (mf.has(k)) {
      refuse_guidellm_multimodal(*mf.object(k), mf.at(k), r);
      mf.use(k);  // every number 0 or null: text-only prompts
    }
  r.prompt_tokens_mean = guidellm_mean(mf, "prompt_token_count", r, true);
  r.prompt_source = pointer_append(pointer_append(mf.at("prompt_token_count"), "successful"), "mean");
  r.output_tokens_mean = guidellm_mean(mf, "output_token_count", r, true);
  r.output_source = pointer_append(pointer_append(mf.at("output_token_count"), "successful"), "mean");
  if (!mf.has("time_to_first_token_ms"))
    refuse(error_code::kMissingKey, file, mf.at("time_to_first_token_ms"), "missing metric 'time_to_first_token_ms'");
  guidellm_figure(mf, "time_to_first_token_ms", "ttft_mean_ms", r);
  // time_per_output_token_ms spreads the whole latency over every token, the
  // first included; inter_token_latency_ms leaves the first token out, which
  // is TPOT as vLLM and this engine define it.
  guidellm_figure(mf, "inter_token_latency_ms", "tpot_mean_ms", r);
  guidellm_figure(mf, "request_latency", "e2e_mean_ms", r, 1e3);  // seconds in the report
  guidellm_figure(mf, "requests_per_second", "requests_per_s", r);
  guidellm_figure(mf, "output_tokens_per_second", "output_tokens_per_s", r);
  r.asks.push_back("GPU, parallelism and engine settings (the base scenario)");
  return r;
}

// A genai-perf / AIPerf metric object {"unit": ..., "avg": ...}; times in any
// of the units the tools write are converted to ms.
std::optional<double> export_avg(const Fields& root, const std::string& key, const std::string& kind, BenchRun& r,
                                 std::string* source) {
  const json* m = root.object(key);
  if (!m) return std::nullopt;
  const Fields mf(*m, r.file, root.at(key), &r);
  double scale = 1;
  const std::string unit = kind == "time" ? mf.required_text("unit") : mf.text("unit");
  if (kind == "time") {
    if (unit == "ms") scale = 1;
    else if (unit == "s" || unit == "sec") scale = 1e3;
    else if (unit == "us") scale = 1e-3;
    else if (unit == "ns") scale = 1e-6;
    else refuse(error_code::kInvalidValue, r.file, mf.at("unit"), "'" + key + "' has unit '" + printable(unit, 20) + "', expected ms, s, us or ns");
  } else if (!unit.empty() && unit.find(kind) == std::string::npos) {
    refuse(error_code::kInvalidValue, r.file, mf.at("unit"),
           "'" + key + "' has unit '" + printable(unit, 30) + "', expected " + kind);
  }
  if (source) *source = mf.at("avg");
  return mf.number("avg", 0, 1e12) * scale;
}

void export_figure(const Fields& root, const std::string& key, const char* metric, const char* kind, BenchRun& r) {
  std::string source;
  if (const auto v = export_avg(root, key, kind, r, &source)) r.measured.push_back({metric, *v, source});
}

// How an AIPerf run ended: was_cancelled (the user or a limit stopped it
// before every request was sent and answered: its figures are of a part of
// the run) is refused; failed requests (error_summary entries, the
// error_request_count metric) are named in a note, the figures being over the
// completed ones.
void read_export_outcome(const Fields& f, BenchRun& r) {
  if (f.flag("was_cancelled"))
    refuse(error_code::kNotImplemented, r.file, f.at("was_cancelled"),
           "the run was cancelled before it finished: its figures are of a part of the run; not replayed");
  if (const json* errors = f.array("error_summary")) {
    f.use("error_summary");
    if (!errors->empty())
      r.notes.push_back(std::to_string(errors->size()) + " kinds of request error (error_summary); the figures are over the completed requests");
  }
  std::string src;
  if (const auto failed = export_avg(f, "error_request_count", "", r, &src); failed && *failed > 0)
    r.notes.push_back(std::to_string(std::llround(*failed)) + " requests failed (error_request_count); the figures are over the completed ones");
}

// AIPerf 0.10+: input_config.phases[], each {name, type, requests,
// concurrency | request_rate, exclude_from_results}; warm-up phases are
// excluded from the results and from the replay.
bool read_aiperf_phases(const Fields& ic, BenchRun& r) {
  const json* phases = ic.array("phases");
  if (!phases) return false;
  int measured = 0;
  for (size_t i = 0; i < phases->size(); ++i) {
    const std::string pp = pointer_append(ic.at("phases"), i);
    const Fields ph((*phases)[i], r.file, pp, &r);
    const bool excluded = ph.flag("exclude_from_results");
    if (excluded) {
      r.used.push_back(pp);  // left out of the results and of the replay: its settings change nothing read
      r.notes.push_back("phase '" + ph.text("name") + "' excluded from the results (warm-up): not replayed");
      continue;
    }
    if (++measured > 1)
      refuse(error_code::kNotImplemented, r.file, pp, "more than one measured phase: the export mixes their figures");
    const std::string type = ph.required_text("type");
    r.load_source = ph.at("type");
    const auto conc = ph.maybe_integer("concurrency", 1, 1'000'000);
    if (type == "concurrency") {
      if (!conc) refuse(error_code::kMissingKey, r.file, ph.at("concurrency"), "a concurrency phase without 'concurrency'");
      r.load = "closed_loop";
      r.concurrency = *conc;
    } else if (type == "request_rate" || type == "poisson") {
      // AIPerf 0.10.0 also names a Poisson rate phase by its arrival pattern:
      // {"type": "poisson", "rate": 1.0} from `--request-rate 1.0
      // --arrival-pattern 'poisson'` (the run's own cli_command, in
      // tests/data/bench/real/anud18_..._r1.0_profile_export_aiperf.json).
      r.load = "rate";
      r.rate_qps = ph.has("request_rate") ? ph.number("request_rate", 1e-9, 1e9) : ph.number("rate", 1e-9, 1e9);
      const std::string pattern = type == "poisson" ? type : ph.text("arrival_pattern");
      if (pattern == "constant") r.arrival = "fixed";
      else if (!pattern.empty() && pattern != "poisson")
        refuse(error_code::kNotImplemented, r.file, ph.at("arrival_pattern"), "arrival pattern '" + printable(pattern, 30) + "' is not replayed");
      // A rate with a concurrency: AIPerf sleeps to the rate's time, then
      // waits for a free slot before it issues the request ("sleep-then-gate",
      // ai-dynamo/aiperf@159f90b9 docs/tutorials/request-rate-concurrency.md):
      // the client-side cap vLLM's --max-concurrency applies.
      if (conc) {
        r.max_concurrency = *conc;
        r.notes.push_back("a request_rate phase with concurrency " + std::to_string(*conc) +
                          ": an arrival that finds that many requests in flight waits at the client");
      }
    } else {
      refuse(error_code::kNotImplemented, r.file, ph.at("type"),
             "phase type '" + printable(type, 40) + "' is not replayed (concurrency, request_rate, poisson)");
    }
  }
  if (measured == 0) refuse(error_code::kInvalidValue, r.file, ic.at("phases"), "no phase is included in the results");
  return true;
}

// AIPerf's dataset formats (input_config.datasets[].format, aiperf
// CustomDatasetType): single_turn sends independent requests, which is what
// the replay models. multi_turn sends each session's turns in order, each
// prompt carrying the conversation so far (a prefix the server may have
// cached), random_pool draws the turns of conversations from a pool, and
// mooncake_trace / trace replay a trace's own timestamps: refused at the key.
struct UnreplayedDataset {
  const char* format;
  const char* what;
};
constexpr UnreplayedDataset kUnreplayedDatasets[] = {
    {"multi_turn", "multi-turn sessions: each turn waits for the last and its prompt carries the conversation so far"},
    {"random_pool", "conversations drawn from a pool (possibly several turns each; the export does not say how many)"},
    {"mooncake_trace", "a trace replayed at its own timestamps"},
    {"trace", "a trace replayed at its own timestamps"},
};

void refuse_unreplayed_datasets(const Fields& ic, BenchRun& r) {
  const json* datasets = ic.array("datasets");
  if (!datasets) return;
  for (size_t i = 0; i < datasets->size(); ++i) {
    const Fields d((*datasets)[i], r.file, pointer_append(ic.at("datasets"), i), &r);
    const std::string format = d.text("format");
    d.use("format");  // absent: AIPerf's default, single_turn
    if (format.empty() || format == "single_turn") continue;
    std::string what = "a dataset format this reader does not know";
    for (const UnreplayedDataset& u : kUnreplayedDatasets)
      if (format == u.format) what = u.what;
    refuse(error_code::kNotImplemented, r.file, d.at("format"),
           "dataset format '" + printable(format, 30) + "': " + what + "; such a run is not replayed");
  }
}

// genai-perf's config-file layout records what it generated under
// input_config.input (wellflat/k8s-dev@e17e8f5b:bench/etl/profile_export_genai_perf.json).
// Settings that make a request other than one independent text prompt are
// read, and refused when on: several prompts per request (batch_size), a
// shared prefix (prefix_prompt.num, which a server may cache), multi-turn
// sessions (sessions.num), images or audio (their mean size), and a payload
// file (a trace replayed at its own timestamps).
void refuse_genai_perf_inputs(const Fields& ic, BenchRun& r) {
  const json* in = ic.object("input");
  if (!in) return;
  const Fields f(*in, r.file, ic.at("input"), &r);
  if (const auto batch = f.maybe_integer("batch_size", 1, 1'000'000); batch && *batch != 1)
    refuse(error_code::kNotImplemented, r.file, f.at("batch_size"), "batch_size " + std::to_string(*batch) + ": several prompts per request are not replayed");
  const std::pair<const char*, const char*> counts[] = {{"prefix_prompt", "num"}, {"sessions", "num"}, {"image", "width"},
                                                        {"image", "height"}, {"audio", "length"}};
  for (const auto& [object, key] : counts) {
    const json* o = f.object(object);
    if (!o) continue;
    const Fields of(*o, r.file, f.at(object), &r);
    const bool sized = std::string(key) != "num";  // {"mean", "stddev"}
    const json* size = sized ? of.object(key) : nullptr;
    const double v = !sized ? of.maybe(key, 0, 1e12).value_or(0)
                            : size ? Fields(*size, r.file, of.at(key), &r).maybe("mean", 0, 1e12).value_or(0) : 0;
    if (v > 0)
      refuse(error_code::kNotImplemented, r.file, sized ? pointer_append(of.at(key), "mean") : of.at(key),
             std::string("input.") + object + "." + key + " is set: " +
                 (std::string(object) == "prefix_prompt" ? "a prompt prefix shared by requests (a server may cache it)"
                  : std::string(object) == "sessions"    ? "multi-turn sessions"
                                                         : "images or audio in the prompts") +
                 " is not replayed");
  }
  if (!f.text("payload_file").empty())
    refuse(error_code::kNotImplemented, r.file, f.at("payload_file"), "a payload file: a trace replayed at its own timestamps is not replayed");
}

// Where a genai-perf / AIPerf export without phases keeps its load: flat in
// input_config (genai-perf's command-line layout), under "loadgen" (AIPerf
// 0.9), or under "perf_analyzer": {"stimulus": {...}} (genai-perf's
// config-file layout, whose stimulus is one of concurrency, request_rate,
// session_concurrency, session_request_rate: triton-inference-server/perf_analyzer
// genai-perf/genai_perf/config/input/config_perf_analyzer.py). Session
// stimuli drive multi-turn conversations, which are not replayed.
Fields export_load_object(const Fields& ic, const json& icj, BenchRun& r) {
  if (const json* lg = ic.object("loadgen")) return Fields(*lg, r.file, ic.at("loadgen"), &r);
  if (const json* pa = ic.object("perf_analyzer")) {
    const Fields paf(*pa, r.file, ic.at("perf_analyzer"), &r);
    if (const json* st = paf.object("stimulus")) {
      const Fields stim(*st, r.file, paf.at("stimulus"), &r);
      for (const char* k : {"session_concurrency", "session_request_rate"})
        if (stim.has(k))
          refuse(error_code::kNotImplemented, r.file, stim.at(k),
                 std::string("stimulus '") + k + "' drives multi-turn sessions: not replayed");
      return stim;
    }
  }
  return Fields(icj, r.file, ic.path(), &r);
}

}  // namespace

std::vector<BenchRun> read_guidellm_report(const json& root, const std::string& file) {
  const Fields f(root, file, "", nullptr);
  const json* b = f.array("benchmarks");
  if (!b || b->empty()) refuse(error_code::kInvalidValue, file, "/benchmarks", "'benchmarks' must be a non-empty array");
  std::vector<BenchRun> runs;
  for (size_t i = 0; i < b->size(); ++i) runs.push_back(read_guidellm_benchmark((*b)[i], file, pointer_append("/benchmarks", i)));
  return runs;
}

BenchRun read_profile_export(const json& root, const std::string& file, const std::string& format) {
  BenchRun r = new_bench_run(format, file, "");
  const Fields f(root, file, "", &r);
  std::string src;
  const auto isl = export_avg(f, "input_sequence_length", "tokens", r, &src);
  if (!isl) refuse(error_code::kMissingKey, file, "/input_sequence_length", "missing metric 'input_sequence_length'");
  r.prompt_tokens_mean = *isl;
  r.prompt_source = src;
  const auto osl = export_avg(f, "output_sequence_length", "tokens", r, &src);
  if (!osl) refuse(error_code::kMissingKey, file, "/output_sequence_length", "missing metric 'output_sequence_length'");
  r.output_tokens_mean = *osl;
  r.output_source = src;
  const auto count = export_avg(f, "request_count", "", r, &src);
  if (!count) refuse(error_code::kMissingKey, file, "/request_count", "missing 'request_count': the number of completed requests");
  if (std::floor(*count) != *count) refuse(error_code::kType, file, src, "'request_count' must be a whole number");
  r.requests = static_cast<int64_t>(*count);
  r.requests_source = src;
  if (!f.has("time_to_first_token"))
    refuse(error_code::kMissingKey, file, "/time_to_first_token", "missing metric 'time_to_first_token' (a non-streaming run)");
  export_figure(f, "time_to_first_token", "ttft_mean_ms", "time", r);
  // inter_token_latency is (request latency − TTFT) / (output tokens − 1) per request: TPOT.
  export_figure(f, "inter_token_latency", "tpot_mean_ms", "time", r);
  export_figure(f, "request_latency", "e2e_mean_ms", "time", r);
  export_figure(f, "request_throughput", "requests_per_s", "requests", r);
  export_figure(f, "output_token_throughput", "output_tokens_per_s", "tokens", r);

  read_export_outcome(f, r);
  const json* icj = f.object("input_config");
  if (!icj) refuse(error_code::kMissingKey, file, "/input_config", "missing 'input_config' (the load of the run)");
  const Fields ic(*icj, file, "/input_config", &r);
  refuse_unreplayed_datasets(ic, r);
  refuse_genai_perf_inputs(ic, r);
  if (!read_aiperf_phases(ic, r)) {
    const Fields load = export_load_object(ic, *icj, r);
    const auto rate = load.rate("request_rate");
    const auto conc = load.maybe_integer("concurrency", 1, 1'000'000);
    if (rate && !std::isinf(*rate)) {
      r.load = "rate";
      r.rate_qps = *rate;
      r.load_source = load.at("request_rate");
      if (conc) r.concurrency = *conc;
    } else if (conc) {
      r.load = "closed_loop";
      r.concurrency = *conc;
      r.load_source = load.at("concurrency");
    } else {
      refuse(error_code::kMissingKey, file, load.at("concurrency"),
             "the export does not record the load: no 'concurrency', 'request_rate' or 'phases'");
    }
  }
  // The model: genai-perf input_config.model (a list) or, with its config-file
  // layout, input_config.model_names; AIPerf input_config.models.items[].name.
  const char* model_key = ic.has("model") ? "model" : "model_names";
  if (ic.has(model_key) && icj->at(model_key).is_string()) {
    r.model = ic.text(model_key);
  } else if (const json* m = ic.array(model_key); m && m->size() == 1 && (*m)[0].is_string()) {
    r.model = (*m)[0].get<std::string>();
    ic.use(model_key);
  } else if (const json* ms = ic.object("models")) {
    const Fields mf(*ms, file, ic.at("models"), &r);
    if (const json* items = mf.array("items"); items && !items->empty())
      r.model = Fields((*items)[0], file, pointer_append(mf.at("items"), 0), &r).text("name");
  }
  if (r.model.empty()) r.asks.push_back("model (the export does not name it)");
  r.asks.push_back("GPU, parallelism and engine settings (the base scenario)");
  return r;
}

}  // namespace sightline::fit::bench
