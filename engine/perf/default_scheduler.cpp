#include "perf/default_scheduler.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "hw/hardware.hpp"

namespace sightline {

int64_t MemoryTieredTokens::on(const GpuSpec& gpu) const {
  if (std::find(small_architectures.begin(), small_architectures.end(), gpu.architecture) != small_architectures.end())
    return tiers.empty() ? otherwise : tiers.front().tokens;
  for (const Tier& t : tiers)
    if (gpu.memory_GiB < t.below_GiB) return t.tokens;
  return otherwise;
}

json MemoryTieredTokens::to_json() const {
  json tiers_json = json::array();
  for (const Tier& t : tiers) tiers_json.push_back({{"below_GiB", t.below_GiB}, {"tokens", t.tokens}});
  json j = {{"tiers", tiers_json}, {"otherwise", otherwise}};
  if (!small_architectures.empty()) j["small_architectures"] = small_architectures;
  return j;
}

json StackScheduler::to_json() const {
  json j = {{"policy", policy}, {"priority", priority}, {"source", source}};
  if (chunk_size) j["chunk_size"] = chunk_size->to_json();
  if (max_num_batched_tokens) j["max_num_batched_tokens"] = max_num_batched_tokens->to_json();
  return j;
}

namespace {

constexpr int64_t kMaxTokens = 1 << 20;  // the scenario's own chunk_size bound

MemoryTieredTokens read_tiered_tokens(const json& v, const std::string& path) {
  ObjectReader r(v, path, {"tiers", "otherwise", "small_architectures"});
  MemoryTieredTokens t;
  const json& tiers = r.required("tiers");
  const std::string tiers_path = r.child_path("tiers");
  if (!tiers.is_array()) fail(error_code::kType, tiers_path, "expected an array of {below_GiB, tokens}");
  for (size_t i = 0; i < tiers.size(); ++i) {
    const std::string at = pointer_append(tiers_path, i);
    ObjectReader tr(tiers[i], at, {"below_GiB", "tokens"});
    MemoryTieredTokens::Tier tier{tr.number("below_GiB", 0, 1e6), tr.integer("tokens", 1, kMaxTokens)};
    if (!t.tiers.empty() && tier.below_GiB <= t.tiers.back().below_GiB)
      fail(error_code::kConstraint, tr.child_path("below_GiB"),
           "tiers must be in ascending order of below_GiB (the first bound a GPU's memory is below gives its budget)");
    t.tiers.push_back(tier);
  }
  t.otherwise = r.integer("otherwise", 1, kMaxTokens);
  if (const json* a = r.find("small_architectures"); a && !a->empty())
    t.small_architectures = read_architecture_names(*a, r.child_path("small_architectures"));
  return t;
}

}  // namespace

StackScheduler read_stack_scheduler(const json& v, const std::string& path) {
  ObjectReader r(v, path, {"policy", "priority", "chunk_size", "max_num_batched_tokens", "source"});
  StackScheduler s;
  s.policy = r.string("policy");
  s.priority = r.string("priority");
  if (const json* c = r.find("chunk_size")) s.chunk_size = read_tiered_tokens(*c, r.child_path("chunk_size"));
  if (const json* b = r.find("max_num_batched_tokens"))
    s.max_num_batched_tokens = read_tiered_tokens(*b, r.child_path("max_num_batched_tokens"));
  s.path = path;
  s.source = r.string("source", "user-supplied");
  return s;
}

json StackKvAdmission::to_json() const { return {{"admission", admission}, {"source", source}}; }

StackKvAdmission read_stack_kv_admission(const json& v, const std::string& path) {
  ObjectReader r(v, path, {"admission", "source"});
  StackKvAdmission a;
  a.admission = r.string("admission");
  a.path = path;
  a.source = r.string("source", "user-supplied");
  return a;
}

}  // namespace sightline
