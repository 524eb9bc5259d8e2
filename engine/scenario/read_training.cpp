#include "scenario/training_spec.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/parameter_schema.hpp"
#include "perf/calibration.hpp"
#include "scenario/checks.hpp"
#include "scenario/scenario.hpp"
#include "scenario/metric_catalogue.hpp"
#include "scenario/training_checks.hpp"

namespace sightline {

std::string schedule_name(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::GPipe: return "gpipe";
    case PipelineSchedule::OneFOneB: return "1f1b";
    case PipelineSchedule::Interleaved: return "interleaved_1f1b";
  }
  return "?";
}

std::string recompute_name(RecomputeMode m) {
  switch (m) {
    case RecomputeMode::None: return "none";
    case RecomputeMode::Selective: return "selective";
    case RecomputeMode::SelectiveOp: return "selective_op";
    case RecomputeMode::Full: return "full";
  }
  return "?";
}

std::string fp8_name(Fp8Gemms f) {
  switch (f) {
    case Fp8Gemms::None: return "none";
    case Fp8Gemms::Mlp: return "mlp";
    case Fp8Gemms::Layers: return "layers";
    case Fp8Gemms::All: return "all";
  }
  return "?";
}

std::string optimizer_name(OptimizerKind k) {
  switch (k) {
    case OptimizerKind::AdamW: return "adamw";
    case OptimizerKind::SgdMomentum: return "sgd_momentum";
    case OptimizerKind::Adafactor: return "adafactor";
  }
  return "?";
}

bool LoraSpec::has_target(const std::string& t) const {
  return enabled && std::find(targets.begin(), targets.end(), t) != targets.end();
}

namespace {

const std::vector<std::string> kLoraTargets = {"q", "k", "v", "o", "up", "gate", "down"};
const std::vector<std::string> kRecomputeModules = {"core_attn", "layernorm", "mlp_act"};
const std::vector<std::string> kMetaKeys = {"key_metrics", "compare", "scaling"};

std::string str(int64_t v) { return std::to_string(v); }

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::vector<std::string> read_string_list(const json& value, const std::string& path,
                                          const std::vector<std::string>& allowed, bool allow_empty) {
  if (!value.is_array()) fail(error_code::kType, path, "expected an array of strings, got " + json_type_name(value));
  if (!allow_empty && value.empty()) fail(error_code::kInvalidValue, path, "the list must not be empty");
  std::vector<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string p = pointer_append(path, i);
    if (!value[i].is_string()) fail(error_code::kType, p, "expected a string, got " + json_type_name(value[i]));
    const std::string s = value[i].get<std::string>();
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), s) == allowed.end())
      fail(error_code::kInvalidValue, p, "unknown value '" + s + "'; valid: " + join(allowed));
    if (std::find(out.begin(), out.end(), s) != out.end()) fail(error_code::kInvalidValue, p, "'" + s + "' is listed twice");
    out.push_back(s);
  }
  return out;
}

