#pragma once
// Readers for the benchmark result files users already have, each to the
// schema its tool writes (field names as written; tests/data/bench/SOURCES.md
// and ../shared/data/bench-files/SOURCES.md name real files of each):
//   vllm        `vllm bench serve --save-result` / benchmarks/benchmark_serving.py:
//               one object, `--append-result` JSON lines, `vllm bench sweep`
//               run files and its summary (a JSON array of runs)
//   sglang      `python -m sglang.bench_serving --output-file` JSONL (one run
//               per line; late-2024 lines record only median TTFT and ITL)
//   guidellm    GuideLLM report JSON, 0.2 (`benchmarks[i].args.strategy`) and
//               0.5 (`benchmarks[i].config.strategy`)
//   genai-perf  NVIDIA genai-perf profile_export_genai_perf.json
//   aiperf      NVIDIA AIPerf profile_export_aiperf.json (0.9: input_config.loadgen;
//               0.10+: input_config.phases[], warm-up phases left out)
//   mlperf      MLPerf LoadGen mlperf_log_summary.txt (Server and Offline)
// The format is recognized by the document's structure (never by a substring).
// Each run becomes a BenchRun: the load as the tool applied it, the lengths,
// the measured figures with the key each came from, the keys it read and what
// the file does not say. Every error is located in the file the user gave: its
// name in the message, the JSON pointer (or /line/N for a text summary) in the
// path, in the tool's own key names.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/json_reader.hpp"

namespace sightline::fit {

// One measured figure of a run and where it was read.
struct BenchFigure {
  // ttft_mean_ms | ttft_median_ms | tpot_mean_ms | itl_mean_ms | itl_median_ms |
  // e2e_mean_ms | requests_per_s | output_tokens_per_s
  std::string metric;
  double value = 0;
  std::string source;  // pointer (or /line/N) inside the file
  // Relative standard error of a measured mean, from the spread the file
  // records (vLLM/SGLang `std_*_ms` / mean / sqrt(completed)); 0: not recorded.
  double rel_se = 0;
};

// One server of the deployment a result file reports (SGLang's server_info):
// what the replay's deployment must agree with (fit/bench_server_settings.hpp).
struct BenchServer {
  std::string at;              // the server's object in the file (a JSON pointer)
  std::string role = "mixed";  // mixed | prefill | decode
  int64_t tp = 1, pp = 1, dp = 1, ep = 1;
  bool dp_attention = false;   // enable_dp_attention: attention data parallel over the dp_size ranks
  std::optional<Dtype> weights, kv_cache;  // as the server was told (none: chosen from the checkpoint)
  std::optional<Dtype> activations;        // `dtype` (none: "auto", the checkpoint's)
  std::string load_balance;                // load_balance_method, across dp_size replicas
  // What the server says of the engine's host side, compared with the base
  // scenario's software stack (none: not stated).
  std::optional<bool> cuda_graphs, overlap, custom_all_reduce;
  std::vector<int64_t> graph_batch_sizes;  // cuda_graph_bs (empty: not stated)
  int64_t graph_max_bs = 0;                // cuda_graph_max_bs (0: not stated)
};

// A server setting the replay writes into the base scenario,
// serving.<section>.<key> = value, read at `from` in the file.
struct BenchSetting {
  std::string section, key;
  json value;
  std::string from;
};

// A kernel, compile or host-code choice a server states at `at` (its value as
// JSON writes it): the calibration's factors measure it, so the runs of one
// fit must state one value per server role.
struct HeldSetting {
  std::string role, key, value, at;
};

struct BenchRun {
  std::string format;  // vllm | sglang | guidellm | genai-perf | aiperf | mlperf
  std::string file;    // the name it was read from (for messages and reports)
  std::string where;   // the run inside the file ("" for a one-run file, "/2" for the 3rd line or array item)
  std::string model;   // as the file records it ("" when it does not)
  // The model preset the run is replayed on, when the user says the run was
  // measured with another model on the same cluster ("" = the base scenario's):
  // a small model's steps are mostly host time, which is what pins that factor.
  std::string replay_model;
  // The load as the tool applied it:
  //   "rate"        open loop at rate_qps (arrival poisson, gamma or fixed)
  //   "burst"       every request sent at t = 0 (vLLM/SGLang request_rate inf without a cap)
  //   "closed_loop" `concurrency` clients, each sending its next request when the last completes
  //   "batch"       one closed batch of `requests` (MLPerf Offline)
  std::string load = "rate";
  std::string arrival = "poisson";  // for "rate": poisson | gamma | fixed
  double rate_qps = 0;
  double arrival_cv = 1;
  int64_t concurrency = 0;
  // "rate": the client's cap on requests in flight (vLLM / SGLang
  // --max-concurrency, AIPerf's concurrency in a request_rate phase), replayed
  // as serving.workload.arrival.max_concurrency; 0: none.
  int64_t max_concurrency = 0;
  // The server's max_num_seqs when the file records it (a vLLM sweep's
  // summary), replayed as serving.scheduler.max_num_seqs; 0: the base's.
  int64_t server_max_num_seqs = 0;
  // The servers the file reports (SGLang's server_info; none for other tools),
  // the settings of theirs the replay writes and those a fit holds equal.
  std::vector<BenchServer> servers;
  std::vector<BenchSetting> server_settings;
  std::vector<HeldSetting> held_settings;
  int64_t requests = 0;  // completed requests (in the measured phase)
  // An open-loop run its tool stopped with requests in flight (GuideLLM at
  // max_seconds): the measured window's length (s), the requests sent in it
  // and those still in flight at its end, which no figure covers. The replay
  // sends `sent` at rate_qps and stops at stop_s (0: a run that drained).
  double stop_s = 0;
  int64_t sent = 0, cut = 0;
  std::string stop_source;
  // Requests a fit's replay of the run makes (0: every completed request; the
  // fit sets fewer when its work budget cannot pay for them, fit/calibration_fit_replay).
  int64_t replay_requests = 0;
  // Mean lengths; none when the file does not record them (then the user
  // must state them: `fit --prompt-tokens FILE=N`).
  std::optional<double> prompt_tokens_mean, output_tokens_mean;
  std::string prompt_source, output_source, requests_source, load_source;
  // The lengths' distribution where the file names the generator that drew
  // them and the recorded means agree with it (SGLang's random dataset:
  // uniform integers in [min, max]); none: the replay sends the means.
  struct LengthRange {
    int64_t min = 0, max = 0;
    std::string source;  // the generator's length key (random_input_len or random_output_len)
  };
  std::optional<LengthRange> prompt_range, output_range;
  std::vector<BenchFigure> measured;
  std::vector<std::string> used;   // keys (pointers) the reader took values from
  std::vector<std::string> asks;   // what the file does not say and the user must
  std::vector<std::string> notes;  // how the reader read what it read

  const BenchFigure* figure(const std::string& metric) const;
  json to_json() const;
};

// Reads every run of one file; `name` is used in messages. The format is
// recognized from the structure; `format` ("" = auto) forces one, and a file
// without that format's structure is refused.
std::vector<BenchRun> read_bench_file(const std::string& name, const std::string& text, const std::string& format = "");

const std::vector<std::string>& bench_formats();

// The largest benchmark file read (bytes): a located limit_exceeded beyond it.
inline constexpr std::size_t kMaxBenchFileBytes = 64u << 20;

}  // namespace sightline::fit
