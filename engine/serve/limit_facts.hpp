#pragma once
// What a serving run's two capacity limits decided: the batch limit
// (max_num_seqs) and the KV block pool. A search tries the same deployment at
// several max_num_seqs, and max_num_seqs also sets the KV blocks (the memory
// plan reserves the sampler's activations for max_num_seqs rows). Every other
// input of the run is the same, so a sibling run differs from this one only
// where one of these limits answers a check differently. The run records, for
// each kind of check, the values it compared, and runs_alike() says whether
// every check would have answered the same under the sibling's limits: then
// the sibling's run, step by step, is this one (search/candidate_reuse.hpp).
//
// What the facts rest on: (1) the scheduler's waiting list for a step is the
// queue's first (seats + 1) prompts, which is output-neutral for any limit
// (batch_scheduler.cpp: without LoRA the queue is in arrival order, and a walk
// that reaches the list's last prompt has reached the limit, a comparison
// recorded here), so the limit acts only through its comparisons;
// (2) the KV pool acts on the run only through its checks (recorded), its
// evictions (none allowed) and the least_kv_load router's capacity read
// (recorded). Features these facts do not cover mark the run `opaque`.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline::serve {

// The max_num_seqs comparisons "running >= limit": the largest running count
// that was below the limit and the smallest that was at or above it. Another
// limit in (below, at_or_above] answers every one of them the same.
struct SeqLimitChecks {
  int64_t below = -1;
  int64_t at_or_above = std::numeric_limits<int64_t>::max();
  // The check itself: true when `running` has reached `limit`.
  bool reached(int64_t running, int64_t limit) {
    if (running >= limit) {
      at_or_above = std::min(at_or_above, running);
      return true;
    }
    below = std::max(below, running);
    return false;
  }
  void merge(const SeqLimitChecks& o) {
    below = std::max(below, o.below);
    at_or_above = std::min(at_or_above, o.at_or_above);
  }
};

// The KV pool's checks. A check asks whether `demand` blocks fit in the pool
// (blocks held, less the evictable cached ones, plus those asked for), keeping
// the watermark free or not; a take asks for blocks without evicting a cached
// one when used + asked fits.
struct KvChecks {
  int64_t demand = 0;            // the largest demand of a check without headroom, or used + asked of a take
  int64_t watermarked = 0;       // the largest demand of a check that keeps the watermark free
  bool refused = false;          // a check said no, a take failed, or the prefix cache evicted
  void need(int64_t blocks, bool keeps_watermark, bool ok) {
    int64_t& m = keeps_watermark ? watermarked : demand;
    m = std::max(m, blocks);
    refused = refused || !ok;
  }
  void merge(const KvChecks& o) {
    demand = std::max(demand, o.demand);
    watermarked = std::max(watermarked, o.watermarked);
    refused = refused || o.refused;
  }
};

// One run's (or a steady-state job's runs') facts.
struct LimitFacts {
  SeqLimitChecks seqs;
  KvChecks kv;
  bool capacity_read = false;  // the least_kv_load router read the pools' size
  bool opaque = false;         // LoRA, static batching, offload tiers, compare or max-QPS runs: not covered
  void merge(const LimitFacts& o) {
    seqs.merge(o.seqs);
    kv.merge(o.kv);
    capacity_read = capacity_read || o.capacity_read;
    opaque = opaque || o.opaque;
  }
};

// The facts as JSON and back, for a caller whose runs happen elsewhere (the
// page's workers run the candidates, api::search_reuse decides): "seqs"
// {"below", "at_or_above": null while no count reached the limit}, "kv"
// {"demand", "watermarked", "refused"}, "capacity_read", "opaque". A run that
// failed is {"opaque": true} alone: it proves nothing.
json limit_facts_to_json(const LimitFacts& f);
LimitFacts read_limit_facts(const json& value, const std::string& path);

// The blocks a pool of `blocks` keeps free for running sequences to grow into.
inline int64_t kv_watermark_blocks(double watermark, int64_t blocks) {
  return static_cast<int64_t>(std::floor(watermark * static_cast<double>(blocks)));
}

// The limits a run is given: max_num_seqs and every engine's KV blocks (pool
// by pool, model by model, from the memory plan) with the watermark share.
struct RunLimits {
  int64_t max_num_seqs = 0;
  std::vector<int64_t> kv_blocks;
  double watermark = 0;
};

// True when a run with limits `other` answers every check `f` recorded (under
// `ran`) the same, so it is the same run: the batch limit within the checks'
// interval, and the KV pools the same or never short (no refusal, no
// eviction, every demand within each of the other's pools with its own
// watermark kept free, and nothing read their size).
bool runs_alike(const LimitFacts& f, const RunLimits& ran, const RunLimits& other);

}  // namespace sightline::serve