void read_parallelism(const json* v, const std::string& path, TrainParallelism& p) {
  if (!v) return;
  ObjectReader r(*v, path, {"dp", "tp", "pp", "cp", "ep", "sequence_parallel", "virtual_stages", "zero_stage", "fsdp",
                            "placement", "stage_layers"});
  p.dp = static_cast<int>(r.integer("dp", 1, 1 << 20, 1));
  p.tp = static_cast<int>(r.integer("tp", 1, 1024, 1));
  p.pp = static_cast<int>(r.integer("pp", 1, 1024, 1));
  p.cp = static_cast<int>(r.integer("cp", 1, 1024, 1));
  p.ep = static_cast<int>(r.integer("ep", 1, 1024, 1));
  p.sequence_parallel = r.boolean("sequence_parallel", false);
  p.virtual_stages = static_cast<int>(r.integer("virtual_stages", 1, 64, 1));
  const bool has_zero = r.has("zero_stage");
  p.zero_stage = static_cast<int>(r.integer("zero_stage", 0, 3, 0));
  if (r.has("fsdp")) {
    const bool fsdp = r.boolean("fsdp");
    if (has_zero && fsdp != (p.zero_stage == 3))
      fail(error_code::kConstraint, r.child_path("fsdp"),
           "fsdp: " + std::string(fsdp ? "true" : "false") + " contradicts zero_stage " + str(p.zero_stage) +
               " (fsdp is ZeRO stage 3)");
    if (fsdp) p.zero_stage = 3;
  }
  if (const json* sl = r.find("stage_layers")) {
    const std::string sp = r.child_path("stage_layers");
    if (!sl->is_array() || sl->empty())
      fail(error_code::kType, sp, "stage_layers must be a non-empty array of layer counts, one per model chunk");
    for (size_t i = 0; i < sl->size(); ++i) {
      const json& n = (*sl)[i];
      const std::string ip = sp + "/" + std::to_string(i);
      if (!n.is_number_integer()) fail(error_code::kType, ip, "a layer count must be an integer");
      if (n.get<int64_t>() < 0 || n.get<int64_t>() > 100000)
        fail(error_code::kRange, ip, "a layer count must be between 0 and 100000");
      p.stage_layers.push_back(static_cast<int>(n.get<int64_t>()));
    }
  }
  if (const json* pl = r.find("placement")) {
    p.placement = read_string_list(*pl, r.child_path("placement"), {"tp", "cp", "dp", "pp"}, false);
    if (p.placement.size() != 4)
      fail(error_code::kInvalidValue, r.child_path("placement"),
           "placement lists the mesh axes innermost first and must name each of tp, cp, dp, pp once");
  }
}

void read_batch(const json& v, const std::string& path, TrainBatch& b, bool& has_gbs, bool& has_ga) {
  ObjectReader r(v, path, {"seq_len", "micro_batch_size", "global_batch_size", "gradient_accumulation"});
  b.seq_len = r.integer("seq_len", 1, int64_t{16} << 20);
  b.micro_batch_size = r.integer("micro_batch_size", 1, 1 << 16, 1);
  has_gbs = r.has("global_batch_size");
  has_ga = r.has("gradient_accumulation");
  b.global_batch_size = r.integer("global_batch_size", 1, int64_t{1} << 32, 0);
  b.gradient_accumulation = r.integer("gradient_accumulation", 1, int64_t{1} << 24, 1);
}

void read_recompute(const json* v, const std::string& path, RecomputeSpec& rc) {
  if (!v) return;
  const std::vector<std::string> modes = {"none", "selective", "selective_op", "full"};
  auto parse_mode = [](const std::string& m) {
    if (m == "selective") return RecomputeMode::Selective;
    if (m == "selective_op") return RecomputeMode::SelectiveOp;
    if (m == "full") return RecomputeMode::Full;
    return RecomputeMode::None;
  };
  if (v->is_string()) {
    const std::string m = v->get<std::string>();
    if (std::find(modes.begin(), modes.end(), m) == modes.end())
      fail(error_code::kInvalidValue, path, "unknown recompute mode '" + m + "'; valid: " + join(modes));
    rc.mode = parse_mode(m);
    return;
  }
  ObjectReader r(*v, path, {"mode", "modules", "every_n_layers"});
  rc.mode = parse_mode(r.choice("mode", modes));
  record_parameter(r.child_path("modules"), "list", kRecomputeModules);
  if (const json* mods = r.find("modules")) {
    if (rc.mode != RecomputeMode::Selective)
      fail(error_code::kConstraint, r.child_path("modules"), "modules apply to mode \"selective\" only");
    const auto list = read_string_list(*mods, r.child_path("modules"), kRecomputeModules, true);
    rc.core_attn = std::find(list.begin(), list.end(), "core_attn") != list.end();
    rc.layernorm = std::find(list.begin(), list.end(), "layernorm") != list.end();
    rc.mlp_act = std::find(list.begin(), list.end(), "mlp_act") != list.end();
  }
  if (r.has("every_n_layers")) {
    if (rc.mode != RecomputeMode::Full)
      fail(error_code::kConstraint, r.child_path("every_n_layers"), "every_n_layers applies to mode \"full\" only");
    rc.every_n_layers = static_cast<int>(r.integer("every_n_layers", 1, 1 << 16));
  }
}

