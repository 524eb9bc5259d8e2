#pragma once
// The serving simulator's occupancy counters and their time integrals, fed by
// hooks: a request joins or leaves a queue (waiting, swapped, incoming) or the
// running set, a running request computes (its KV tokens change), and the
// block pools report every block they hand out or take back (BlockUsage).
// A clock advance integrates the present counts over the elapsed time, so its
// cost is the same for one replica and for a thousand.
#include <algorithm>
#include <cstdint>

#include "serve/event_queue.hpp"
#include "serve/kv_manager.hpp"

namespace sightline::serve {

// Token and preemption counts the scheduler and the simulator add to as steps
// are formed and completed.
struct TokenCounts {
  int64_t processed = 0;        // tokens put into KV caches
  int64_t cached = 0;           // prefix-cache hits at admission
  int64_t discarded = 0;        // KV tokens thrown away by recompute preemptions
  int64_t padding = 0;          // static batching: padded positions
  int64_t spec_rejected = 0;    // speculative tokens verified and rejected
  int64_t verify_items = 0, verify_committed = 0;
  int64_t preemptions = 0, swaps_out = 0, recomputes = 0;
};

class MetricsRecorder {
 public:
  explicit MetricsRecorder(int64_t block_size = 16) : block_size_(block_size) {}

  // The pools report here (BlockPool::report_to).
  BlockUsage* block_usage() { return &blocks_; }

  // Hooks.
  void queued(int64_t n = 1) { waiting_ += n; }            // joins a waiting, swapped or incoming queue
  void dequeued(int64_t n = 1) { waiting_ -= n; }          // leaves one
  void joins_running(int64_t kv_tokens) {                  // private KV tokens it holds now
    ++running_;
    running_kv_tokens_ += kv_tokens;
  }
  void leaves_running(int64_t kv_tokens) {                 // the tokens counted for it so far
    --running_;
    running_kv_tokens_ -= kv_tokens;
  }
  void computes(int64_t kv_token_delta) { running_kv_tokens_ += kv_token_delta; }

  // Integrates the present counts from the last advance to `t`; earlier or
  // equal times integrate nothing.
  void advance(TimeNs t) {
    if (t <= last_) return;
    max_running_ = std::max(max_running_, running_);
    max_waiting_ = std::max(max_waiting_, waiting_);
    const double dt = static_cast<double>(t - last_);
    int_running_ += static_cast<double>(running_) * dt;
    int_waiting_ += static_cast<double>(waiting_) * dt;
    int_kv_used_ += static_cast<double>(blocks_.used_blocks) * dt;
    int_kv_tokens_ += static_cast<double>(kv_tokens()) * dt;
    int_kv_alloc_tokens_ += static_cast<double>(blocks_.used_blocks * block_size_) * dt;
    last_ = t;
  }
  void start(TimeNs t) { last_ = t; }
  // A sample taken outside advance (the time series) also raises the maxima.
  void note_sample() {
    max_running_ = std::max(max_running_, running_);
    max_waiting_ = std::max(max_waiting_, waiting_);
  }

  // Present counts.
  int64_t running() const { return running_; }
  int64_t waiting() const { return waiting_; }
  int64_t kv_blocks_used() const { return blocks_.used_blocks; }
  // Tokens held in allocated blocks; a shared prefix block counts once.
  int64_t kv_tokens() const { return blocks_.cached_blocks * block_size_ + running_kv_tokens_; }

  TokenCounts& counts() { return counts_; }
  const TokenCounts& counts() const { return counts_; }

  // Integrals (count x ns) and maxima.
  double running_integral() const { return int_running_; }
  double waiting_integral() const { return int_waiting_; }
  double kv_used_integral() const { return int_kv_used_; }
  double kv_tokens_integral() const { return int_kv_tokens_; }
  double kv_allocated_tokens_integral() const { return int_kv_alloc_tokens_; }
  int64_t max_running() const { return max_running_; }
  int64_t max_waiting() const { return max_waiting_; }

 private:
  int64_t block_size_;
  BlockUsage blocks_;
  int64_t running_ = 0, waiting_ = 0, running_kv_tokens_ = 0;
  TimeNs last_ = 0;
  double int_running_ = 0, int_waiting_ = 0, int_kv_used_ = 0, int_kv_tokens_ = 0, int_kv_alloc_tokens_ = 0;
  int64_t max_running_ = 0, max_waiting_ = 0;
  TokenCounts counts_;
};

}  // namespace sightline::serve
