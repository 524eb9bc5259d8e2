#pragma once
// KV-cache management of the serving simulator.
// BlockPool: the paged KV block pool of one model on one replica, with a
// prefix cache: full blocks of a shared prompt prefix are published under an
// exact key, reference-counted by the requests that use them, and kept after
// their last user finishes until an allocation needs the room (least recently
// released first). Over-allocation is impossible by construction and also
// checked.
// KvManager: the KV policy over those pools (paged or contiguous allocation,
// watermark, prefix caching, swapping): admission of a prompt, growth of a
// running sequence, release, publication of prefix blocks, swap out and in.
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "serve/kv_tiers.hpp"
#include "serve/limit_facts.hpp"

#include "scenario/memory_plan.hpp"
#include "scenario/simulation_spec.hpp"
#include "serve/workload.hpp"

namespace sightline::serve {

// Blocks in use and cached prefix blocks summed over every pool that reports
// here: the simulator's occupancy counters read these instead of walking the
// replicas on each clock advance.
struct BlockUsage {
  int64_t used_blocks = 0;
  int64_t cached_blocks = 0;
};

class BlockPool {
 public:
  BlockPool() = default;
  explicit BlockPool(int64_t total_blocks);

  int64_t total() const { return total_; }
  int64_t used() const { return private_used_ + live_entries_; }  // cached blocks count as used
  int64_t free() const { return total_ - used(); }
  int64_t evictable() const { return evictable_; }
  int64_t allocatable() const { return free() + evictable_; }
  int64_t peak_used() const { return peak_used_; }
  int64_t evictions() const { return evictions_; }
  int64_t cached_blocks() const { return live_entries_; }

  // Every later change of used() and cached_blocks() is also added to `usage`
  // (which must outlive the pool); the pool's present counts are added now.
  void report_to(BlockUsage* usage);
  // Blocks this pool evicts from its prefix cache go down `chain` (offload tiers).
  void spill_to(KvTierChain* chain) { spill_ = chain; }

  // Private blocks: false (and nothing taken) when fewer than n can be made free.
  bool take(int64_t n);
  // Whether `n` more blocks can be made free with `headroom` left over (the
  // watermark when `keeps_watermark`); recorded in checks().
  bool fits(int64_t n, int64_t headroom, bool keeps_watermark);
  // Whether a sequence of `n` blocks could ever fit the empty pool with
  // `headroom` left over; recorded in checks() (a record, hence const).
  bool could_fit(int64_t n, int64_t headroom, bool keeps_watermark) const;
  // Every capacity check and take so far, and whether an eviction happened
  // (serve/limit_facts.hpp: what a run with another pool size would answer).
  KvChecks checks() const;
  void give(int64_t n);

  // Prefix cache.
  int32_t lookup(uint64_t key) const;      // entry id or -1
  bool is_unreferenced(int32_t entry) const;
  void acquire(int32_t entry);             // a request starts using a cached block
  void release(int32_t entry);             // ... stops; at zero users it becomes evictable
  int32_t publish(uint64_t key);           // one private block becomes a cached entry used once; -1 if the key exists

 private:
  struct Entry {
    uint64_t key = 0;
    int32_t refs = 0;
    int32_t prev = -1, next = -1;  // LRU list of unreferenced entries
    bool live = false;
  };
  void lru_push_back(int32_t id);
  void lru_remove(int32_t id);
  void evict_one();
  void note_peak();
  void count(int64_t private_delta, int64_t entry_delta);