void read_optimizer(const json* v, const std::string& path, OptimizerSpec& o, Dtype act) {
  o.grad_dtype = act;
  if (!v) return;
  ObjectReader r(*v, path, {"type", "master_weights", "states_dtype", "grad_dtype", "cpu_offload",
                            "host_memory_bandwidth_GBps"});
  const std::string t = r.choice("type", {"adamw", "sgd_momentum", "adafactor"}, "adamw");
  o.kind = t == "sgd_momentum" ? OptimizerKind::SgdMomentum
           : t == "adafactor"  ? OptimizerKind::Adafactor
                               : OptimizerKind::AdamW;
  o.master_weights = r.boolean("master_weights", true);
  o.states_dtype = parse_dtype(r.choice("states_dtype", {"fp32", "bf16"}, "fp32"));
  o.grad_dtype = parse_dtype(r.choice("grad_dtype", {"fp32", "bf16", "fp16"}, dtype_name(act)));
  o.cpu_offload = r.boolean("cpu_offload", false);
  o.host_memory_bandwidth_GBps = r.number("host_memory_bandwidth_GBps", 1, 1e5, 200);
}

void read_lora(const json* v, const std::string& path, LoraSpec& l, const ModelArch& m) {
  record_parameter(path, "object");
  record_parameter(pointer_append(path, "targets"), "list", kLoraTargets);
  if (!v || v->is_null()) return;
  ObjectReader r(*v, path, {"rank", "alpha", "targets", "base_dtype", "quant_group_size"});
  l.enabled = true;
  l.rank = static_cast<int>(r.integer("rank", 1, 65536));
  l.alpha = r.number("alpha", 0, 1e6, 2.0 * l.rank);
  l.targets = read_string_list(r.required("targets"), r.child_path("targets"), kLoraTargets, false);
  l.base_dtype = parse_dtype(r.choice("base_dtype", {"bf16", "fp16", "fp8", "int8", "int4"}, "bf16"));
  l.quant_group_size = static_cast<int>(r.integer("quant_group_size", 0, 1 << 20, 64));
  if (l.quant_group_size != 0 && (l.quant_group_size & (l.quant_group_size - 1)) != 0)
    fail(error_code::kInvalidValue, r.child_path("quant_group_size"),
         "quant_group_size must be 0 (per-channel) or a power of two");
  if (m.mla.enabled)
    fail(error_code::kConstraint, r.child_path("targets"),
         "LoRA on multi-head latent attention (MLA) projections is not modelled");
  if (m.is_moe())
    for (size_t i = 0; i < l.targets.size(); ++i)
      if (l.targets[i] == "up" || l.targets[i] == "gate" || l.targets[i] == "down")
        fail(error_code::kConstraint, pointer_append(r.child_path("targets"), i),
             "LoRA on expert MLPs of a mixture-of-experts model is not modelled; target attention projections");
  if (!m.gated_mlp)
    for (size_t i = 0; i < l.targets.size(); ++i)
      if (l.targets[i] == "gate")
        fail(error_code::kConstraint, pointer_append(r.child_path("targets"), i),
             "the model's MLP has no gate projection (gated_mlp is false)");
  const int64_t min_dim = std::min<int64_t>(m.hidden_size, static_cast<int64_t>(m.num_kv_heads) * m.head_dim);
  if (l.rank > min_dim)
    fail(error_code::kConstraint, r.child_path("rank"),
         "rank " + str(l.rank) + " exceeds the smallest adapted dimension (" + str(min_dim) + ")");
}

void read_overlap(const json* v, const std::string& path, OverlapSpec& o) {
  if (!v) return;
  ObjectReader r(*v, path, {"dp", "fsdp_prefetch", "tp", "cp", "param_gather", "bucket_MiB"});
  o.dp = r.boolean("dp", true);
  o.fsdp_prefetch = r.boolean("fsdp_prefetch", true);
  o.tp = r.boolean("tp", false);
  o.cp = r.boolean("cp", true);
  o.param_gather = r.boolean("param_gather", false);
  o.bucket_MiB = r.number("bucket_MiB", 0.0625, 1 << 20, 25);
}

