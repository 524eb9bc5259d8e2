#include "presets/preset_store.hpp"

#include <map>
#include <mutex>

#include "core/error.hpp"
#include "presets/embedded_presets.hpp"

namespace sightline {

namespace {

// One embedded preset, parsed on its first use: a run needs a handful of the
// presets, and parsing all of them (about 760 KB of JSON, a third of it
// calibration data) cost the page's first run 0.2-0.35 s in cold wasm.
// call_once makes the first use safe from the CLI's worker threads.
struct Entry {
  const char* text = nullptr;
  mutable std::once_flag parsed_once;
  mutable json parsed;
  const json& get() const {
    std::call_once(parsed_once, [this] { parsed = parse_json_text(text); });  // the one reader, as for any input
    return parsed;
  }
};

using PresetIndex = std::map<std::string, std::map<std::string, Entry>>;

// Built once (names only, nothing parsed); immutable afterwards.
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
      out[kind][id].text = preset.json;
    }
    return out;
  }();
  return index;
}

}  // namespace

const std::vector<std::string>& preset_kinds() {
  static const std::vector<std::string> kinds = {"models", "gpus", "interconnects", "scenarios", "calibrations", "comm_calibrations", "stacks", "validation", "transfer_errors", "kernel_families", "kv_tiers", "spec_acceptance", "decode_kernels"};
  return kinds;
}

const json* find_preset(const std::string& kind, const std::string& id) {
  const auto& index = preset_index();
  auto k = index.find(kind);
  if (k == index.end()) return nullptr;
  auto it = k->second.find(id);
  return it == k->second.end() ? nullptr : &it->second.get();
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
  for (const auto& [id, entry] : k->second) out.push_back(&entry.get());
  return out;
}

}  // namespace sightline