  int64_t total_ = 0;
  int64_t private_used_ = 0;
  int64_t live_entries_ = 0;
  int64_t evictable_ = 0;
  int64_t peak_used_ = 0;
  int64_t evictions_ = 0;
  mutable KvChecks checks_;
  std::vector<Entry> entries_;
  std::vector<int32_t> free_ids_;
  std::unordered_map<uint64_t, int32_t> index_;  // lookups only; never iterated
  int32_t lru_head_ = -1, lru_tail_ = -1;
  BlockUsage* usage_ = nullptr;
  KvTierChain* spill_ = nullptr;
};

// One model's KV space on one replica: its block pool, the blocks kept free
// for running sequences to grow into, and the host swap space.
struct KvSpace {
  BlockPool pool;
  int64_t watermark_blocks = 0;
  double kv_bytes_per_token = 0;  // per GPU, full-attention layers (a block holds block_size tokens of them)
  int64_t host_blocks_free = 0;   // swap space
  std::vector<WindowedKv> windowed;
  int64_t reserve_blocks = 0;     // contiguous allocation: blocks reserved per request
  std::unique_ptr<KvTierChain> tiers;  // offload tiers below HBM (none without serving.kv_cache.offload)
};

// Where a prompt's prefix blocks would be found in one KvSpace, without
// touching any LRU (the routers' probe).
struct PrefixProbe {
  int64_t hbm_blocks = 0;
  std::vector<int64_t> tier_blocks;  // per tier
  double reload_s = 0;               // the tier blocks' reload time (per GPU links, unoverlapped)
  int64_t blocks() const {
    int64_t n = hbm_blocks;
    for (int64_t b : tier_blocks) n += b;
    return n;
  }
};

// The blocks one request holds in a KvSpace.
struct KvHold {
  int64_t private_blocks = 0;
  std::vector<int32_t> prefix_entries;  // shared prefix blocks, in prompt order
  int64_t blocks() const { return static_cast<int64_t>(prefix_entries.size()) + private_blocks; }
  int64_t prefix_tokens(int64_t block_size) const { return static_cast<int64_t>(prefix_entries.size()) * block_size; }
};

class KvManager {
 public:
  KvManager() = default;
  // `speculative_k` tokens beyond max_model_len are reserved by contiguous allocation.
  KvManager(const KvCacheSpec& kv, int speculative_k);

  int64_t block_size() const { return block_size_; }
  // Blocks a sequence of `tokens` tokens holds in `s`: its full-attention
  // blocks plus its windowed layers' pages (never more than their cap).
  int64_t blocks_for(const KvSpace& s, int64_t tokens) const {
    // Without windowed layers, kv_blocks_for's full blocks, here where the
    // scheduler calls it for every sequence of every step (inlined).
    if (s.windowed.empty()) return (tokens + block_size_ - 1) / block_size_;
    return kv_blocks_for(s.windowed, block_size_, tokens);
  }
  bool contiguous() const { return contiguous_; }
  // The blocks a request is given on admission while it holds `tokens_now`
  // tokens: max_model_len's (contiguous), its whole prompt and output's (to
  // completion), else its present tokens'.
  int64_t admission_blocks(const KvSpace& s, const RequestSpec& r, int64_t tokens_now) const;
  // The free blocks an admission must leave: the watermark that running
  // sequences grow into, unless they never grow (contiguous, to completion).
  int64_t admission_headroom(const KvSpace& s) const { return keeps_watermark() ? s.watermark_blocks : 0; }
  bool keeps_watermark() const { return !contiguous_ && !to_completion_; }

  // A KvSpace of `blocks` blocks whose pool reports to `usage`; `windowed`
  // gives the windowed layers' KV bytes per token by cap. With offload
  // tiers, `model` and `gpus` (the replica's GPUs) size the shared tiers, one
  // store per model for every replica.
  KvSpace make_space(int64_t blocks, double kv_bytes_per_token, const std::vector<CappedKv>& windowed,
                     BlockUsage* usage, int model = 0, int gpus = 1);

