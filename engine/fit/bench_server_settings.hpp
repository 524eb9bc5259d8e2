#pragma once
// What an SGLang result file says its server ran (`server_info`, written by
// bench_serving from the server's /get_server_info), read so that a fit never
// replays a run on another server than the one measured. Every argument is on
// the table of fit/bench_server_args.hpp: the deployment (parallelism, weight,
// KV and compute formats, roles, DP routing) and the host side (CUDA graphs,
// overlap scheduler, custom all-reduce) must agree with the base scenario's,
// or the fit is refused at the file's key with the base's value named; the
// scheduler and KV settings the engine has (batch limit, prefill token budget,
// mixed chunks, radix cache, page size, context length, memory fraction) are
// replayed as written; kernel and compile choices are held equal over a fit's
// runs; changes the engine cannot express are refused; the rest change no
// figure, each with its reason.
#include <optional>
#include <string>
#include <vector>

#include "fit/bench_import.hpp"

namespace sightline {
struct Scenario;
}

namespace sightline::fit::bench {

class Fields;

// Reads the run's server_info (when present) into `run.servers` and its batch
// limit into `run.server_max_num_seqs`; refuses a server that decoded
// speculatively (a step emits several tokens: TPOT is not one decode step's).
void read_sglang_server_info(const Fields& run_fields, BenchRun& run);

// Refuses, located at the file's key, a replay scenario whose deployment
// contradicts what the run's servers report (nothing when they report none).
void check_server_deployment(const Scenario& replay, const BenchRun& run);

// Refuses, at the second run's key, two runs whose servers of one role state
// different kernel or compile choices (BenchRun::held_settings): one set of
// calibrated factors cannot measure both.
void check_held_settings(const std::vector<BenchRun>& runs);

}  // namespace sightline::fit::bench
