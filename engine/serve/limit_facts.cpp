#include "serve/limit_facts.hpp"

namespace sightline::serve {

bool runs_alike(const LimitFacts& f, const RunLimits& ran, const RunLimits& other) {
  if (f.opaque) return false;
  if (other.max_num_seqs <= f.seqs.below || other.max_num_seqs > f.seqs.at_or_above) return false;
  // The same pools answer the same checks, short or not.
  if (other.kv_blocks == ran.kv_blocks && other.watermark == ran.watermark) return true;
  if (f.kv.refused || f.capacity_read || other.kv_blocks.size() != ran.kv_blocks.size()) return false;
  for (int64_t blocks : other.kv_blocks) {
    // Each check's demand is from the pools that recorded it; within every one of the other's pools it passes.
    if (f.kv.demand > blocks) return false;
    if (f.kv.watermarked + kv_watermark_blocks(other.watermark, blocks) > blocks) return false;
  }
  return true;
}

}  // namespace sightline::serve
