#include "run/result_header.hpp"

#include "core/version.hpp"
#include "model/param_count.hpp"
#include "scenario/layout_class.hpp"

namespace sightline {

ResultHeader make_result_header(const Scenario& s, const std::string& kind, const std::string& cost_tier) {
  const ParamCounts params = count_params(s.model);
  ResultHeader h;
  h.seed = s.seed;
  h.kind = kind;
  h.cost_tier = cost_tier;
  h.layout_class = layout_class(s);
  h.scenario_id = s.id;
  h.scenario_title = s.title;
  h.model_id = s.model.id;
  h.model_name = s.model.name;
  h.params_B = static_cast<double>(params.total) / 1e9;
  h.active_params_B = static_cast<double>(params.active) / 1e9;
  if (!s.model.import.family.empty()) {
    h.model_import = {{"family", s.model.import.family},
                      {"warnings", s.model.import.warnings},
                      {"ignored_keys", s.model.import.ignored_keys},
                      {"ignored_why", s.model.import.ignored_why},
                      {"ignored_parts", s.model.import.ignored_parts},
                      {"checkpoint_weights", s.model.quant.applied}};
    h.model_import["precision_applied"] =
        s.precision.from_checkpoint.empty() ? json("scenario precision (" + dtype_name(s.precision.weights) + " weights)")
                                            : json(s.precision.from_checkpoint);
  }
  h.warnings = s.warnings;
  if (s.cost_model.cluster_calibration) {
    json c = s.cost_model.cluster_calibration->to_json();
    c.erase("fit");  // the fit's report stays in the calibration file
    h.calibration = c;
  }
  return h;
}

json to_json(const ResultHeader& h) {
  json r;
  r["schema_version"] = kResultSchemaVersion;
  r["engine_version"] = kEngineVersion;
  r["seed"] = h.seed;
  r["kind"] = h.kind;
  r["cost_tier"] = h.cost_tier;
  r["layout_class"] = h.layout_class;
  r["scenario"] = {{"id", h.scenario_id}, {"title", h.scenario_title}};
  r["model"] = {{"id", h.model_id},
                {"name", h.model_name},
                {"params_B", h.params_B},
                {"active_params_B", h.active_params_B}};
  if (!h.model_import.is_null()) r["model"]["import"] = h.model_import;
  if (!h.calibration.is_null()) r["calibration"] = h.calibration;
  if (!h.warnings.empty()) r["warnings"] = h.warnings;
  return r;
}

void append_warnings(json& result, const json& warnings) {
  json all = result.contains("warnings") ? result["warnings"] : json::array();
  for (const json& w : warnings) all.push_back(w);
  result["warnings"] = all;
}

json result_header(const Scenario& s, const std::string& kind, const std::string& cost_tier) {
  return to_json(make_result_header(s, kind, cost_tier));
}

}  // namespace sightline
