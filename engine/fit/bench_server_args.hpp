#pragma once
// What the replay does with each of SGLang's server arguments (ServerArgs, as
// bench_serving writes them under `server_info`): every argument a known
// SGLang version writes is on the table in bench_server_args.cpp, with what
// the replay does with it; an argument that is not is left unread, so the
// file's key check (fit/bench_import_keys.hpp) refuses it at its place.
// docs/calibrate-from-benchmarks.md ("SGLang's server_info") lists them.
#include <string>

namespace sightline::fit::bench {

enum class ServerArgUse {
  Deployment,  // compared with the base scenario's deployment (parallelism, formats, roles)
  Replayed,    // written into the replay's scenario (the key named in `why`)
  Stack,       // compared with the base scenario's software stack (CUDA graphs, overlap, all-reduce)
  Held,        // a kernel or compile choice the calibration's factors measure: one value per role over a fit's runs
  AtDefault,   // a change the engine cannot express: accepted only at `accepted` (or null), refused otherwise
  Ignored,     // changes no performance figure (the reason in `why`)
  SchedulerCopy,  // internal_states: each key of the scheduler's copy read against the arguments
};

struct ServerArg {
  const char* key;
  ServerArgUse use;
  // AtDefault: the values accepted, each as JSON writes it, separated by '|' ("false", "1", "\"fcfs\"").
  const char* accepted;
  const char* why;
};

// The argument named `key`, or nullptr when the table does not know it.
const ServerArg* server_arg(const std::string& key);

}  // namespace sightline::fit::bench