// Rank stride of each mesh axis under `placement` (innermost first).
// Reads one training configuration (no key_metrics / compare / scaling) and
// checks every cross-field constraint against the scenario's model and hardware.
TrainConfig read_train_config(const json& v, const std::string& path, const Scenario& s) {
  ObjectReader r(v, path, {"parallelism", "batch", "schedule", "recompute", "fp8", "fp8_recipe", "optimizer", "lora", "attention",
                           "elementwise", "moe", "overlap", "runtime_overhead_GiB", "tokens_to_train", "pue",
                           "key_metrics", "compare", "scaling"});
  TrainConfig c;
  const ModelArch& m = s.model;
  const HardwareSpec& hw = s.hardware;
  // The training graph, its activations and LoRA adapters price one head shape
  // for every layer; a model whose layer kinds differ in it is refused, not mispriced.
  if (m.has_layer_attention_shapes())
    fail(error_code::kNotImplemented, "/model",
         "this model's attention layers differ in head shape (per-layer attention_shape); training is priced for "
         "one shape in every layer, so it is not priced for this model (inference and serving are)");
  if (m.has_layer_ffn_widths())
    fail(error_code::kNotImplemented, "/model",
         "this model's layers differ in dense MLP width (per-layer ffn_intermediate); training is priced for one MLP "
         "width in every layer, so it is not priced for this model (inference and serving are)");
  // Precision: training keeps weights and activations in a float format; FP8
  // GEMMs and quantized frozen bases are training options.
  const std::string prec = "/precision";
  if (s.precision.activations == Dtype::FP8)
    fail(error_code::kConstraint, prec + "/activations",
         "training keeps activations in bf16/fp16; run GEMMs in FP8 with training.fp8 instead");
  if (s.precision.weights != Dtype::BF16 && s.precision.weights != Dtype::FP16 && s.precision.weights != Dtype::FP32)
    fail(error_code::kConstraint, prec + "/weights",
         "trained weights are bf16, fp16 or fp32; a quantized frozen base goes in training.lora.base_dtype (QLoRA)");

  const std::string par_path = r.child_path("parallelism");
  read_parallelism(r.find("parallelism"), par_path, c.parallelism);
  bool has_gbs = false, has_ga = false;
  const std::string batch_path = r.child_path("batch");
  read_batch(r.required("batch"), batch_path, c.batch, has_gbs, has_ga);
  const std::string sched = r.choice("schedule", {"gpipe", "1f1b", "interleaved_1f1b"}, "1f1b");
  c.schedule = sched == "gpipe" ? PipelineSchedule::GPipe
               : sched == "interleaved_1f1b" ? PipelineSchedule::Interleaved
                                             : PipelineSchedule::OneFOneB;
  read_recompute(r.find("recompute"), r.child_path("recompute"), c.recompute);
  const std::string fp8 = r.choice("fp8", {"none", "mlp", "layers", "all"}, "none");
  c.fp8 = fp8 == "mlp" ? Fp8Gemms::Mlp : fp8 == "layers" ? Fp8Gemms::Layers : fp8 == "all" ? Fp8Gemms::All
                                                                                            : Fp8Gemms::None;
  if (r.has("fp8_recipe")) {
    c.fp8_recipe = r.choice("fp8_recipe", {"delayed", "current"}) == "current" ? Fp8Recipe::Current : Fp8Recipe::Delayed;
    if (c.fp8 == Fp8Gemms::None)
      fail(error_code::kConstraint, r.child_path("fp8_recipe"),
           "fp8_recipe scales FP8 GEMMs: give training.fp8 (mlp, layers or all) too, or leave fp8_recipe out");
  }
  read_optimizer(r.find("optimizer"), r.child_path("optimizer"), c.optimizer, s.precision.activations);
  read_lora(r.find("lora"), r.child_path("lora"), c.lora, m);
  c.attention = r.choice("attention", {"flash", "standard"}, "flash") == "flash" ? AttentionImpl::Flash
                                                                                 : AttentionImpl::Standard;
  c.elementwise = r.choice("elementwise", {"fused", "eager"}, "fused") == "eager" ? ElementwiseKernels::Eager
                                                                                 : ElementwiseKernels::Fused;
  if (const json* moe = r.find("moe")) {
    ObjectReader mr(*moe, r.child_path("moe"), {"load_imbalance"});
    c.moe_load_imbalance = mr.number("load_imbalance", 1.0, 64.0, 1.0);
    if (!m.is_moe())
      fail(error_code::kConstraint, r.child_path("moe"), "the model '" + m.id + "' has no experts (moe is for MoE models)");
  }
  read_overlap(r.find("overlap"), r.child_path("overlap"), c.overlap);
  c.runtime_overhead_GiB = r.number("runtime_overhead_GiB", 0, 1e4, 2.0);
  c.tokens_to_train = r.number("tokens_to_train", 0, 1e18, 0);
  c.pue = r.number("pue", 1.0, 10.0, 1.0);

  const int chunks = check_train_parallelism(c, m, hw, par_path, r.child_path("schedule"));
  check_train_batch(c, m, par_path, batch_path, has_gbs, has_ga, chunks);
  const TrainParallelism& p = c.parallelism;

  // Techniques.
  if (c.fp8 != Fp8Gemms::None && hw.gpu.peak_tflops.fp8 <= 0)
    fail(error_code::kConstraint, r.child_path("fp8"), hw.gpu.name + " has no FP8 tensor cores");
  if (c.fp8 != Fp8Gemms::None && c.lora.enabled && c.lora.base_dtype != Dtype::BF16 &&
      c.lora.base_dtype != Dtype::FP16)
    fail(error_code::kConstraint, r.child_path("fp8"), "FP8 GEMMs with a quantized frozen base are not modelled");
  if (c.lora.enabled && c.lora.base_dtype == Dtype::FP8 && hw.gpu.peak_tflops.fp8 <= 0)
    fail(error_code::kConstraint, pointer_append(r.child_path("lora"), "base_dtype"),
         hw.gpu.name + " has no FP8 support for an fp8 frozen base");
  if (c.overlap.tp && p.tp < 2)
    fail(error_code::kConstraint, pointer_append(r.child_path("overlap"), "tp"), "async TP overlap needs tp ≥ 2");
  return c;
}

