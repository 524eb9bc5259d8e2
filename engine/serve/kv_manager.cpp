#include "serve/kv_manager.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "mem/inference_memory.hpp"

namespace sightline::serve {

namespace {
[[noreturn]] void invariant(const char* what) {
  fail(error_code::kInternal, "", std::string("KV block manager invariant violated: ") + what);
}
}  // namespace

BlockPool::BlockPool(int64_t total_blocks) : total_(total_blocks) {}

void BlockPool::report_to(BlockUsage* usage) {
  usage_ = usage;
  if (usage_) {
    usage_->used_blocks += used();
    usage_->cached_blocks += live_entries_;
  }
}

void BlockPool::count(int64_t private_delta, int64_t entry_delta) {
  private_used_ += private_delta;
  live_entries_ += entry_delta;
  if (usage_) {
    usage_->used_blocks += private_delta + entry_delta;
    usage_->cached_blocks += entry_delta;
  }
}

void BlockPool::note_peak() {
  const int64_t u = used();
  if (u > total_) invariant("more blocks in use than exist");
  if (u > peak_used_) peak_used_ = u;
}

bool BlockPool::take(int64_t n) {
  if (n <= 0) return true;
  // A pool of used() + n blocks would take them without evicting.
  checks_.need(used() + n, false, allocatable() >= n);
  if (allocatable() < n) return false;
  while (free() < n) evict_one();
  count(n, 0);
  note_peak();
  return true;
}

bool BlockPool::fits(int64_t n, int64_t headroom, bool keeps_watermark) {
  const bool ok = allocatable() - n >= headroom;
  checks_.need(used() - evictable_ + n, keeps_watermark, ok);
  return ok;
}

bool BlockPool::could_fit(int64_t n, int64_t headroom, bool keeps_watermark) const {
  const bool ok = n + headroom <= total_;
  checks_.need(n, keeps_watermark, ok);
  return ok;
}

KvChecks BlockPool::checks() const {
  KvChecks c = checks_;
  c.refused = c.refused || evictions_ > 0;
  return c;
}

void BlockPool::give(int64_t n) {
  if (n < 0 || n > private_used_) invariant("releasing blocks that were not allocated");
  count(-n, 0);
}

int32_t BlockPool::lookup(uint64_t key) const {
  auto it = index_.find(key);
  return it == index_.end() ? -1 : it->second;
}

bool BlockPool::is_unreferenced(int32_t entry) const { return entries_[static_cast<size_t>(entry)].refs == 0; }

void BlockPool::acquire(int32_t id) {
  Entry& e = entries_[static_cast<size_t>(id)];
  if (!e.live) invariant("acquiring an evicted block");
  if (e.refs == 0) lru_remove(id);
  ++e.refs;
}

void BlockPool::release(int32_t id) {
  Entry& e = entries_[static_cast<size_t>(id)];
  if (!e.live || e.refs <= 0) invariant("releasing an unreferenced cached block");
  if (--e.refs == 0) lru_push_back(id);
}

int32_t BlockPool::publish(uint64_t key) {
  if (index_.count(key)) return -1;
  if (private_used_ <= 0) invariant("publishing without a private block");
  int32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<int32_t>(entries_.size());
    entries_.emplace_back();
  }
  Entry& e = entries_[static_cast<size_t>(id)];
  e.key = key;
  e.refs = 1;
  e.prev = e.next = -1;
  e.live = true;
  index_.emplace(key, id);
  count(-1, 1);
  return id;
}

void BlockPool::lru_push_back(int32_t id) {
  Entry& e = entries_[static_cast<size_t>(id)];
  e.prev = lru_tail_;
  e.next = -1;
  if (lru_tail_ >= 0) entries_[static_cast<size_t>(lru_tail_)].next = id;
  else lru_head_ = id;
  lru_tail_ = id;
  ++evictable_;
}

void BlockPool::lru_remove(int32_t id) {
  Entry& e = entries_[static_cast<size_t>(id)];
  if (e.prev >= 0) entries_[static_cast<size_t>(e.prev)].next = e.next;
  else lru_head_ = e.next;
  if (e.next >= 0) entries_[static_cast<size_t>(e.next)].prev = e.prev;
  else lru_tail_ = e.prev;
  e.prev = e.next = -1;
  --evictable_;
}

