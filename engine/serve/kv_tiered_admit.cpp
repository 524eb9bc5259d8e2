// The KV manager's offload tiers: building each KvSpace's chain, admission
// that reloads prefix blocks from a tier, and the routers' probe.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "mem/inference_memory.hpp"
#include "serve/kv_manager.hpp"

namespace sightline::serve {

void KvManager::add_tiers(KvSpace& s, int model, int gpus) {
  s.tiers = std::make_unique<KvTierChain>();
  const double block_bytes = s.kv_bytes_per_token * static_cast<double>(block_size_);  // per GPU
  for (size_t t = 0; t < tiers_.size(); ++t) {
    const KvTierSpec& ts = tiers_[t];
    const double bytes_per_s = ts.bandwidth_GBps * 1e9;
    const double latency_s = ts.latency_us * 1e-6;
    const double bytes = ts.capacity_GiB * kBytesPerGiB;
    if (!ts.shared) {
      // capacity_GiB is per GPU; every GPU of the replica holds its shard of each block.
      const int64_t cap = block_bytes > 0 ? static_cast<int64_t>(std::floor(bytes / block_bytes)) : 0;
      s.tiers->add_own(cap, &tier_counters_[t], bytes_per_s, latency_s);
      continue;
    }
    // A shared store holds every GPU's shard of a block: capacity over the replica's bytes per block.
    auto& lru = shared_[{model, t}];
    if (!lru) {
      const double replica_block = block_bytes * std::max(1, gpus);
      lru = std::make_unique<KeyLru>(replica_block > 0 ? static_cast<int64_t>(std::floor(bytes / replica_block)) : 0);
    }
    s.tiers->add_level(KvTierChain::Level{lru.get(), &tier_counters_[t], bytes_per_s, latency_s});
  }
  s.pool.spill_to(s.tiers.get());
}

PrefixProbe KvManager::probe(const KvSpace& s, const RequestSpec& r, int64_t target) const {
  PrefixProbe p;
  p.tier_blocks.assign(s.tiers ? s.tiers->levels() : 0, 0);
  if (!prefix_caching_ || r.prefix_group < 0) return p;
  const int64_t nb = std::min<int64_t>(r.prefix_tokens, target - 1) / block_size_;
  for (int64_t j = 0; j < nb; ++j) {
    const uint64_t key = prefix_key(r, j);
    if (s.pool.lookup(key) >= 0) {
      ++p.hbm_blocks;
      continue;
    }
    const int t = s.tiers ? s.tiers->find_const(key) : -1;
    if (t < 0) break;
    ++p.tier_blocks[static_cast<size_t>(t)];
  }
  for (size_t t = 0; t < p.tier_blocks.size(); ++t) {
    if (p.tier_blocks[t] == 0) continue;
    const KvTierChain::Level& l = s.tiers->level(t);
    const double bytes = static_cast<double>(p.tier_blocks[t] * block_size_) * s.kv_bytes_per_token;
    p.reload_s += l.latency_s + bytes / l.bytes_per_s;
  }
  return p;
}

// As admit, but a prefix block missing from HBM may come from a tier: it
// takes an HBM block, is published there again (used by this request) and
// is reloaded over the tier's link before the prompt's first chunk runs.
bool KvManager::admit_tiered(KvSpace& s, KvHold& h, const RequestSpec& r, int64_t target, int64_t budget, bool chunked,
                             int64_t& chunk, int64_t& hit_tokens, double* reload_s) {
  std::vector<int32_t> found;  // per prefix block: an HBM entry, or -1 - tier for a reload
  std::vector<uint64_t> keys;
  if (prefix_caching_ && r.prefix_group >= 0) {
    const int64_t nb = std::min<int64_t>(r.prefix_tokens, target - 1) / block_size_;
    for (int64_t j = 0; j < nb; ++j) {
      const uint64_t key = prefix_key(r, j);
      int32_t id = s.pool.lookup(key);
      if (id < 0) {
        const int t = s.tiers->find(key);
        if (t < 0) break;
        id = -1 - t;
      }
      found.push_back(id);
      keys.push_back(key);
    }
  }
  int64_t reloads = 0, unreferenced = 0;
  for (int32_t id : found) {
    if (id < 0) ++reloads;
    else unreferenced += s.pool.is_unreferenced(id) ? 1 : 0;
  }
  hit_tokens = static_cast<int64_t>(found.size()) * block_size_;
  if (!first_chunk(target - hit_tokens, budget, chunked, chunk)) return false;
  const int64_t need = blocks_for(s, hit_tokens + chunk) - static_cast<int64_t>(found.size());
  if (s.pool.allocatable() - unreferenced - need - reloads < s.watermark_blocks) return false;
  for (int32_t id : found)
    if (id >= 0) s.pool.acquire(id);
  std::vector<int64_t> per_tier(s.tiers->levels(), 0);
  for (size_t j = 0; j < found.size(); ++j) {
    if (found[j] >= 0) {
      ++hbm_hit_blocks_;
      continue;
    }
    ++per_tier[static_cast<size_t>(-1 - found[j])];
    if (!s.pool.take(1)) fail(error_code::kInternal, "", "KV tier reload: no HBM block after the admission check");
    found[j] = s.pool.publish(keys[j]);
    if (found[j] < 0) fail(error_code::kInternal, "", "KV tier reload: the block is in HBM already");
  }
  double secs = 0;
  for (size_t t = 0; t < per_tier.size(); ++t) {
    if (per_tier[t] == 0) continue;
    const KvTierChain::Level& l = s.tiers->level(t);
    const double bytes = static_cast<double>(per_tier[t] * block_size_) * s.kv_bytes_per_token;
    l.counters->hit_blocks += per_tier[t];
    l.counters->reload_bytes += bytes;
    secs += l.latency_s + bytes / l.bytes_per_s;
  }
  if (reload_s) *reload_s += secs;
  if (!s.pool.take(need)) fail(error_code::kInternal, "", "KV block manager invariant violated: admission allocation failed");
  ++admissions_;
  if (!found.empty()) ++admissions_with_hits_;
  h.prefix_entries = std::move(found);
  h.private_blocks = need;
  return true;
}

}  // namespace sightline::serve
