#pragma once
// Request generation: arrivals and lengths drawn from named seeded streams
// ("arrivals", "prompt_tokens", "output_tokens", "prefix", "lora",
// "model_mix"), so changing one aspect leaves the others' draws unchanged.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "serve/event_queue.hpp"
#include "serve/rng.hpp"
#include "scenario/simulation_spec.hpp"

namespace sightline::serve {

// A request's token counts, and the counts the simulator keeps per request
// (serve/sim_state.hpp), are 32 bits: every one is bounded by max_model_len,
// which the readers hold at or under the model's max_context, itself at most
// kMaxModelContext (16M tokens); sums of a few of them (prompt + output +
// speculative tokens) stay far below the type's limit. A million requests
// in a large run: 4 bytes a count, not 8.
using ReqTokens = int32_t;
static_assert(kMaxModelContext <= std::numeric_limits<ReqTokens>::max() / 64,
              "a request's token counts must fit ReqTokens with room for sums");
// A count from the generator, in ReqTokens: one past the type's range is a
// bug upstream of the readers' bounds, refused here, never wrapped.
inline ReqTokens req_tokens(int64_t n) {
  if (n < std::numeric_limits<ReqTokens>::min() || n > std::numeric_limits<ReqTokens>::max())
    fail(error_code::kInternal, "/serving/workload", "a request's token count " + std::to_string(n) + " is out of range");
  return static_cast<ReqTokens>(n);
}

// Fields ordered widest first so that padding costs nothing (one per request
// of a run, a million in a large one: 56 bytes).
struct RequestSpec {
  TimeNs arrival = 0;
  // Sessions (serving.workload.sessions): the think/tool time before this
  // turn (after the previous turn's last token; a later turn's arrival is set
  // when that happens).
  TimeNs think = 0;
  ReqTokens prompt = 0;
  ReqTokens output = 0;
  ReqTokens prefix_tokens = 0;
  // Sessions: the system prompt every session shares (the first tokens of its prefix).
  ReqTokens system_tokens = 0;
  int32_t prefix_group = -1;
  int32_t adapter = -1;
  int32_t session = -1;  // the session and turn (-1: a single request)
  int32_t turn = 0;
  int8_t model = 0;                 // 0: the scenario's model, 1: the co-located model
  bool think_from_arrival = false;  // a replayed trace: `think` counts from the previous turn's arrival
  // Tokens whose full KV blocks the prefix cache keeps for reuse: the shared
  // prefix; for a session turn its whole context (prompt and output), the
  // next turn's prefix.
  int64_t cacheable_tokens() const { return session >= 0 ? prompt + output : prefix_tokens; }
};

struct GeneratedWorkload {
  std::vector<RequestSpec> requests;  // a session's turns are consecutive, sessions in arrival order
  int64_t sessions = 0;               // sessions generated (0 without sessions)
  int64_t sessions_cut = 0;           // sessions ended early: the next turn's context would pass max_model_len
  int64_t truncated_outputs = 0;  // outputs shortened to fit max_model_len
  bool capped = false;            // duration-driven generation hit limits.max_requests
};

struct WorkloadOverride {
  std::optional<double> rate_qps;        // replaces the rate (a trace is time-scaled to it)
  std::optional<int64_t> num_requests;   // replaces the count (duration-driven workloads too)
  std::optional<uint64_t> seed;          // replaces the scenario's seed: an independent replication
  bool tokenize = true;  // false: prompts reach the scheduler at arrival (the capacity search's service-rate probe)
};

// Draws token counts from a length distribution with its own stream.
class LengthSampler {
 public:
  LengthSampler(const LengthSpec& l, Rng rng);
  int64_t draw();

 private:
  LengthSpec l_;
  Rng rng_;
  ZipfTable zipf_;
  double mu_ = 0, sigma_ = 0;
};

// The arrival time (s) of the i-th arrival after one at `t` (rate-based
// processes and all_at_once; a trace gives its own times; a closed loop's
// requests are generated at 0 and the simulator sets each one's arrival when
// a client is free).
double next_arrival_s(const ArrivalSpec& a, double rate, int64_t i, double t, Rng& rng);

// The sessions workload (sessions_workload.cpp): sessions arrive by the
// workload's arrival process; turns are generated up front, a later turn's
// arrival left at its session's start until the simulator sets it.
GeneratedWorkload generate_sessions(const SimulationSpec& spec, uint64_t seed, const WorkloadOverride& o);

// The turns (requests) and sessions a sessions workload makes: generate_sessions'
// own draws, counted without holding the requests (the work estimate's count).
struct SessionCount {
  int64_t turns = 0, sessions = 0;
  int64_t prompt_tokens = 0;  // summed over the turns (a turn's prompt is its session's context so far)
};
SessionCount count_sessions(const SimulationSpec& spec, uint64_t seed, const WorkloadOverride& o = {});

GeneratedWorkload generate_workload(const SimulationSpec& spec, uint64_t seed, const WorkloadOverride& o = {});

// When the n-th request arrives (seconds) in a Poisson or gamma workload: the
// draws generate_workload makes (its arrivals stream), without the requests,
// so that a probe of a run's first requests can read the run's average rate
// (jobs/run_estimate). 0 for any other arrival process and for sessions.
double nth_arrival_s(const SimulationSpec& spec, uint64_t seed, int64_t n);

// Where generate_workload_into puts the requests, one at a time in order;
// reserve(n) first when their count is known before the first is made.
class RequestSink {
 public:
  virtual ~RequestSink() = default;
  virtual void reserve(size_t n) = 0;
  virtual void add(const RequestSpec& r) = 0;
};
// generate_workload's requests handed to `sink` (`out` gets the rest and no
// requests): a simulator keeps them in its own records, and a list of them
// beside those records was 72 of the 312 bytes per request its setup held.
void generate_workload_into(const SimulationSpec& spec, uint64_t seed, const WorkloadOverride& o,
                            GeneratedWorkload& out, RequestSink& sink);

// The order `n` requests arrive in (arrival_of(i): the i-th one's time), ties
// by index: empty when that is their order already (every generator's), else
// the permutation. The simulator feeds arrivals to its event queue one at a
// time in this order.
template <class ArrivalOf>
std::vector<int32_t> arrival_order_of(size_t n, ArrivalOf arrival_of) {
  std::vector<int32_t> order;
  bool sorted = true;
  for (size_t i = 1; i < n && sorted; ++i) sorted = arrival_of(i - 1) <= arrival_of(i);
  if (sorted) return order;
  order.resize(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<int32_t>(i);
  std::sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
    const TimeNs ax = arrival_of(static_cast<size_t>(x)), ay = arrival_of(static_cast<size_t>(y));
    return ax != ay ? ax < ay : x < y;
  });
  return order;
}
std::vector<int32_t> arrival_order(const std::vector<RequestSpec>& requests);

// The workload's natural arrival rate (requests per second); 0 for all_at_once and a closed loop.
double natural_rate_qps(const SimulationSpec& spec);

}  // namespace sightline::serve