// Applies a variant's hardware patch (any of gpu, gpus_per_node, nodes,
// intra_node, inter_node) to a copy of the base hardware.
void apply_hardware_patch(const json& v, const std::string& path, Scenario& s) {
  ObjectReader r(v, path, {"gpu", "gpus_per_node", "nodes", "intra_node", "inter_node"});
  HardwareSpec& h = s.hardware;
  if (const json* g = r.find("gpu")) h.gpu = read_gpu(*g, r.child_path("gpu"));
  h.gpus_per_node = static_cast<int>(r.integer("gpus_per_node", 1, 1024, h.gpus_per_node));
  h.nodes = static_cast<int>(r.integer("nodes", 1, 100000, h.nodes));
  if (const json* intra = r.find("intra_node")) {
    h.intra_node = read_interconnect(*intra, r.child_path("intra_node"));
    if (h.intra_node->scope != "intra_node")
      fail(error_code::kConstraint, r.child_path("intra_node"), "interconnect '" + h.intra_node->id + "' is inter-node");
  }
  if (const json* inter = r.find("inter_node")) {
    h.inter_node = read_interconnect(*inter, r.child_path("inter_node"));
    if (h.inter_node->scope != "inter_node")
      fail(error_code::kConstraint, r.child_path("inter_node"), "interconnect '" + h.inter_node->id + "' is intra-node");
  }
  if (h.gpus_per_node > 1 && !h.intra_node)
    fail(error_code::kMissingKey, r.child_path("intra_node"), "intra_node is required when gpus_per_node > 1");
  if (h.nodes > 1 && !h.inter_node)
    fail(error_code::kMissingKey, r.child_path("inter_node"), "inter_node is required when nodes > 1");
  check_link_domain(h, r.child_path("gpus_per_node"));
  if (s.cost_model.tier == "target-measured" && !own_calibration(h.gpu))
    fail(error_code::kConstraint, r.child_path("gpu"),
         "cost_model.tier is target-measured but no measurements of '" + h.gpu.id + "' ship with the engine");
  if (h.gpu.peak_tflops_for(s.precision.activations) <= 0)
    fail(error_code::kConstraint, r.child_path("gpu"),
         h.gpu.name + " has no " + dtype_name(s.precision.activations) + " support for this scenario's activations");
}

