#pragma once
// The scenario parameters as `sightline registries` lists them (`parameters`):
// what the readers accept (core/parameter_schema.hpp, recorded while reading
// every scenario preset and the probes of parameter_catalogue.cpp) with each
// parameter's words (scenario/parameter_words.hpp) where it has some.
#include <vector>

#include "core/json_text.hpp"

namespace sightline {

// One entry per generic pointer, sorted by pointer.
json parameter_catalogue_json();
// The documents read besides the scenario presets, so that the branches no
// preset takes are recorded too (scenario/parameter_catalogue.cpp says which).
std::vector<json> schema_probe_documents();

}  // namespace sightline
