#include "perf/cluster_calibration.hpp"

namespace sightline {

json ClusterCalibration::to_json() const {
  json j = {{"id", id},
            {"source", source},
            {"factors",
             {{"compute_efficiency_scale", compute_efficiency_scale},
              {"memory_efficiency_scale", memory_efficiency_scale},
              {"comm_efficiency_scale", comm_efficiency_scale},
              {"host_us_per_step", host_us_per_step}}}};
  // Written only when there is one: calibrations without it read and print as before.
  if (request_latency_ms > 0) j["factors"]["request_latency_ms"] = request_latency_ms;
  if (!fit.is_null()) j["fit"] = fit;
  return j;
}

ClusterCalibration ClusterCalibration::from_json(const json& j, const std::string& path) {
  ObjectReader r(j, path, {"id", "source", "factors", "fit"});
  ClusterCalibration c;
  c.id = r.string("id");
  c.source = r.string("source");
  ObjectReader f(r.required("factors"), r.child_path("factors"),
                 {"compute_efficiency_scale", "memory_efficiency_scale", "comm_efficiency_scale", "host_us_per_step",
                  "request_latency_ms"});
  // Bounds: a factor outside them is not a calibration of the same stack but a
  // different machine or a broken benchmark.
  const FactorRange& e = kEfficiencyScaleRange;
  c.compute_efficiency_scale = f.number("compute_efficiency_scale", e.lo, e.hi, 1);
  c.memory_efficiency_scale = f.number("memory_efficiency_scale", e.lo, e.hi, 1);
  c.comm_efficiency_scale = f.number("comm_efficiency_scale", e.lo, e.hi, 1);
  c.host_us_per_step = f.number("host_us_per_step", kHostUsPerStepRange.lo, kHostUsPerStepRange.hi, 0);
  c.request_latency_ms = f.number("request_latency_ms", kRequestLatencyMsRange.lo, kRequestLatencyMsRange.hi, 0);
  if (const json* fit = r.find("fit")) {
    require_object(*fit, r.child_path("fit"));
    c.fit = *fit;
  }
  return c;
}

ClusterScaledCostModel::ClusterScaledCostModel(std::unique_ptr<KernelCostModel> inner, ClusterCalibration calibration)
    : inner_(std::move(inner)), cal_(std::move(calibration)) {}

OpCost ClusterScaledCostModel::cost(const Operator& op, const CostContext& ctx) const {
  OpCost c = inner_->cost(op, ctx);
  const double eta = c.bound == "compute"         ? cal_.compute_efficiency_scale
                     : c.bound == "communication" ? cal_.comm_efficiency_scale
                                                  : cal_.memory_efficiency_scale;
  const double scale = 1.0 / eta;
  c.time_s *= scale;
  c.time_low_s *= scale;
  c.time_high_s *= scale;
  c.compute_s *= scale;
  c.memory_s *= scale;
  return c;
}

}  // namespace sightline
