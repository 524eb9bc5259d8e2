#include "run/result_header.hpp"

#include "core/version.hpp"
#include "model/param_count.hpp"

namespace sightline {

json result_header(const Scenario& s, const std::string& kind, const std::string& cost_tier) {
  const ParamCounts params = count_params(s.model);
  json r;
  r["schema_version"] = kResultSchemaVersion;
  r["engine_version"] = kEngineVersion;
  r["seed"] = s.seed;
  r["kind"] = kind;
  r["cost_tier"] = cost_tier;
  r["scenario"] = {{"id", s.id}, {"title", s.title}};
  r["model"] = {{"id", s.model.id},
                {"name", s.model.name},
                {"params_B", static_cast<double>(params.total) / 1e9},
                {"active_params_B", static_cast<double>(params.active) / 1e9}};
  return r;
}

}  // namespace sightline
