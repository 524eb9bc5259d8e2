#include "presets/preset_store.hpp"

#include <map>

#include "core/error.hpp"
#include "presets/embedded_presets.hpp"

namespace sightline {

namespace {

using PresetIndex = std::map<std::string, std::map<std::string, json>>;

// Parsed once; immutable afterwards.
const PresetIndex& preset_index() {
  static const PresetIndex index = [] {
    PresetIndex out;
    for (const auto& preset : embedded_presets()) {
      std::string key = preset.key;
      auto slash = key.find('/');
      if (slash == std::string::npos) continue;  // e.g. a stray file at the top of presets/
      std::string kind = key.substr(0, slash);
      std::string id = key.substr(slash + 1);
      if (id.find('/') != std::string::npos) continue;  // nested folders are not presets
      out[kind][id] = parse_json_text(preset.json);  // the one reader, as for any input
    }
    return out;
  }();
  return index;
}

}  // namespace

const std::vector<std::string>& preset_kinds() {
  static const std::vector<std::string> kinds = {"models", "gpus", "interconnects", "scenarios", "calibrations", "comm_calibrations", "stacks", "validation", "transfer_errors", "kernel_families", "kv_tiers", "spec_acceptance"};
  return kinds;
}

const json* find_preset(const std::string& kind, const std::string& id) {
  const auto& index = preset_index();
  auto k = index.find(kind);
  if (k == index.end()) return nullptr;
  auto it = k->second.find(id);
  return it == k->second.end() ? nullptr : &it->second;
}

const json& require_preset(const std::string& kind, const std::string& id, const std::string& path) {
  if (const json* p = find_preset(kind, id)) return *p;
  std::string ids;
  for (const json* p : list_presets(kind)) ids += (ids.empty() ? "" : ", ") + p->at("id").get<std::string>();
  fail(error_code::kUnknownPreset, path, "unknown " + kind.substr(0, kind.size() - 1) + " preset '" + id +
                                             "'; known: " + ids);
}

std::vector<const json*> list_presets(const std::string& kind) {
  std::vector<const json*> out;
  const auto& index = preset_index();
  auto k = index.find(kind);
  if (k == index.end()) return out;
  for (const auto& [id, record] : k->second) out.push_back(&record);
  return out;
}

}  // namespace sightline
