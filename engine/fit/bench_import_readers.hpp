#pragma once
// The per-tool readers behind read_bench_file (fit/bench_import.cpp), which
// recognizes the format and checks the meaning of what they read.
#include <string>
#include <vector>

#include "fit/bench_import.hpp"

namespace sightline::fit::bench {

// One vLLM result object (a whole file, a JSON line or a sweep summary item) at `where`.
BenchRun read_vllm_object(const json& j, const std::string& file, const std::string& where);
// One SGLang bench_serving line at `where`.
BenchRun read_sglang_object(const json& j, const std::string& file, const std::string& where);
// A GuideLLM report: one run per benchmark.
std::vector<BenchRun> read_guidellm_report(const json& root, const std::string& file);
// A genai-perf or AIPerf profile export (`format` says which).
BenchRun read_profile_export(const json& root, const std::string& file, const std::string& format);
// An MLPerf LoadGen mlperf_log_summary.txt.
BenchRun read_mlperf_summary(const std::string& text, const std::string& file);

// The meaning of what a reader read: completed > 0, lengths >= 1 token, a
// TPOT only with >= 2 output tokens, TTFT <= E2E, latencies in the units their
// keys say (a '_ms' figure that is plausibly seconds is refused, not
// guessed), each refusal located at the key in the file.
void check_bench_meaning(BenchRun& r);

}  // namespace sightline::fit::bench