  // Admits a prompt that wants `target` tokens in its cache: looks up its
  // prefix blocks, sizes the first chunk (all remaining tokens, or at most
  // `budget` when `chunked`), and reserves blocks unless that would eat into
  // the watermark. On success `h` holds the blocks, `chunk` is the chunk and
  // `hit_tokens` the tokens found in the prefix cache.
  // With offload tiers, prefix blocks found in a tier are reloaded into HBM
  // (published there again) and `reload_s` gains their reload time.
  bool admit(KvSpace& s, KvHold& h, const RequestSpec& r, int64_t target, int64_t budget, bool chunked, int64_t& chunk,
             int64_t& hit_tokens, double* reload_s = nullptr);
  PrefixProbe probe(const KvSpace& s, const RequestSpec& r, int64_t target) const;
  bool has_tiers() const { return !tiers_.empty(); }
  const std::vector<KvTierSpec>& tier_specs() const { return tiers_; }
  const std::vector<TierCounters>& tier_counters() const { return tier_counters_; }
  int64_t tiered_hbm_hit_blocks() const { return hbm_hit_blocks_; }
  // Reserves the blocks for a KV cache of `tokens` tokens of request `r`
  // arriving by transfer (disaggregation; admission_blocks'); false when that
  // would eat into the watermark.
  bool reserve_for_transfer(KvSpace& s, KvHold& h, const RequestSpec& r, int64_t tokens);
  // Grows a running sequence's blocks to hold `tokens_after` tokens; false when the pool cannot.
  // Inline for its usual answer (the blocks held already cover the tokens:
  // most decode steps), which the scheduler asks for every sequence of every step.
  bool grow(KvSpace& s, KvHold& h, int64_t tokens_after) {
    if (grow_check(s).covered(h, tokens_after)) return true;
    return grow_blocks(s, h, tokens_after);
  }
  // grow()'s answer without taking blocks, for one space: read once by a
  // walk over a step's sequences, which otherwise reloads these per sequence
  // (its stores into the records could alias them).
  struct GrowCheck {
    bool always = false;     // contiguous allocation: reserved on admission
    bool by_blocks = false;  // no windowed layers: the blocks held answer
    int64_t block_size = 0;
    // True when the blocks `h` holds already cover `tokens_after` tokens
    // (blocks_for's answer, without its division).
    bool covered(const KvHold& h, int64_t tokens_after) const {
      return always || (by_blocks && tokens_after <= h.blocks() * block_size);
    }
  };
  GrowCheck grow_check(const KvSpace& s) const { return GrowCheck{contiguous_, s.windowed.empty(), block_size_}; }
  void release(KvSpace& s, KvHold& h);
  // Turns the sequence's full private blocks of its shared prefix into cached
  // entries, up to the `computed` tokens.
  void publish_prefix(KvSpace& s, KvHold& h, const RequestSpec& r, int64_t computed);

  // Swap out: when the host space has room, releases the blocks and returns
  // true with the number of blocks and the bytes moved (per GPU).
  bool swap_out(KvSpace& s, KvHold& h, ReqTokens& swapped_blocks, double& bytes);
  // Swap in: when the pool has room above the watermark, takes the blocks back.
  bool swap_in(KvSpace& s, KvHold& h, ReqTokens& swapped_blocks, double& bytes);

  int64_t admissions() const { return admissions_; }
  int64_t admissions_with_hits() const { return admissions_with_hits_; }

 private:
  bool grow_blocks(KvSpace& s, KvHold& h, int64_t tokens_after);  // grow()'s taking of new blocks
  uint64_t prefix_key(const RequestSpec& r, int64_t block) const;
  // The first chunk of a prompt with `remaining` tokens to compute: all of
  // them within `budget`, or (chunked) at most `budget`; false when none fits.
  static bool first_chunk(int64_t remaining, int64_t budget, bool chunked, int64_t& chunk);
  bool admit_tiered(KvSpace& s, KvHold& h, const RequestSpec& r, int64_t target, int64_t budget, bool chunked,
                    int64_t& chunk, int64_t& hit_tokens, double* reload_s);
  void add_tiers(KvSpace& s, int model, int gpus);

  int64_t block_size_ = 16;
  bool contiguous_ = false;
  bool to_completion_ = false;  // paged blocks reserved to completion on admission (KvAdmission::ToCompletion)
  bool prefix_caching_ = false;
  double watermark_ = 0;
  double swap_space_GiB_ = 0;
  int64_t reserve_tokens_ = 0;  // contiguous allocation reserves max_model_len (+ speculative k) per request
  int64_t speculative_k_ = 0;   // drafted tokens a verify step holds beyond the output
  int64_t admissions_ = 0, admissions_with_hits_ = 0;
  // Offload tiers: their specs, one set of counters per tier for every
  // engine, and the shared tiers' stores by (model, tier).
  std::vector<KvTierSpec> tiers_;
  std::vector<TierCounters> tier_counters_;
  std::map<std::pair<int, size_t>, std::unique_ptr<KeyLru>> shared_;
  int64_t hbm_hit_blocks_ = 0;
};

}  // namespace sightline::serve
