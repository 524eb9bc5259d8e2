#pragma once
// Readers for the benchmark result files users already have, each to the
// schema its tool writes (field names as written; tests/data/bench/SOURCES.md):
//   vllm        `vllm bench serve --save-result` / benchmarks/benchmark_serving.py JSON
//   sglang      `python -m sglang.bench_serving` JSONL (one run per line)
//   guidellm    GuideLLM report JSON ({"benchmarks": [...]})
//   genai-perf  NVIDIA genai-perf / AIPerf profile_export_*.json
//   mlperf      MLPerf LoadGen mlperf_log_summary.txt
// Each run becomes a BenchRun: the workload as run plus the measured metrics.
// A malformed or partial file fails with a located error (code, path inside
// the file, message naming the file).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline::api {

struct BenchRun {
  std::string format;  // vllm | sglang | guidellm | genai-perf | mlperf
  std::string file;    // the name it was read from (for messages and reports)
  std::string where;   // the run inside the file ("" for a one-run file, "/2" for the 3rd line or benchmark)
  std::string model;   // as the file records it ("" when it does not)
  // The model preset the run is replayed on, when the user says the run was
  // measured with another model on the same cluster ("" = the base scenario's):
  // a small model's steps are mostly host time, which is what pins that factor.
  std::string replay_model;
  // Workload as run. Arrival rate in requests/s (0: not recorded, e.g. a
  // concurrency sweep); concurrency 0 when unbounded / not recorded.
  double rate_qps = 0;
  // How the requests arrived: "poisson" (vllm burstiness 1, SGLang, MLPerf
  // Server, GuideLLM poisson), "fixed" (GuideLLM constant; synchronous, one
  // request after another, replayed as evenly spaced) or "gamma" (vllm
  // burstiness b ≠ 1: shape b, coefficient of variation 1/√b).
  std::string arrival = "poisson";
  double arrival_cv = 1;
  int64_t concurrency = 0;
  int64_t requests = 0;            // completed requests
  double prompt_tokens_mean = 0;   // 0: not recorded (MLPerf): taken from the base scenario
  double output_tokens_mean = 0;
  // Measured (0: not recorded).
  double ttft_mean_ms = 0;
  double tpot_mean_ms = 0;
  double itl_mean_ms = 0;
  double e2e_mean_ms = 0;
  double requests_per_s = 0;
  double output_tokens_per_s = 0;
  std::vector<std::string> notes;  // approximations the reader made
  json to_json() const;
};

// Reads every run of one file; `name` is used in messages. The format is
// recognized from the content; `format` ("" = auto) forces one.
std::vector<BenchRun> read_bench_file(const std::string& name, const std::string& text, const std::string& format = "");

const std::vector<std::string>& bench_formats();

}  // namespace sightline::api
