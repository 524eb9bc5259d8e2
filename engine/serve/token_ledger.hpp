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
    if (q.generated == 0) q.first_token = now_;
    else {
      ++q.gaps;
      if (stats_.on_token_gap(now_ - q.last_token)) ++q.gaps_over_itl;
    }
    q.last_token = now_;
    q.generated += n;
  }
  // A decode's (or verify's) two hooks, computed then emit_tokens (forced
  // inline: the compiler's own choice left it a call per token).
  __attribute__((always_inline)) void decoded(SimRequest& q, int64_t n) {
    computed(q);
    emit_tokens(q, n);
  }

 private:
  MetricsRecorder& rec_;
  StepStats& stats_;
  const TimeNs& now_;
  int64_t block_size_;
};

}  // namespace sightline::serve
