#include "jobs/calibration_range.hpp"

#include <algorithm>
#include <optional>
#include <sstream>

#include "core/json_text.hpp"
#include "scenario/simulation_spec.hpp"

namespace sightline {

namespace {

std::string num(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

struct RangeCheck {
  const json& on;
  std::vector<std::string>& out;
  // value outside on[key] = [lo, hi] (a small slack for rounded lengths).
  void range(const char* key, double value, const std::string& path, const char* what) {
    const json& r = on.contains(key) ? on[key] : json(nullptr);
    if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number()) {
      out.push_back("calibration_out_of_range at " + path + ": the calibration was fitted on no run with a " + what +
                    "; this scenario's " + num(value) + " is an extrapolation");
      return;
    }
    const double lo = r[0].get<double>(), hi = r[1].get<double>();
    if (value < lo * (1 - 1e-6) || value > hi * (1 + 1e-6))
      out.push_back("calibration_out_of_range at " + path + ": " + what + " " + num(value) +
                    " is outside the range the calibration was fitted on [" + num(lo) + ", " + num(hi) +
                    "]; its factors are an extrapolation here");
  }
  void same(const char* key, const std::string& value, const std::string& path, const char* what) {
    if (!on.contains(key) || on[key].is_null()) return;
    const json& v = on[key];
    const bool listed = v.is_array() ? std::find(v.begin(), v.end(), json(value)) != v.end()
                                     : (v.is_string() && v.get<std::string>() == value);
    if (!listed)
      out.push_back("calibration_out_of_range at " + path + ": the calibration was fitted on " + what + " " +
                    safe_dump(v) + ", not '" + value + "'; its factors may not transfer");
  }
};

}  // namespace

std::vector<std::string> calibration_range_warnings(const Scenario& s) {
  std::vector<std::string> out;
  const auto& c = s.cost_model.cluster_calibration;
  if (!c || !c->fit.is_object() || !c->fit.contains("fitted_on") || !c->fit["fitted_on"].is_object()) return out;
  const json& on = c->fit["fitted_on"];
  RangeCheck check{on, out};
  check.same("models", s.model.id, "/model", "model");
  check.same("gpu", s.hardware.gpu.id, "/hardware/gpu", "GPU");
  check.same("software_stack", s.cost_model.software_stack.id, "/cost_model/software_stack", "software stack");
  if (s.training) {
    out.push_back("calibration_out_of_range at /training: the calibration was fitted on serving benchmarks; a "
                  "training step is outside what it was fitted on");
    return out;
  }
  if (!s.serving) return out;
  if (s.serving->mode == "simulate" && s.serving->simulation) {
    const serve::WorkloadSpec& w = s.serving->simulation->workload;
    const bool open_loop = w.arrival.process == serve::ArrivalProcess::Poisson ||
                           w.arrival.process == serve::ArrivalProcess::Gamma ||
                           w.arrival.process == serve::ArrivalProcess::Fixed;
    if (open_loop) check.range("rate_qps", w.arrival.rate_qps, "/serving/workload/arrival/rate_qps", "request rate (req/s)");
    if (w.arrival.process == serve::ArrivalProcess::ClosedLoop)
      check.range("concurrency", static_cast<double>(w.arrival.concurrency), "/serving/workload/arrival/concurrency",
                  "concurrency (clients)");
    if (auto p = w.prompt.typical()) check.range("prompt_tokens", *p, "/serving/workload/prompt_tokens", "prompt length (tokens)");
    if (auto o = w.output.typical()) check.range("output_tokens", *o, "/serving/workload/output_tokens", "output length (tokens)");
  } else {
    check.range("prompt_tokens", static_cast<double>(s.serving->workload.prompt_tokens), "/serving/workload/prompt_tokens",
                "prompt length (tokens)");
    check.range("output_tokens", static_cast<double>(s.serving->workload.output_tokens), "/serving/workload/output_tokens",
                "output length (tokens)");
  }
  return out;
}

}  // namespace sightline
