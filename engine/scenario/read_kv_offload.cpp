// serving.kv_cache.offload: the chain of KV tiers below HBM. A tier is a
// kv_tiers preset id, or an object of values (optionally starting from a
// preset's, {"preset": id, ...}): capacity, bandwidth to HBM, latency, shared.
// A preset is a named set of values: the simulator never sees its id.
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/parameter_schema.hpp"
#include "presets/preset_store.hpp"
#include "scenario/checks.hpp"
#include "scenario/simulation_sections.hpp"

namespace sightline::serve {

namespace {

const std::vector<std::string> kTierKeys = {"name", "capacity_GiB", "bandwidth_GBps", "latency_us", "shared"};

// The values of one tier object (a preset's or the user's) over `t`; with
// `complete` every value must be present.
void read_tier_values(const ObjectReader& r, KvTierSpec& t, bool complete) {
  auto num = [&](const char* key, double lo, double hi, double& out) {
    if (complete || r.has(key)) out = r.number(key, lo, hi);
  };
  if (r.has("name")) t.name = r.string("name");
  num("capacity_GiB", 0.0, 1e9, t.capacity_GiB);
  num("bandwidth_GBps", 1e-3, 1e5, t.bandwidth_GBps);
  num("latency_us", 0.0, 1e7, t.latency_us);
  if (r.has("shared")) t.shared = r.boolean("shared");
}

KvTierSpec read_tier(const json& v, const std::string& path) {
  KvTierSpec t;
  if (v.is_string()) {
    const std::string id = v.get<std::string>();
    const json& p = require_preset("kv_tiers", id, path);
    std::vector<std::string> keys = kTierKeys;
    keys.insert(keys.end(), {"id", "source"});
    ObjectReader pr(p, path, keys);
    read_tier_values(pr, t, true);
    t.preset = id;  // its "id" and "source" say where the values come from; they change nothing
    if (t.name.empty()) t.name = id;
    return t;
  }
  std::vector<std::string> keys = kTierKeys;
  keys.push_back("preset");
  ObjectReader r(v, path, keys);
  if (r.has("preset")) {
    t = read_tier(json(r.string("preset")), r.child_path("preset"));
    read_tier_values(r, t, false);
  } else {
    read_tier_values(r, t, true);
  }
  if (t.name.empty()) t.name = r.string("name");
  return t;
}

}  // namespace

void read_kv_offload(const json& v, const std::string& path, KvCacheSpec& kv) {
  ObjectReader r(v, path, {"tiers", "reload_overlap"});
  const json& tiers = r.required("tiers");
  const std::string tpath = r.child_path("tiers");
  if (!tiers.is_array() || tiers.empty() || tiers.size() > 4)
    fail(tiers.is_array() ? error_code::kRange : error_code::kType, tpath,
         "expected an array of 1 to 4 tiers (a kv_tiers preset id or {capacity_GiB, bandwidth_GBps, latency_us})");
  for (size_t i = 0; i < tiers.size(); ++i) {
    const std::string ip = pointer_append(tpath, i);
    record_parameter(ip, "preset");
    KvTierSpec t = read_tier(tiers[i], ip);
    for (const KvTierSpec& before : kv.offload_tiers)
      if (before.name == t.name)
        fail(error_code::kInvalidValue, ip, "two tiers are named '" + t.name + "'; give each its own name");
    if (!kv.offload_tiers.empty() && kv.offload_tiers.back().shared && !t.shared)
      fail(error_code::kConstraint, ip, "a replica's own tier cannot follow a shared one: list local tiers first");
    kv.offload_tiers.push_back(t);
  }
  kv.reload_overlap = r.choice("reload_overlap", {"layerwise", "serial"}, "layerwise") == "serial" ? ReloadOverlap::Serial
                                                                                                 : ReloadOverlap::Layerwise;
}

json kv_offload_to_json(const KvCacheSpec& kv) {
  json tiers = json::array();
  for (const KvTierSpec& t : kv.offload_tiers) {
    json j = {{"name", t.name},
              {"capacity_GiB", t.capacity_GiB},
              {"bandwidth_GBps", t.bandwidth_GBps},
              {"latency_us", t.latency_us},
              {"shared", t.shared}};
    if (!t.preset.empty()) j["preset"] = t.preset;
    tiers.push_back(j);
  }
  return {{"tiers", tiers}, {"reload_overlap", kv.reload_overlap == ReloadOverlap::Serial ? "serial" : "layerwise"}};
}

}  // namespace sightline::serve
