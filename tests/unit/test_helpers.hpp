#pragma once
// Shared helpers for the engine's unit tests: they call the public JSON API,
// exactly as the CLI and the wasm module do.
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "api/api.hpp"

namespace sightline::test {

using json = nlohmann::json;

inline json envelope(const std::string& text) { return json::parse(text); }

inline json preset(const std::string& kind, const std::string& id) {
  return envelope(api::get_preset(kind, id)).at("result");
}

inline json run(const json& scenario) { return envelope(api::run_scenario(scenario.dump())); }
inline json validate(const json& scenario) { return envelope(api::validate_scenario(scenario.dump())); }

inline std::string read_source_file(const std::string& relative) {
  std::ifstream f(std::string(SIGHTLINE_SOURCE_DIR) + "/" + relative);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace sightline::test
