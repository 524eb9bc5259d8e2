#pragma once
// The scenario parameters as `sightline registries` lists them (`parameters`):
// what the readers accept (core/parameter_schema.hpp, recorded while reading
// every scenario preset and the probes of parameter_catalogue.cpp) with each
// parameter's words (scenario/parameter_words.hpp) where it has some.
#include <vector>

#include "core/json_text.hpp"

namespace sightline {

// Whether this build carries the parameters' words. The native build does (the
// CLI prints them; web/build.mjs writes them into the page's registries.json
// from it); the wasm module does not: the page reads them from that file, so
// they ship once, not also in the module it loads.
#ifdef __EMSCRIPTEN__
inline constexpr bool kParameterWordsBuiltIn = false;
#else
inline constexpr bool kParameterWordsBuiltIn = true;
#endif

// One entry per generic pointer, sorted by pointer.
json parameter_catalogue_json();
// The documents read besides the scenario presets, so that the branches no
// preset takes are recorded too (scenario/parameter_catalogue.cpp says which).
std::vector<json> schema_probe_documents();

}  // namespace sightline
