#include "cli/validation_runs.hpp"

#include <algorithm>
#include <cmath>

#include "api/api.hpp"
#include "core/json_text.hpp"

namespace sightline::cli {

bool run_scenario_text(const std::string& scenario_text, json& result, json& resolved, json& error) {
  json e = read_engine_envelope(sightline::api::run_scenario(scenario_text));
  if (!e["ok"].get<bool>()) {
    error = e["error"];
    return false;
  }
  result = e["result"];
  json v = read_engine_envelope(sightline::api::validate_scenario(scenario_text));
  resolved = v["result"];
  return true;
}

bool preset_text(const std::string& kind, const std::string& id, std::string& text, json& error) {
  json p = read_engine_envelope(sightline::api::get_preset(kind, id));
  if (!p["ok"].get<bool>()) {
    error = p["error"];
    return false;
  }
  text = safe_dump(p["result"]);
  return true;
}

double megatron_flops_per_step(const json& scenario) {
  const json& m = scenario["model"];
  const double B = scenario["training"]["batch"]["global_batch_size"].get<double>();
  const double s = scenario["training"]["batch"]["seq_len"].get<double>();
  const double l = m["num_layers"].get<double>();
  const double h = m["hidden_size"].get<double>();
  const double V = std::ceil(m["vocab_size"].get<double>() / 1024.0) * 1024.0;
  return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

double megatron_tflops_per_gpu(const json& scenario, const json& result) {
  return megatron_flops_per_step(scenario) / (result["metrics"]["step_time_ms"].get<double>() / 1e3) /
         result["deployment"]["gpus"].get<double>() / 1e12;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace sightline::cli
