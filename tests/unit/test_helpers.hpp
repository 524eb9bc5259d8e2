#pragma once
// Shared helpers for the engine's unit tests: they call the public JSON API,
// exactly as the CLI and the wasm module do.
#include <fstream>
#include <sstream>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "api/api.hpp"

namespace sightline::test {

using json = nlohmann::json;

inline json envelope(const std::string& text) { return json::parse(text); }

inline json preset(const std::string& kind, const std::string& id) {
  return envelope(api::get_preset(kind, id)).at("result");
}

// The base scenario of the search tests: I2.3's Llama-3-70B chat workload on
// one HGX H100 node at tp 8, with the canonical search's SLO (TTFT 1 s, TPOT
// 50 ms, 90% jointly).
inline json llama3_70b_h100_search_base() {
  json base = preset("scenarios", "I2.3");
  base["model"] = "llama-3-70b";
  base["hardware"] = {{"gpu", "h100-sxm"}, {"gpus_per_node", 8}, {"intra_node", "nvlink4-nvswitch"}};
  base["serving"]["parallelism"] = {{"tp", 8}, {"pp", 1}};
  base["serving"].erase("cluster");
  base["serving"]["slo"] = {{"ttft_ms", 1000}, {"tpot_ms", 50}, {"attainment", 0.9}};
  return base;
}

inline json run(const json& scenario) { return envelope(api::run_scenario(scenario.dump())); }
// A central-only run's result, the test stopped (with the error) when it fails.
inline json central_result(const json& scenario) {
  const json e = envelope(api::run_scenario_central_only(scenario.dump()));
  REQUIRE_MESSAGE(e["ok"] == true, e.dump().substr(0, 400));
  return e["result"];
}
inline json validate(const json& scenario) { return envelope(api::validate_scenario(scenario.dump())); }

inline std::string read_source_file(const std::string& relative) {
  std::ifstream f(std::string(SIGHTLINE_SOURCE_DIR) + "/" + relative);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Whether the doc `relative` (e.g. "docs/search.md") quotes `quoted`, its line
// breaks and indents read as one space: a test that computes a figure or a
// default holds the doc's quote of it (issue 40: a stale figure fails where it
// is computed). Call as CHECK_MESSAGE(test::doc_quotes(doc, s), s).
inline bool doc_quotes(const std::string& relative, const std::string& quoted) {
  std::string flat;
  for (char ch : read_source_file(relative)) {
    const bool space = ch == ' ' || ch == '\n';
    if (!space || flat.empty() || flat.back() != ' ') flat += space ? ' ' : ch;
  }
  return flat.find(quoted) != std::string::npos;
}

}  // namespace sightline::test
