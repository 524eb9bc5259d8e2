#include "scenario/scenario.hpp"

#include "core/error.hpp"
#include "mem/inference_memory.hpp"

namespace sightline {

namespace {

HardwareSpec read_hardware(const json& v, const std::string& path) {
  ObjectReader r(v, path, {"gpu", "gpus_per_node", "nodes", "intra_node", "inter_node"});
  HardwareSpec h;
  h.gpu = read_gpu(r.required("gpu"), r.child_path("gpu"));
  h.gpus_per_node = static_cast<int>(r.integer("gpus_per_node", 1, 1024, 1));
  h.nodes = static_cast<int>(r.integer("nodes", 1, 100000, 1));
  if (const json* intra = r.find("intra_node")) {
    h.intra_node = read_interconnect(*intra, r.child_path("intra_node"));
    if (h.intra_node->scope != "intra_node")
      fail(error_code::kConstraint, r.child_path("intra_node"),
           "interconnect '" + h.intra_node->id + "' is an inter-node network; use it as inter_node");
  }
  if (const json* inter = r.find("inter_node")) {
    h.inter_node = read_interconnect(*inter, r.child_path("inter_node"));
    if (h.inter_node->scope != "inter_node")
      fail(error_code::kConstraint, r.child_path("inter_node"),
           "interconnect '" + h.inter_node->id + "' links GPUs inside a node; use it as intra_node");
  }
  if (h.gpus_per_node > 1 && !h.intra_node)
    fail(error_code::kMissingKey, r.child_path("intra_node"),
         "intra_node is required when gpus_per_node > 1 (e.g. \"nvlink3-nvswitch\" or \"pcie4\")");
  if (h.nodes > 1 && !h.inter_node)
    fail(error_code::kMissingKey, r.child_path("inter_node"),
         "inter_node is required when nodes > 1 (e.g. \"ib-ndr\")");
  return h;
}

Precision read_precision(const json* v, const std::string& path, const GpuSpec& gpu) {
  Precision p;
  if (!v) {
    p.activations = gpu.peak_tflops.bf16 > 0 ? Dtype::BF16 : Dtype::FP16;
    p.weights = p.kv_cache = p.activations;
    return p;
  }
  ObjectReader r(*v, path, {"weights", "activations", "kv_cache", "weight_group_size"});
  const std::string default_act = gpu.peak_tflops.bf16 > 0 ? "bf16" : "fp16";
  p.activations = parse_dtype(r.choice("activations", {"fp32", "bf16", "fp16", "fp8"}, default_act));
  p.weights = parse_dtype(r.choice("weights", dtype_names(), dtype_name(p.activations)));
  p.kv_cache = parse_dtype(r.choice("kv_cache", {"fp32", "bf16", "fp16", "fp8", "int8"},
                                    dtype_name(p.activations == Dtype::FP8 ? Dtype::BF16 : p.activations)));
  p.weight_group_size = static_cast<int>(r.integer("weight_group_size", 0, 1 << 20, 128));
  if (p.weight_group_size != 0 && (p.weight_group_size & (p.weight_group_size - 1)) != 0)
    fail(error_code::kInvalidValue, r.child_path("weight_group_size"),
         "weight_group_size must be 0 (per-channel) or a power of two");
  if (p.activations == Dtype::BF16 && gpu.peak_tflops.bf16 <= 0)
    fail(error_code::kConstraint, r.child_path("activations"),
         gpu.name + " has no bf16 support; use fp16 activations");
  if (p.activations == Dtype::FP8 && gpu.peak_tflops.fp8 <= 0)
    fail(error_code::kConstraint, r.child_path("activations"), gpu.name + " has no fp8 tensor cores");
  if (p.weights == Dtype::FP8 && p.activations != Dtype::FP8 && gpu.peak_tflops.fp8 <= 0)
    fail(error_code::kConstraint, r.child_path("weights"),
         gpu.name + " has no fp8 support; fp8 weights need fp8 tensor cores or use int8/int4 weight-only");
  if (p.weights == Dtype::FP32 && p.activations != Dtype::FP32)
    fail(error_code::kConstraint, r.child_path("weights"),
         "fp32 weights with lower-precision activations is not a serving format; use fp32 activations");
  return p;
}

void check_tensor_parallel(const ModelArch& m, int tp, const std::string& tp_path) {
  if (m.num_heads % tp != 0)
    fail(error_code::kConstraint, tp_path,
         "tp (" + std::to_string(tp) + ") must divide num_heads (" + std::to_string(m.num_heads) + ")");
  if (!m.mla.enabled) {
    const bool divides = m.num_kv_heads % tp == 0;
    const bool replicates = tp % m.num_kv_heads == 0;
    if (!divides && !replicates)
      fail(error_code::kConstraint, tp_path,
           "tp (" + std::to_string(tp) + ") must divide num_kv_heads (" + std::to_string(m.num_kv_heads) +
               ") or be a multiple of it (KV heads are then replicated)");
  }
}

ServingSpec read_serving(const json& v, const std::string& path, const Scenario& s) {
  ObjectReader r(v, path, {"mode", "parallelism", "workload", "attention", "runtime_overhead_GiB"});
  ServingSpec sv;
  sv.mode = r.choice("mode", {"latency", "simulate"}, "latency");
  if (sv.mode == "simulate")
    fail(error_code::kNotImplemented, r.child_path("mode"),
         "the serving simulator (mode \"simulate\") is not in this engine version yet; use mode \"latency\"");
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
  const double kv = kv_bytes_per_token_per_gpu(s.model, s.precision, sv.parallelism.tp, static_cast<int>(layers_per_gpu)) *
                    static_cast<double>(sv.workload.batch_size) *
                    static_cast<double>(sv.workload.prompt_tokens + sv.workload.output_tokens) / kBytesPerGiB;
  const double act = activation_peak_bytes(s.model, s.precision, sv.parallelism.tp,
                                           sv.workload.batch_size * sv.workload.prompt_tokens,
                                           sv.workload.batch_size) / kBytesPerGiB;
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

}  // namespace

Scenario read_scenario(const json& doc) {
  ObjectReader r(doc, "", {"schema_version", "id", "title", "source", "seed", "model", "hardware", "precision",
                           "serving", "training"});
  Scenario s;
  const int64_t version = r.integer("schema_version", 1, 1000, kScenarioSchemaVersion);
  if (version != kScenarioSchemaVersion)
    fail(error_code::kInvalidValue, r.child_path("schema_version"),
         "this engine reads scenario schema_version " + std::to_string(kScenarioSchemaVersion) + ", got " +
             std::to_string(version));
  s.id = r.string("id", "custom");
  s.title = r.string("title", "");
  s.source = r.string("source", "");
  s.seed = static_cast<uint64_t>(r.integer("seed", 0, (int64_t{1} << 53), 0));
  s.model = read_model(r.required("model"), r.child_path("model"));
  s.hardware = read_hardware(r.required("hardware"), r.child_path("hardware"));
  s.precision = read_precision(r.find("precision"), r.child_path("precision"), s.hardware.gpu);
  const bool serving = r.has("serving");
  const bool training = r.has("training");
  if (serving == training)
    fail(serving ? error_code::kConstraint : error_code::kMissingKey, serving ? r.child_path("training") : "/serving",
         "a scenario has exactly one of 'serving' or 'training'");
  if (training)
    fail(error_code::kNotImplemented, r.child_path("training"),
         "the training estimator is not in this engine version yet");
  s.serving = read_serving(r.required("serving"), r.child_path("serving"), s);
  return s;
}

json scenario_to_json(const Scenario& s) {
  json j = {{"schema_version", kScenarioSchemaVersion}, {"id", s.id}, {"title", s.title}, {"seed", s.seed}};
  j["model"] = s.model.to_json();
  json hw = {{"gpu", s.hardware.gpu.to_json()},
             {"gpus_per_node", s.hardware.gpus_per_node},
             {"nodes", s.hardware.nodes}};
  hw["intra_node"] = s.hardware.intra_node ? s.hardware.intra_node->to_json() : json(nullptr);
  hw["inter_node"] = s.hardware.inter_node ? s.hardware.inter_node->to_json() : json(nullptr);
  j["hardware"] = hw;
  j["precision"] = {{"weights", dtype_name(s.precision.weights)},
                    {"activations", dtype_name(s.precision.activations)},
                    {"kv_cache", dtype_name(s.precision.kv_cache)},
                    {"weight_group_size", s.precision.weight_group_size}};
  if (s.serving) {
    const auto& sv = *s.serving;
    j["serving"] = {{"mode", sv.mode},
                    {"parallelism", {{"tp", sv.parallelism.tp}, {"pp", sv.parallelism.pp}}},
                    {"workload",
                     {{"prompt_tokens", sv.workload.prompt_tokens},
                      {"output_tokens", sv.workload.output_tokens},
                      {"batch_size", sv.workload.batch_size}}},
                    {"attention", sv.attention == AttentionImpl::Flash ? "flash" : "standard"},
                    {"runtime_overhead_GiB", sv.runtime_overhead_GiB}};
  }
  return j;
}

}  // namespace sightline