json without_meta(const json& v) {
  json out = v;
  if (out.is_object())
    for (const auto& k : kMetaKeys) out.erase(k);
  return out;
}

std::shared_ptr<const Scenario> make_variant(Scenario variant, TrainConfig config) {
  TrainingSpec t;
  t.config = std::move(config);
  variant.serving.reset();
  variant.training = std::move(t);
  return std::make_shared<const Scenario>(std::move(variant));
}

}  // namespace

TrainingSpec read_training(const json& v, const std::string& path, const Scenario& s) {
  TrainingSpec t;
  t.config = read_train_config(v, path, s);
  ObjectReader r(v, path, {"parallelism", "batch", "schedule", "recompute", "fp8", "fp8_recipe", "optimizer", "lora", "attention",
                           "elementwise", "moe", "overlap", "runtime_overhead_GiB", "tokens_to_train", "pue",
                           "key_metrics", "compare", "scaling"});
  const json base = without_meta(v);

  // Variants to compare with: each a patch of hardware and/or training.
  if (const json* cmp = r.find("compare")) {
    const std::string cpath = r.child_path("compare");
    if (!cmp->is_array()) fail(error_code::kType, cpath, "expected an array of variants, got " + json_type_name(*cmp));
    if (cmp->size() > 8) fail(error_code::kRange, cpath, "at most 8 variants can be compared");
    for (size_t i = 0; i < cmp->size(); ++i) {
      const std::string ip = pointer_append(cpath, i);
      ObjectReader cr((*cmp)[i], ip, {"label", "hardware", "training"});
      Scenario variant = s;
      variant.training.reset();
      TrainVariant tv;
      tv.label = cr.string("label");
      if (const json* hw = cr.find("hardware")) apply_hardware_patch(*hw, cr.child_path("hardware"), variant);
      json merged = base;
      if (const json* patch = cr.find("training")) {
        require_object(*patch, cr.child_path("training"));
        for (const auto& k : kMetaKeys)
          if (patch->contains(k))
            fail(error_code::kUnknownKey, pointer_append(cr.child_path("training"), k),
                 "a variant cannot carry its own " + k);
        merged.merge_patch(*patch);
      }
      TrainConfig vc = read_train_config(merged, cr.child_path("training"), variant);
      tv.scenario = make_variant(std::move(variant), std::move(vc));
      t.compare.push_back(std::move(tv));
    }
  }

  // Scaling curve over the data-parallel degree.
  if (const json* sc = r.find("scaling")) {
    ObjectReader sr(*sc, r.child_path("scaling"), {"dp", "mode"});
    t.scaling.mode = sr.choice("mode", {"strong", "weak"}, "strong");
    const json& list = sr.required("dp");
    const std::string lp = sr.child_path("dp");
    if (!list.is_array() || list.empty())
      fail(error_code::kType, lp, "expected a non-empty array of data-parallel degrees");
    if (list.size() > 16) fail(error_code::kRange, lp, "at most 16 scaling points");
    const TrainConfig& bc = t.config;
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string ip = pointer_append(lp, i);
      const int dp = static_cast<int>(read_integer(list[i], ip, 1, 1 << 20));
      if (!t.scaling.values.empty() && dp <= t.scaling.values.back())
        fail(error_code::kInvalidValue, ip, "scaling points must be increasing");
      t.scaling.values.push_back(dp);
      Scenario point = s;
      point.training.reset();
      const int world = dp * bc.parallelism.tp * bc.parallelism.pp * bc.parallelism.cp;
      HardwareSpec& h = point.hardware;
      h.gpus_per_node = std::min(s.hardware.gpus_per_node, world);
      if (world % h.gpus_per_node != 0)
        fail(error_code::kConstraint, ip,
             str(world) + " GPUs do not fill whole nodes of " + str(h.gpus_per_node) + " GPUs");
      h.nodes = world / h.gpus_per_node;
      if (h.nodes > 1 && !h.inter_node)
        fail(error_code::kConstraint, ip, str(world) + " GPUs span " + str(h.nodes) +
                                              " nodes; the scenario needs hardware.inter_node for a scaling curve");
      json merged = base;
      merged["parallelism"]["dp"] = dp;
      if (t.scaling.mode == "strong") {
        merged["batch"]["global_batch_size"] = bc.batch.global_batch_size;
        merged["batch"].erase("gradient_accumulation");
      } else {
        merged["batch"]["gradient_accumulation"] = bc.batch.gradient_accumulation;
        merged["batch"].erase("global_batch_size");
      }
      try {
        TrainConfig pc = read_train_config(merged, path, point);
        t.scaling.points.push_back(make_variant(std::move(point), std::move(pc)));
      } catch (const SightlineError& e) {
        fail(e.code().c_str(), ip, "scaling point dp = " + str(dp) + ": " + e.what());
      }
    }
  }

  // Key metrics, from the registry.
  if (const json* km = r.find("key_metrics")) {
    t.key_metrics = read_string_list(*km, r.child_path("key_metrics"), metric_ids(MetricKind::kTraining), false);
    for (size_t i = 0; i < t.key_metrics.size(); ++i) {
      const MetricInfo* info = find_metric(MetricKind::kTraining, t.key_metrics[i]);
      const std::string needs = info->needs;
      const std::string ip = pointer_append(r.child_path("key_metrics"), i);
      if (needs == "compare" && t.compare.empty())
        fail(error_code::kConstraint, ip, "'" + t.key_metrics[i] + "' needs a compare variant");
      if (needs == "scaling" && t.scaling.values.empty())
        fail(error_code::kConstraint, ip, "'" + t.key_metrics[i] + "' needs a scaling curve");
      if (needs == "tokens_to_train" && t.config.tokens_to_train <= 0)
        fail(error_code::kConstraint, ip, "'" + t.key_metrics[i] + "' needs tokens_to_train");
      if (needs == "gpu_hour_usd" && (s.cost_model.gpu_hour_usd <= 0 || t.config.tokens_to_train <= 0))
        fail(error_code::kConstraint, ip, "'" + t.key_metrics[i] + "' needs training.tokens_to_train and cost_model.gpu_hour_usd");
    }
  } else {
    t.key_metrics = default_key_metrics(MetricKind::kTraining);
  }
  return t;
}