void BlockPool::evict_one() {
  if (lru_head_ < 0) invariant("nothing to evict");
  const int32_t id = lru_head_;
  lru_remove(id);
  Entry& e = entries_[static_cast<size_t>(id)];
  if (spill_) spill_->demote(e.key);
  index_.erase(e.key);
  e.live = false;
  count(0, -1);
  ++evictions_;
  free_ids_.push_back(id);
}

}  // namespace sightline::serve

// ---------------------------------------------------------------------------
// KvManager

namespace sightline::serve {

KvManager::KvManager(const KvCacheSpec& kv, int speculative_k)
    : block_size_(kv.block_size),
      contiguous_(kv.allocation == KvAllocation::Contiguous),
      to_completion_(kv.admission == KvAdmission::ToCompletion),  // paged only (read_kv refuses it beside contiguous)
      prefix_caching_(kv.prefix_caching),
      watermark_(kv.watermark),
      swap_space_GiB_(kv.swap_space_GiB),
      tiers_(kv.offload_tiers),
      tier_counters_(kv.offload_tiers.size()) {
  reserve_tokens_ = kv.max_model_len + speculative_k;
  speculative_k_ = speculative_k;
}

int64_t KvManager::admission_blocks(const KvSpace& s, const RequestSpec& r, int64_t tokens_now) const {
  if (contiguous_) return s.reserve_blocks;
  // To completion: every token it will hold, its speculative drafts' included
  // (TensorRT-LLM's getRemainingBlocksToCompletion), never fewer than now.
  if (to_completion_) return blocks_for(s, std::max<int64_t>(tokens_now, r.prompt + r.output + speculative_k_));
  return blocks_for(s, tokens_now);
}

KvSpace KvManager::make_space(int64_t blocks, double kv_bytes_per_token, const std::vector<CappedKv>& windowed,
                              BlockUsage* usage, int model, int gpus) {
  KvSpace s;
  s.pool = BlockPool(blocks);
  s.pool.report_to(usage);
  s.watermark_blocks = kv_watermark_blocks(watermark_, blocks);
  s.kv_bytes_per_token = kv_bytes_per_token;
  s.windowed = windowed_pages(kv_bytes_per_token, windowed);
  s.reserve_blocks = blocks_for(s, reserve_tokens_);
  const double block_bytes = kv_bytes_per_token * static_cast<double>(block_size_);
  s.host_blocks_free = block_bytes > 0 ? static_cast<int64_t>(std::floor(swap_space_GiB_ * kBytesPerGiB / block_bytes)) : 0;
  if (!tiers_.empty()) add_tiers(s, model, gpus);
  return s;
}

uint64_t KvManager::prefix_key(const RequestSpec& r, int64_t block) const {
  // Exact packing (no hashing collisions): model 2 bits, adapter 18, group 20, block 24.
  const uint64_t model = static_cast<uint64_t>(r.model) & 0x3;
  const uint64_t adapter = static_cast<uint64_t>(r.adapter + 1) & 0x3FFFF;
  // A session's system prompt is one prefix for every session: its full
  // blocks take the last group (sessions_workload.cpp keeps it free).
  const bool system = r.session >= 0 && block < r.system_tokens / block_size_;
  const uint64_t group = (system ? uint64_t{0xFFFFF} : static_cast<uint64_t>(r.prefix_group)) & 0xFFFFF;
  const uint64_t blk = static_cast<uint64_t>(block) & 0xFFFFFF;
  return (model << 62) | (adapter << 44) | (group << 24) | blk;
}

bool KvManager::grow_blocks(KvSpace& s, KvHold& h, int64_t tokens_after) {
  const int64_t need = blocks_for(s, tokens_after) - h.blocks();
  if (need <= 0) return true;
  if (!s.pool.take(need)) return false;
  h.private_blocks += need;
  return true;
}

void KvManager::release(KvSpace& s, KvHold& h) {
  for (int32_t id : h.prefix_entries) s.pool.release(id);
  h.prefix_entries.clear();
  s.pool.give(h.private_blocks);
  h.private_blocks = 0;
}

void KvManager::publish_prefix(KvSpace& s, KvHold& h, const RequestSpec& r, int64_t computed) {
  if (!prefix_caching_ || r.prefix_group < 0) return;
  const int64_t full = r.cacheable_tokens() / block_size_;
  while (static_cast<int64_t>(h.prefix_entries.size()) < full &&
         computed >= (static_cast<int64_t>(h.prefix_entries.size()) + 1) * block_size_ && h.private_blocks > 0) {
    const int32_t id = s.pool.publish(prefix_key(r, static_cast<int64_t>(h.prefix_entries.size())));
    if (id < 0) break;  // another request published this block first: ours stays private
    --h.private_blocks;
    h.prefix_entries.push_back(id);
  }
}

bool KvManager::first_chunk(int64_t remaining, int64_t budget, bool chunked, int64_t& chunk) {
  if (chunked) {
    chunk = std::min(remaining, budget);
    return chunk > 0;
  }
  if (remaining > budget) return false;
  chunk = remaining;
  return true;
}

bool KvManager::admit(KvSpace& s, KvHold& h, const RequestSpec& r, int64_t target, int64_t budget, bool chunked,
                      int64_t& chunk, int64_t& hit_tokens, double* reload_s) {
  if (s.tiers) return admit_tiered(s, h, r, target, budget, chunked, chunk, hit_tokens, reload_s);
  std::vector<int32_t> hits;
  if (prefix_caching_ && r.prefix_group >= 0) {
    const int64_t nb = std::min<int64_t>(r.prefix_tokens, target - 1) / block_size_;
    for (int64_t j = 0; j < nb; ++j) {
      const int32_t id = s.pool.lookup(prefix_key(r, j));
      if (id < 0) break;
      hits.push_back(id);
    }
  }
  hit_tokens = static_cast<int64_t>(hits.size()) * block_size_;
  if (!first_chunk(target - hit_tokens, budget, chunked, chunk)) return false;
  // (No hits under contiguous allocation, which refuses prefix caching.)
  const int64_t need = admission_blocks(s, r, hit_tokens + chunk) - static_cast<int64_t>(hits.size());
  int64_t unreferenced = 0;
  for (int32_t id : hits) unreferenced += s.pool.is_unreferenced(id) ? 1 : 0;
  if (!s.pool.fits(unreferenced + need, admission_headroom(s), keeps_watermark())) return false;
  for (int32_t id : hits) s.pool.acquire(id);
  if (!s.pool.take(need)) invariant("admission allocation failed");
  ++admissions_;
  if (!hits.empty()) ++admissions_with_hits_;
  h.prefix_entries = std::move(hits);
  h.private_blocks = need;
  return true;
}

bool KvManager::reserve_for_transfer(KvSpace& s, KvHold& h, const RequestSpec& r, int64_t tokens) {
  const int64_t need = admission_blocks(s, r, tokens);
  if (!s.pool.fits(need, admission_headroom(s), keeps_watermark())) return false;
  s.pool.take(need);
  h.private_blocks = need;
  return true;
}

bool KvManager::swap_out(KvSpace& s, KvHold& h, ReqTokens& swapped_blocks, double& bytes) {
  const int64_t held = h.blocks();
  if (s.host_blocks_free < held) return false;
  bytes = static_cast<double>(held * block_size_) * s.kv_bytes_per_token;
  swapped_blocks = static_cast<ReqTokens>(held);  // its context's blocks (ReqTokens)
  s.host_blocks_free -= held;
  release(s, h);
  return true;
}

bool KvManager::swap_in(KvSpace& s, KvHold& h, ReqTokens& swapped_blocks, double& bytes) {
  const int64_t need = swapped_blocks;
  if (!s.pool.fits(need, s.watermark_blocks, true)) return false;
  s.pool.take(need);
  h.private_blocks = need;
  s.host_blocks_free += swapped_blocks;
  swapped_blocks = 0;
  bytes = static_cast<double>(need * block_size_) * s.kv_bytes_per_token;
  return true;
}

}  // namespace sightline::serve
