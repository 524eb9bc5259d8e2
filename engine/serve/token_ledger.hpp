#pragma once
// What a request's tokens change as they are computed and come out: the
// recorder's count of private KV tokens in the running set, the request's
// token times and gaps, and the inter-token gap statistics. The Simulation
// owns it (SchedulerHost::tokens); the batch scheduler applies it per token,
// inline: through a virtual call per token these hooks were 7% of a 1M run's
// samples, and the call kept the scheduler's loop from holding its pointers.
#include <cstdint>

#include "serve/metrics_recorder.hpp"
#include "serve/sim_state.hpp"
#include "serve/step_stats.hpp"

namespace sightline::serve {

class TokenLedger {
 public:
  // `now`: the simulator's clock, read when a token comes out.
  TokenLedger(MetricsRecorder& rec, StepStats& stats, const TimeNs& now, int64_t block_size)
      : rec_(rec), stats_(stats), now_(now), block_size_(block_size) {}

  // The KV tokens the request holds in its own blocks (not the shared prefix's).
  int64_t private_kv_tokens(const SimRequest& q) const { return q.computed - q.kv.prefix_tokens(block_size_); }
  // Its KV tokens changed.
  void computed(SimRequest& q) {
    const int64_t now = private_kv_tokens(q);
    rec_.computes(now - q.kv_counted);
    q.kv_counted = static_cast<ReqTokens>(now);  // at most its context (ReqTokens)
  }
  // `n` output tokens came out now.
  void emit_tokens(SimRequest& q, int64_t n) {
    if (q.generated != 0) return later_tokens(q, n);
    q.first_token = q.last_token = now_;
    q.generated += n;
  }
  // A decode's (or verify's) `n` tokens, into the cache and out: computed()
  // and emit_tokens() as they would answer (forced inline: the compiler's own
  // choice left it a call per token). While a request runs its shared prefix
  // changes only where a prompt's chunk publishes, and computed() follows
  // (admission, swap-in and a landed transfer set kv_counted in
  // join_running), so its private count grows by exactly n: the prefix is
  // not read per token. A decode follows a token already out (its prompt's):
  // no first token here.
  __attribute__((always_inline)) void decoded(SimRequest& q, int64_t n) {
    rec_.computes(n);
    q.kv_counted += static_cast<ReqTokens>(n);  // at most its context (ReqTokens)
    later_tokens(q, n);
  }

 private:
  // `n` tokens out after the request's earlier ones: a gap since the last.
  __attribute__((always_inline)) void later_tokens(SimRequest& q, int64_t n) {
    ++q.gaps;
    if (stats_.on_token_gap(now_ - q.last_token)) ++q.gaps_over_itl;
    q.last_token = now_;
    q.generated += n;
  }

  MetricsRecorder& rec_;
  StepStats& stats_;
  const TimeNs& now_;
  int64_t block_size_;
};

}  // namespace sightline::serve
