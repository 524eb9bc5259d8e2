#pragma once
// The deployment an SGLang result file says its server ran (`server_info`,
// written by bench_serving from the server's /get_server_info), read so that a
// fit never replays a run on a deployment the file contradicts. The replay runs
// the base scenario's deployment: where server_info states a figure the base
// scenario also states (parallelism, weight and KV precision), the two must
// agree, or the fit is refused at the file's key with the base's value named;
// the server's batch limit (max_running_requests) is replayed as written.
// The server's other settings (kernels, CUDA graphs, cache policy, ...) are not
// compared, and the run's notes say so.
#include <optional>
#include <string>
#include <vector>

#include "api/bench_import.hpp"

namespace sightline {
struct Scenario;
}

namespace sightline::api::bench {

class Fields;

// Reads the run's server_info (when present) into `run.servers` and its batch
// limit into `run.server_max_num_seqs`; refuses a server that decoded
// speculatively (a step emits several tokens: TPOT is not one decode step's).
void read_sglang_server_info(const Fields& run_fields, BenchRun& run);

// Refuses, located at the file's key, a replay scenario whose deployment
// contradicts what the run's servers report (nothing when they report none).
void check_server_deployment(const Scenario& replay, const BenchRun& run);

}  // namespace sightline::api::bench
