#pragma once
// The fields every run result starts with: versions, seed, kind, cost tier,
// the scenario's id and title, and the model's size. Typed, with one writer.
#include <cstdint>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "scenario/scenario.hpp"

namespace sightline {

struct ResultHeader {
  uint64_t seed = 0;
  std::string kind, cost_tier;
  std::string layout_class;  // scenario/layout_class.hpp: what the accuracy figures are grouped by
  std::string scenario_id, scenario_title;
  std::string model_id, model_name;
  double params_B = 0, active_params_B = 0;
  // Set only for models imported from a Hugging Face config: what the import
  // understood (family, warnings, ignored keys) and the precision it applied.
  json model_import;
  // Set only when the scenario names a cluster calibration: which one priced
  // the run (id, source, factors), so a calibrated result says so.
  json calibration;
  // The scenario's own warnings; every result lists them first under "warnings".
  std::vector<std::string> warnings;
};

ResultHeader make_result_header(const Scenario& s, const std::string& kind, const std::string& cost_tier);
json to_json(const ResultHeader& h);

// to_json(make_result_header(...)), for results still assembled as JSON.
// Adds a run's own warnings to a result after the scenario's (the header's).
void append_warnings(json& result, const json& warnings);

json result_header(const Scenario& s, const std::string& kind, const std::string& cost_tier);

}  // namespace sightline
