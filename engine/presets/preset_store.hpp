#pragma once
// Read-only access to the presets compiled into the engine.
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline {

// Kinds of preset, matching the folders under presets/.
const std::vector<std::string>& preset_kinds();

// The parsed preset `id` of `kind`, or nullptr.
const json* find_preset(const std::string& kind, const std::string& id);

// As find_preset, but an unknown id fails with unknown_preset at `path`, listing valid ids.
const json& require_preset(const std::string& kind, const std::string& id, const std::string& path);

// Every preset of a kind, ordered by id.
std::vector<const json*> list_presets(const std::string& kind);

}  // namespace sightline
