#pragma once
// Preset JSON files compiled into the engine (generated at build time from presets/).
#include <string>
#include <vector>

namespace sightline {

struct EmbeddedPreset {
  const char* key;   // "<kind>/<id>", e.g. "models/llama-2-7b"
  const char* json;  // file content
};

const std::vector<EmbeddedPreset>& embedded_presets();

}  // namespace sightline
