#pragma once
// The words of the scenario parameters people set by hand (the page's form,
// and anyone reading `sightline registries`): for each generic pointer of the
// parameter schema (array indices as '*'), its label, unit and one-line help.
// The schema (core/parameter_schema.hpp) says what the readers accept; this
// table says what a parameter means; scenario/parameter_catalogue.cpp merges
// the two into one entry per pointer (`sightline registries`' `parameters`;
// the page's registries.json), so the page keeps no words of its own for a
// scenario parameter. tests/unit/test_parameter_words.cpp checks that every
// entry names a pointer the schema records.
#include <string>
#include <vector>

namespace sightline {

struct ParameterWords {
  std::string pointer;  // generic: /serving/cluster/pools/*/tp
  std::string label;
  std::string unit;     // empty: none (a choice, a switch)
  std::string help;
};

// Every entry, each pointer once.
const std::vector<ParameterWords>& parameter_words();
// The entry of generic pointer `pointer`, or nullptr.
const ParameterWords* parameter_words_at(const std::string& pointer);

}  // namespace sightline
