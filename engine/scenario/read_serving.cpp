#include "scenario/serving_spec.hpp"

#include "model/kv_footprint.hpp"

#include "core/error.hpp"
#include "mem/inference_memory.hpp"
#include "scenario/checks.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_spec.hpp"

namespace sightline {

namespace {

ServingSpec read_simulate(const json& v, const std::string& path, const Scenario& s) {
  ServingSpec sv;
  sv.mode = "simulate";
  sv.simulation = serve::read_simulation(v, path, s, sv.parallelism);
  ObjectReader r(v, path,
                 {"mode", "parallelism", "attention", "runtime_overhead_GiB", "workload", "cluster", "scheduler",
                  "kv_cache", "speculative", "lora", "moe", "colocated_model", "slo", "max_qps_search",
                  "steady_state", "compare", "key_metrics", "outputs", "limits"});
  sv.attention = r.choice("attention", {"flash", "standard"}, "flash") == "flash" ? AttentionImpl::Flash
                                                                                  : AttentionImpl::Standard;
  sv.runtime_overhead_GiB = r.number("runtime_overhead_GiB", 0, 1e4, 1.0);
  return sv;
}

}  // namespace

ServingSpec read_serving(const json& v, const std::string& path, const Scenario& s) {
  if (v.is_object() && v.contains("mode") && v["mode"].is_string() && v["mode"].get<std::string>() == "simulate")
    return read_simulate(v, path, s);
  ObjectReader r(v, path, {"mode", "parallelism", "workload", "attention", "runtime_overhead_GiB"});
  ServingSpec sv;
  sv.mode = r.choice("mode", {"latency", "simulate"}, "latency");
  if (const json* par = r.find("parallelism")) {
    ObjectReader pr(*par, r.child_path("parallelism"), {"tp", "pp"});
    sv.parallelism.tp = static_cast<int>(pr.integer("tp", 1, 1024, 1));
    sv.parallelism.pp = static_cast<int>(pr.integer("pp", 1, 1024, 1));
  }
  const std::string par_path = r.child_path("parallelism");
  const std::string tp_path = pointer_append(par_path, "tp");
  const std::string pp_path = pointer_append(par_path, "pp");
  check_tensor_parallel(s.model, sv.parallelism.tp, tp_path);
  if (s.model.num_layers % sv.parallelism.pp != 0)
    fail(error_code::kConstraint, pp_path,
         "pp (" + std::to_string(sv.parallelism.pp) + ") must divide num_layers (" +
             std::to_string(s.model.num_layers) + ")");
  const int used = sv.parallelism.tp * sv.parallelism.pp;
  if (used != s.hardware.total_gpus())
    fail(error_code::kConstraint, tp_path,
         "tp × pp = " + std::to_string(used) + " GPUs, but the hardware has " +
             std::to_string(s.hardware.total_gpus()) + " (gpus_per_node × nodes); they must match");
  if (sv.parallelism.tp > s.hardware.gpus_per_node)
    fail(error_code::kConstraint, tp_path,
         "tp (" + std::to_string(sv.parallelism.tp) + ") must fit inside one node (gpus_per_node = " +
             std::to_string(s.hardware.gpus_per_node) + ")");

  ObjectReader w(r.required("workload"), r.child_path("workload"), {"prompt_tokens", "output_tokens", "batch_size"});
  sv.workload.prompt_tokens = w.integer("prompt_tokens", 1, 16 << 20);
  sv.workload.output_tokens = w.integer("output_tokens", 1, 1 << 20);
  sv.workload.batch_size = w.integer("batch_size", 1, 1 << 16, 1);
  if (sv.workload.prompt_tokens + sv.workload.output_tokens > s.model.max_context)
    fail(error_code::kConstraint, w.child_path("output_tokens"),
         "prompt_tokens + output_tokens = " + std::to_string(sv.workload.prompt_tokens + sv.workload.output_tokens) +
             " exceeds the model's max_context (" + std::to_string(s.model.max_context) + ")");
  sv.attention = r.choice("attention", {"flash", "standard"}, "flash") == "flash" ? AttentionImpl::Flash
                                                                                  : AttentionImpl::Standard;
  sv.runtime_overhead_GiB = r.number("runtime_overhead_GiB", 0, 1e4, 1.0);

  // Everything must fit: weights, the batch's full KV cache, the prefill peak and the runtime.
  const double cap = s.hardware.gpu.memory_GiB;
  const double weights = weight_bytes_per_gpu(s.model, s.precision, sv.parallelism) / kBytesPerGiB;
  const double layers_per_gpu = s.model.num_layers / sv.parallelism.pp;
  const double kv = kv_footprint_per_gpu(s.model, s.precision, sv.parallelism.tp, layers_per_gpu / s.model.num_layers)
                        .bytes_for_tokens(sv.workload.prompt_tokens + sv.workload.output_tokens) *
                    static_cast<double>(sv.workload.batch_size) / kBytesPerGiB;
  const double act = activation_peak_bytes(s.model, s.precision, sv.parallelism.tp,
                                           sv.workload.batch_size * sv.workload.prompt_tokens,
                                           sv.workload.batch_size, s.cost_model.software_stack.sampler_bytes_per_logit) /
                     kBytesPerGiB;
  if (weights + sv.runtime_overhead_GiB > cap)
    fail(error_code::kDoesNotFit, tp_path,
         "weights need " + std::to_string(weights) + " GiB per GPU (+" + std::to_string(sv.runtime_overhead_GiB) +
             " GiB runtime) but a " + s.hardware.gpu.name + " has " + std::to_string(cap) +
             " GiB; raise tp/pp or quantize the weights");
  if (weights + kv + act + sv.runtime_overhead_GiB > cap)
    fail(error_code::kDoesNotFit, w.child_path("batch_size"),
         "weights " + std::to_string(weights) + " GiB + KV cache " + std::to_string(kv) + " GiB + activations " +
             std::to_string(act) + " GiB + runtime " + std::to_string(sv.runtime_overhead_GiB) + " GiB exceed the " +
             std::to_string(cap) + " GiB of a " + s.hardware.gpu.name + "; lower batch_size or sequence lengths");
  return sv;
}

json serving_to_json(const ServingSpec& sv) {
  if (sv.simulation) {
    json j = serve::simulation_to_json(*sv.simulation);
    j["mode"] = sv.mode;
    j["attention"] = sv.attention == AttentionImpl::Flash ? "flash" : "standard";
    j["runtime_overhead_GiB"] = sv.runtime_overhead_GiB;
    // The cluster's pools carry the layout; parallelism would conflict with them on re-reading.
    return j;
  }
  return {{"mode", sv.mode},
          {"parallelism", {{"tp", sv.parallelism.tp}, {"pp", sv.parallelism.pp}}},
          {"workload",
           {{"prompt_tokens", sv.workload.prompt_tokens},
            {"output_tokens", sv.workload.output_tokens},
            {"batch_size", sv.workload.batch_size}}},
          {"attention", sv.attention == AttentionImpl::Flash ? "flash" : "standard"},
          {"runtime_overhead_GiB", sv.runtime_overhead_GiB}};
}

}  // namespace sightline