json train_config_to_json(const TrainConfig& c) {
  const TrainParallelism& p = c.parallelism;
  json recompute = {{"mode", recompute_name(c.recompute.mode)}};
  if (c.recompute.mode == RecomputeMode::Selective) {
    json mods = json::array();
    if (c.recompute.core_attn) mods.push_back("core_attn");
    if (c.recompute.layernorm) mods.push_back("layernorm");
    if (c.recompute.mlp_act) mods.push_back("mlp_act");
    recompute["modules"] = mods;
  }
  if (c.recompute.mode == RecomputeMode::Full) recompute["every_n_layers"] = c.recompute.every_n_layers;
  json j = {
      {"parallelism",
       {{"dp", p.dp}, {"tp", p.tp}, {"pp", p.pp}, {"cp", p.cp}, {"ep", p.ep},
        {"sequence_parallel", p.sequence_parallel}, {"virtual_stages", p.virtual_stages},
        {"zero_stage", p.zero_stage}, {"placement", p.placement}}},
      {"batch",
       {{"seq_len", c.batch.seq_len}, {"micro_batch_size", c.batch.micro_batch_size},
        {"gradient_accumulation", c.batch.gradient_accumulation}, {"global_batch_size", c.batch.global_batch_size}}},
      {"schedule", schedule_name(c.schedule)},
      {"recompute", recompute},
      {"fp8", fp8_name(c.fp8)},
      {"optimizer",
       {{"type", optimizer_name(c.optimizer.kind)}, {"master_weights", c.optimizer.master_weights},
        {"states_dtype", dtype_name(c.optimizer.states_dtype)}, {"grad_dtype", dtype_name(c.optimizer.grad_dtype)},
        {"cpu_offload", c.optimizer.cpu_offload},
        {"host_memory_bandwidth_GBps", c.optimizer.host_memory_bandwidth_GBps}}},
      {"attention", c.attention == AttentionImpl::Flash ? "flash" : "standard"},
      {"elementwise", c.elementwise == ElementwiseKernels::Eager ? "eager" : "fused"},
      {"overlap",
       {{"dp", c.overlap.dp}, {"fsdp_prefetch", c.overlap.fsdp_prefetch}, {"tp", c.overlap.tp}, {"cp", c.overlap.cp},
        {"param_gather", c.overlap.param_gather}, {"bucket_MiB", c.overlap.bucket_MiB}}},
      {"runtime_overhead_GiB", c.runtime_overhead_GiB},
      {"tokens_to_train", c.tokens_to_train},
      {"pue", c.pue}};
  j["lora"] = c.lora.enabled ? json{{"rank", c.lora.rank},
                                    {"alpha", c.lora.alpha},
                                    {"targets", c.lora.targets},
                                    {"base_dtype", dtype_name(c.lora.base_dtype)},
                                    {"quant_group_size", c.lora.quant_group_size}}
                             : json(nullptr);
  // Only a MoE model takes `moe`; 1.0 is the default, so a dense model's
  // resolved scenario leaves it out and still reads back.
  if (c.moe_load_imbalance != 1.0) j["moe"] = {{"load_imbalance", c.moe_load_imbalance}};
  if (!c.parallelism.stage_layers.empty()) j["parallelism"]["stage_layers"] = c.parallelism.stage_layers;
  // The recipe scales FP8 GEMMs: a run without them takes no fp8_recipe, so
  // its resolved scenario leaves it out and still reads back.
  if (c.fp8 != Fp8Gemms::None) j["fp8_recipe"] = c.fp8_recipe == Fp8Recipe::Current ? "current" : "delayed";
  return j;
}

