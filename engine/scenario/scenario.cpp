#include "scenario/scenario.hpp"
#include "scenario/simulation_spec.hpp"

#include <functional>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/parameter_schema.hpp"
#include "perf/calibration.hpp"
#include "presets/preset_store.hpp"
#include "scenario/run_limits.hpp"
#include "scenario/serving_spec.hpp"
#include "scenario/training_spec.hpp"

namespace sightline {

namespace {

HardwareSpec read_hardware(const json& v, const std::string& path) {
  ObjectReader r(v, path, {"gpu", "gpus_per_node", "nodes", "intra_node", "inter_node"});
  HardwareSpec h;
  for (const char* key : {"gpu", "intra_node", "inter_node"}) record_parameter(r.child_path(key), "preset");
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
  check_link_domain(h, r.child_path("gpus_per_node"));
  return h;
}

Precision read_precision(const json* v, const std::string& path, const GpuSpec& gpu, const ModelArch& model) {
  Precision p;
  const json empty = json::object();
  ObjectReader r(v ? *v : empty, path, {"weights", "activations", "kv_cache", "weight_group_size", "fp8_scaling"});
  const std::string default_act = gpu.peak_tflops.bf16 > 0 ? "bf16" : "fp16";
  p.activations = parse_dtype(r.choice("activations", {"fp32", "bf16", "fp16", "fp8"}, default_act));
  // A checkpoint's own quantization (quantization_config / hf_quant_config)
  // is the default; the scenario's precision overrides it.
  const CheckpointQuant& q = model.quant;
  const bool ckpt_weights = !q.weights_dtype.empty() && !r.has("weights");
  p.weights = parse_dtype(r.choice("weights", dtype_names(), ckpt_weights ? q.weights_dtype : dtype_name(p.activations)));
  const bool ckpt_kv = !q.kv_cache_dtype.empty() && !r.has("kv_cache");
  p.kv_cache = parse_dtype(r.choice("kv_cache", {"fp32", "bf16", "fp16", "fp8", "int8"},
                                    ckpt_kv ? q.kv_cache_dtype
                                            : dtype_name(p.activations == Dtype::FP8 ? Dtype::BF16 : p.activations)));
  p.weight_group_size = static_cast<int>(
      r.integer("weight_group_size", 0, 1 << 20, ckpt_weights && q.group_size > 0 ? q.group_size : 128));
  // The checkpoint's layout (unquantized modules, zero points) holds only for its own weights.
  if (ckpt_weights) {
    const int group = p.weight_group_size;
    apply_checkpoint_layout(q, p);
    p.weight_group_size = group;  // the scenario's weight_group_size, if given, wins
  }
  p.fp4_tensor_cores = gpu.peak_tflops.fp4 > 0;
  if (ckpt_weights || ckpt_kv) p.from_checkpoint = q.applied;
  if (ckpt_weights && p.weights == Dtype::FP8 && gpu.peak_tflops.fp8 <= 0)
    fail(error_code::kConstraint, pointer_append(path, "weights"),
         gpu.name + " has no fp8 support but the model's config ships fp8 weights (" + q.applied +
             "); set precision.weights (e.g. \"bf16\" or \"int8\") to price another format");
  if (p.weight_group_size != 0 && (p.weight_group_size & (p.weight_group_size - 1)) != 0)
    fail(error_code::kInvalidValue, r.child_path("weight_group_size"),
         "weight_group_size must be 0 (per-channel) or a power of two");
  check_precision_on_gpu(p, gpu, [&r](const char* key) { return r.child_path(key); });
  // How FP8 weights and activations are scaled: "tensor" (per tensor or per
  // channel: cuBLASLt / CUTLASS GEMMs) or "block" (1x128 activation and
  // 128x128 weight blocks, DeepSeek-V3/R1's native checkpoints: DeepGEMM-style
  // GEMMs that write their output after the main loop, model/operators.hpp).
  p.fp8_block_scaled = r.choice("fp8_scaling", {"tensor", "block"}, "tensor") == "block";
  if (p.fp8_block_scaled && (p.weights != Dtype::FP8 || p.activations != Dtype::FP8))
    fail(error_code::kConstraint, r.child_path("fp8_scaling"),
         "fp8_scaling \"block\" scales FP8 weights and activations; this precision has " + dtype_name(p.weights) +
             " weights and " + dtype_name(p.activations) + " activations (use \"tensor\" or set both to \"fp8\")");
  if (p.weights == Dtype::FP32 && p.activations != Dtype::FP32)
    fail(error_code::kConstraint, r.child_path("weights"),
         "fp32 weights with lower-precision activations is not a serving format; use fp32 activations");
  return p;
}


CostModelSpec read_cost_model(const json* v, const std::string& path, const GpuSpec& gpu) {
  CostModelSpec c;
  const json empty = json::object();
  ObjectReader r(v ? *v : empty, path, {"tier", "software_stack", "gpu_hour_usd", "calibration", "intervals"});
  c.tier = r.choice("tier", {"auto", "target-measured", "cross-generation", "roofline"}, "auto");
  if (c.tier == "target-measured" && !own_calibration(gpu)) {
    std::string ids;
    for (const json* p : list_presets("calibrations")) ids += (ids.empty() ? "" : ", ") + p->at("id").get<std::string>();
    fail(error_code::kConstraint, r.child_path("tier"),
         "GPU '" + gpu.id + "' names no kernel calibration (its \"calibration\" value), so it has no target-measured tier; calibrations: " +
             ids + ". Use \"cross-generation\" or calibrate it with `sightline calibrate`");
  }
  c.software_stack = read_software_stack(r.find("software_stack") ? *r.find("software_stack") : json(kDefaultSoftwareStack),
                                         r.child_path("software_stack"));
  c.gpu_hour_usd = r.number("gpu_hour_usd", 0, 1e6, 0);
  c.intervals = r.choice("intervals", {"auto", "full", "reduced"}, "auto");
  if (const json* cal = r.find("calibration")) c.cluster_calibration = ClusterCalibration::from_json(*cal, r.child_path("calibration"));
  return c;
}

}  // namespace

void check_precision_on_gpu(const Precision& p, const GpuSpec& gpu,
                            const std::function<std::string(const char*)>& where) {
  if (p.activations == Dtype::BF16 && gpu.peak_tflops.bf16 <= 0)
    fail(error_code::kConstraint, where("activations"), gpu.name + " has no bf16 support; use fp16 activations");
  if (p.activations == Dtype::FP8 && gpu.peak_tflops.fp8 <= 0)
    fail(error_code::kConstraint, where("activations"), gpu.name + " has no fp8 tensor cores");
  if (p.weights == Dtype::FP8 && p.activations != Dtype::FP8 && gpu.peak_tflops.fp8 <= 0)
    fail(error_code::kConstraint, where("weights"),
         gpu.name + " has no fp8 support; fp8 weights need fp8 tensor cores or use int8/int4 weight-only");
  if (gpu.peak_tflops_for(p.activations) <= 0 && !(p.activations == Dtype::BF16 && gpu.peak_tflops.bf16 > 0))
    fail(error_code::kConstraint, where("activations"),
         gpu.name + " has no " + dtype_name(p.activations) + " support for this scenario's activations");
}

Scenario read_scenario(const json& doc) {
  ObjectReader r(doc, "", {"schema_version", "id", "title", "source", "seed", "model", "hardware", "precision",
                           "cost_model", "serving", "training", "limits"});
  // The work budget is the caller's to apply (scenario/run_limits.hpp); here it is only checked.
  if (r.has("limits")) read_max_work_units(r.required("limits"), r.child_path("limits"), 1, RunLimits::kNativeCeiling);
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
  record_parameter(r.child_path("model"), "preset");
  s.model = read_model(r.required("model"), r.child_path("model"));
  s.hardware = read_hardware(r.required("hardware"), r.child_path("hardware"));
  s.precision = read_precision(r.find("precision"), r.child_path("precision"), s.hardware.gpu, s.model);
  // FP4 weights on a GPU without FP4 tensor cores run weight-only (dequantized
  // to the activation dtype, priced so); say it, the speed-up a reader expects is absent.
  if (is_fp4(s.precision.weights) && !s.precision.fp4_tensor_cores)
    s.warnings.push_back(s.hardware.gpu.name + " has no FP4 tensor cores: " +
                                      dtype_name(s.precision.weights) + " weights are dequantized to " +
                                      dtype_name(s.precision.activations) +
                                      " and priced weight-only (memory and bandwidth of FP4, compute at the " +
                                      dtype_name(s.precision.activations) + " peak)");
  s.cost_model = read_cost_model(r.find("cost_model"), r.child_path("cost_model"), s.hardware.gpu);
  const bool serving = r.has("serving");
  const bool training = r.has("training");
  if (serving == training)
    fail(serving ? error_code::kConstraint : error_code::kMissingKey, serving ? r.child_path("training") : "/serving",
         "a scenario has exactly one of 'serving' or 'training'");
  if (training) s.training = read_training(r.required("training"), r.child_path("training"), s);
  else s.serving = read_serving(r.required("serving"), r.child_path("serving"), s);
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
  if (s.precision.fp8_block_scaled) j["precision"]["fp8_scaling"] = "block";
  j["cost_model"] = {{"tier", s.cost_model.tier},
                     {"software_stack", s.cost_model.software_stack.to_json()},
                     {"gpu_hour_usd", s.cost_model.gpu_hour_usd}};
  if (s.cost_model.intervals != "auto") j["cost_model"]["intervals"] = s.cost_model.intervals;
  if (s.cost_model.cluster_calibration) j["cost_model"]["calibration"] = s.cost_model.cluster_calibration->to_json();
  if (s.serving) j["serving"] = serving_to_json(*s.serving);
  if (s.training) j["training"] = training_to_json(*s.training);
  // The resolved scenario is itself a scenario (compare variants and callers
  // read it back), so what is absent is left out rather than written as null.
  j = without_nulls(std::move(j));
  // A comparison patch was written against the user's scenario; applied to this
  // resolved one it can clash with what resolving filled in (a default
  // parallelism beside a patched cluster). Each variant's patch is rewritten
  // as the merge patch from this resolved scenario to the variant's own, so the
  // round trip reads the same variants.
  if (s.serving && s.serving->simulation && !s.serving->simulation->compares.empty()) {
    const serve::SimulationSpec& sp = *s.serving->simulation;
    json base = j;
    base["serving"].erase("compare");
    for (size_t i = 0; i < sp.compares.size(); ++i) {
      if (!sp.compares[i].scenario) continue;
      json patch = merge_patch_between(base, scenario_to_json(*sp.compares[i].scenario));
      if (sp.compare_is_array) j["serving"]["compare"][i]["patch"] = std::move(patch);
      else j["serving"]["compare"]["patch"] = std::move(patch);
    }
  }
  // The same for a training variant's configuration, written in full above:
  // merged onto the base, a full copy would keep the base's keys that the
  // variant dropped (every_n_layers beside a "selective" recompute).
  if (s.training && !s.training->compare.empty() && j["training"].contains("compare")) {
    auto config_only = [](json t) {
      for (const char* k : {"key_metrics", "compare", "scaling"}) t.erase(k);
      return t;
    };
    const json base = config_only(j["training"]);
    json& list = j["training"]["compare"];
    for (size_t i = 0; i < s.training->compare.size() && i < list.size(); ++i)
      if (list[i].contains("training")) list[i]["training"] = merge_patch_between(base, list[i]["training"]);
  }
  return j;
}

}  // namespace sightline
