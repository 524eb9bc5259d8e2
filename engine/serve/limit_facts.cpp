#include "serve/limit_facts.hpp"

namespace sightline::serve {

json limit_facts_to_json(const LimitFacts& f) {
  const bool reached = f.seqs.at_or_above != std::numeric_limits<int64_t>::max();
  return json{{"seqs", {{"below", f.seqs.below}, {"at_or_above", reached ? json(f.seqs.at_or_above) : json(nullptr)}}},
              {"kv", {{"demand", f.kv.demand}, {"watermarked", f.kv.watermarked}, {"refused", f.kv.refused}}},
              {"capacity_read", f.capacity_read},
              {"opaque", f.opaque}};
}

LimitFacts read_limit_facts(const json& value, const std::string& path) {
  LimitFacts f;
  const ObjectReader r(value, path, {"seqs", "kv", "capacity_read", "opaque"});
  f.opaque = r.boolean("opaque");
  if (f.opaque && !r.has("seqs")) return f;  // a failed run's: nothing else matters
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const ObjectReader seqs(r.required("seqs"), r.child_path("seqs"), {"below", "at_or_above"});
  f.seqs.below = seqs.integer("below", -1, kMax);
  if (const json* at = seqs.nullable("at_or_above")) f.seqs.at_or_above = read_integer(*at, seqs.child_path("at_or_above"), 0, kMax);
  const ObjectReader kv(r.required("kv"), r.child_path("kv"), {"demand", "watermarked", "refused"});
  f.kv.demand = kv.integer("demand", 0, kMax);
  f.kv.watermarked = kv.integer("watermarked", 0, kMax);
  f.kv.refused = kv.boolean("refused");
  f.capacity_read = r.boolean("capacity_read");
  return f;
}

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