json training_to_json(const TrainingSpec& t) {
  json j = train_config_to_json(t.config);
  j["key_metrics"] = t.key_metrics;
  json cmp = json::array();
  for (const auto& v : t.compare) {
    const Scenario& s = *v.scenario;
    cmp.push_back({{"label", v.label},
                   {"hardware",
                    {{"gpu", s.hardware.gpu.id},
                     {"gpus_per_node", s.hardware.gpus_per_node},
                     {"nodes", s.hardware.nodes},
                     {"intra_node", s.hardware.intra_node ? json(s.hardware.intra_node->id) : json(nullptr)},
                     {"inter_node", s.hardware.inter_node ? json(s.hardware.inter_node->id) : json(nullptr)}}},
                   // scenario_to_json rewrites it as a merge patch from the base.
                   {"training", train_config_to_json(s.training->config)}});
  }
  j["compare"] = cmp;
  j["scaling"] = t.scaling.values.empty() ? json(nullptr)
                                          : json{{"dp", t.scaling.values}, {"mode", t.scaling.mode}};
  return j;
}

std::vector<int> chunk_layer_counts(const TrainParallelism& p, int num_layers) {
  if (!p.stage_layers.empty()) return p.stage_layers;
  const int chunks = std::max(1, p.pp * p.virtual_stages);
  return std::vector<int>(static_cast<size_t>(chunks), num_layers / chunks);
}

}  // namespace sightline
