#include "train/training_result.hpp"

#include <functional>
#include <map>

#include "scenario/metric_catalogue.hpp"

namespace sightline {

namespace {

// Every pass of a rank as {kind, micro_batch, chunk, start_ms, end_ms}, for the page's timeline.
// The largest part of a training result (up to kMaxRecordedPasses records), so
// each record is built in place, its keys appended in their sorted order.
json passes_json(const std::vector<PassRecord>& passes) {
  json out = json::array();
  json::array_t& list = out.get_ref<json::array_t&>();
  list.reserve(passes.size());
  for (const PassRecord& p : passes) {
    json::object_t& o = list.emplace_back(json::value_t::object).get_ref<json::object_t&>();
    o.emplace_hint(o.end(), "chunk", p.chunk);
    o.emplace_hint(o.end(), "end_ms", p.end_s * 1e3);
    o.emplace_hint(o.end(), "kind", p.forward ? "fwd" : "bwd");
    o.emplace_hint(o.end(), "micro_batch", p.micro);
    o.emplace_hint(o.end(), "start_ms", p.start_s * 1e3);
  }
  return out;
}

json model_json(const TrainRunResult& r) {
  json m = to_json(r.header)["model"];
  m["trainable_params_M"] = r.trainable_params_M;
  m["trainable_pct"] = r.trainable_pct;
  return m;
}

json deployment_json(const TrainRunResult::Deployment& d) {
  json placement = json::array();
  for (const auto& p : d.placement)
    placement.push_back({{"axis", p.axis}, {"size", p.size}, {"gpus_per_node", p.gpus_per_node},
                         {"nodes", p.nodes}, {"link", p.link}});
  return {{"gpu", d.gpu},
          {"gpus", d.gpus},
          {"gpus_per_node", d.gpus_per_node},
          {"nodes", d.nodes},
          {"dp", d.dp},
          {"tp", d.tp},
          {"pp", d.pp},
          {"cp", d.cp},
          {"ep", d.ep},
          {"sequence_parallel", d.sequence_parallel},
          {"virtual_stages", d.virtual_stages},
          {"zero_stage", d.zero_stage},
          {"schedule", d.schedule},
          {"recompute", d.recompute},
          {"fp8", d.fp8},
          {"optimizer", d.optimizer},
          {"cpu_offload", d.cpu_offload},
          {"lora", d.lora ? json{{"rank", d.lora->rank}, {"targets", d.lora->targets}, {"base_dtype", d.lora->base_dtype}}
                          : json(nullptr)},
          {"placement", placement}};
}

json metrics_json(const TrainRunResult::Metrics& m) {
  return {{"step_time_ms", m.step_time_ms},
          {"tokens_per_s", m.tokens_per_s},
          {"tokens_per_s_per_gpu", m.tokens_per_s_per_gpu},
          {"samples_per_s", m.samples_per_s},
          {"mfu_pct", m.mfu_pct},
          {"hfu_pct", m.hfu_pct},
          {"model_tflops_per_gpu", m.model_tflops_per_gpu},
          {"hardware_tflops_per_gpu", m.hardware_tflops_per_gpu},
          {"hardware_flops_per_step", m.hardware_flops_per_step},
          {"recompute_flops_per_step", m.recompute_flops_per_step},
          {"model_flops_per_token", m.model_flops_per_token}};
}

json step_breakdown_json(const TrainRunResult::StepBreakdown& b) {
  json cats = json::object();
  json compute = json::object();
  for (const TimeCat k : kAllTimeCats)
    if (is_compute_time_cat(k)) compute[time_cat_name(k)] = b.cats_ms[k];
  cats["compute"] = compute;
  cats["recompute"] = b.cats_ms[TimeCat::Recompute];
  cats["exposed_comm"] = {{"tp", b.cats_ms[TimeCat::TpComm]},
                          {"ep", b.cats_ms[TimeCat::EpComm]},
                          {"cp", b.cats_ms[TimeCat::CpComm]},
                          {"fsdp", b.cats_ms[TimeCat::FsdpComm]},
                          {"dp", b.exposed_dp_ms}};
  cats["pipeline_bubble"] = b.pipeline_bubble_ms;
  cats["optimizer"] = b.optimizer_ms;
  cats["cpu_offload"] = b.cpu_offload_ms;
  cats["framework"] = b.framework_ms;
  cats["framework_parts"] = {{"grad_norm_allreduce", b.framework_parts_ms.grad_norm_allreduce},
                             {"fp8_amax_allreduce", b.framework_parts_ms.fp8_amax_allreduce},
                             {"input_copy", b.framework_parts_ms.input_copy}};
  cats["overhead"] = b.cats_ms[TimeCat::Overhead];
  cats["rank"] = b.rank;
  return cats;
}

json pipeline_json(const TrainRunResult::Pipeline& p) {
  json stages = json::array();
  for (const auto& s : p.per_rank)
    stages.push_back({{"rank", s.rank},
                      {"fwd_ms", s.fwd_ms},
                      {"bwd_ms", s.bwd_ms},
                      {"busy_ms", s.busy_ms},
                      {"idle_ms", s.idle_ms},
                      {"peak_micro_batches_in_flight", s.peak_micro_batches_in_flight},
                      {"dp_comm_ms", s.dp_comm_ms},
                      {"step_end_ms", s.step_end_ms},
                      {"passes", passes_json(s.passes)}});
  return {{"schedule", p.schedule},
          {"stages", p.stages},
          {"virtual_stages", p.virtual_stages},
          {"micro_batches", p.micro_batches},
          {"layers_per_chunk", p.layers_per_chunk},
          {"bubble_pct", p.bubble_pct},
          {"bubble_definition", "idle share of the schedule on the busiest rank (fill and drain); "
                                "mean_idle_pct adds the idle time of less loaded stages"},
          {"mean_idle_pct", p.mean_idle_pct},
          {"bubble_formula_pct", p.bubble_formula_pct},
          {"makespan_ms", p.makespan_ms},
          {"p2p_transfer_us", p.p2p_transfer_us},
          {"per_rank", stages}};
}

json communication_json(const TrainRunResult::Communication& c) {
  json comm;
  comm["tp"] = {{"group", c.tp_group},
                {"total_ms", c.tp_total_ms},
                {"all_gather_ms", c.tp_all_gather_ms},
                {"all_gather_call_us", c.tp_all_gather_call_us},
                {"exposed_ms", c.tp_exposed_ms},
                {"exposed_pct", c.tp_exposed_pct}};
  comm["ep"] = {{"group", c.ep_group},
                {"all_to_all_ms", c.ep_all_to_all_ms},
                {"all_to_all_call_us", c.ep_all_to_all_call_us},
                {"load_imbalance", c.ep_load_imbalance},
                {"exposed_ms", c.ep_exposed_ms}};
  comm["cp"] = {{"group", c.cp_group}, {"total_ms", c.cp_total_ms}, {"exposed_ms", c.cp_exposed_ms}};
  comm["pp"] = {{"stages", c.pp_stages},
                {"transfer_us", c.pp_transfer_us},
                {"transfers_per_step", c.pp_transfers_per_step}};
  comm["dp"] = {{"group", c.dp_group},
                {"expert_group", c.dp_expert_group},
                {"gradient_bytes_per_gpu", c.dp_gradient_bytes_per_gpu},
                {"mode", c.dp_mode},
                {"allreduce_one_shot_ms", c.dp_allreduce_one_shot_ms},
                {"allreduce_one_shot_intra_node_ms", c.dp_allreduce_one_shot_intra_node_ms},
                {"inter_over_intra", c.dp_inter_over_intra},
                {"sync_ms", c.dp_sync_ms},
                {"exposed_ms", c.dp_exposed_ms},
                {"overlap_pct", c.dp_overlap_pct},
                {"comm_to_compute_ratio", c.dp_comm_to_compute_ratio}};
  return comm;
}

json per_layer_json(const TrainRunResult::PerLayer& l) {
  return {{"attention_core_fwd_ms", l.attention_core_fwd_ms},
          {"attention_core_bwd_ms", l.attention_core_bwd_ms},
          {"attention_core_fwd_bwd_ms", l.attention_core_fwd_bwd_ms},
          {"attention_block_fwd_bwd_ms", l.attention_block_fwd_bwd_ms},
          {"mlp_block_fwd_bwd_ms", l.mlp_block_fwd_bwd_ms},
          {"mlp_flops", l.mlp_flops},
          {"mlp_achieved_tflops", l.mlp_achieved_tflops},
          {"layer_fwd_bwd_ms", l.layer_fwd_bwd_ms},
          {"layer_iteration_ms", l.layer_iteration_ms},
          {"attention_share_of_compute_pct", l.attention_share_of_compute_pct},
          {"note", "one micro-batch on one GPU; the most common layer kind"}};
}

json memory_json(const TrainRunResult::Memory& m) {
  return {{"rank", m.rank},
          {"capacity_GiB", m.capacity_GiB},
          {"params_GiB", m.params_GiB},
          {"grads_GiB", m.grads_GiB},
          {"optimizer_states_GiB", m.optimizer_states_GiB},
          {"activations_GiB", m.activations_GiB},
          {"activations_stored_GiB", m.activations_stored_GiB},
          {"activations_working_GiB", m.activations_working_GiB},
          {"temporary_GiB", m.temporary_GiB},
          {"logits_GiB", m.logits_GiB},
          {"runtime_overhead_GiB", m.runtime_overhead_GiB},
          {"total_GiB", m.total_GiB},
          {"free_GiB", m.free_GiB},
          {"fits", m.fits},
          {"overflow_GiB", m.overflow_GiB},
          {"max_micro_batch", m.max_micro_batch},
          {"max_micro_batch_by_recompute",
           {{"none", m.max_micro_batch_none}, {"selective", m.max_micro_batch_selective}, {"full", m.max_micro_batch_full}}},
          {"host_optimizer_states_GiB", m.host_optimizer_states_GiB},
          {"peak_micro_batches_in_flight", m.peak_micro_batches_in_flight}};
}

json training_run_json(const std::optional<TrainRunResult::Run>& run) {
  if (!run) return nullptr;
  json j = {{"tokens_to_train", run->tokens_to_train},
            {"time_s", run->time_s},
            {"time_hours", run->time_hours},
            {"time_days", run->time_days},
            {"gpu_hours", run->gpu_hours},
            {"average_power_W_per_gpu", run->average_power_W_per_gpu},
            {"energy_MWh", run->energy_MWh},
            {"pue", run->pue}};
  j["gpu_hour_usd"] = run->gpu_hour_usd;
  j["cost_usd"] = run->cost_usd ? json(*run->cost_usd) : json(nullptr);
  return j;
}

// A training metric's value: a number, an integer count or a yes/no, read from a field.
struct Getter {
  KeyMetric::Kind kind;
  std::function<std::optional<double>(const TrainRunResult&, const TrainingResult*)> get;
};

Getter num(double TrainRunResult::Metrics::*f) {
  return {KeyMetric::Kind::Number, [f](const TrainRunResult& r, const TrainingResult*) { return r.metrics.*f; }};
}
Getter per_layer(double TrainRunResult::PerLayer::*f) {
  return {KeyMetric::Kind::Number, [f](const TrainRunResult& r, const TrainingResult*) { return r.per_layer.*f; }};
}
Getter comm(double TrainRunResult::Communication::*f) {
  return {KeyMetric::Kind::Number, [f](const TrainRunResult& r, const TrainingResult*) { return r.communication.*f; }};
}
Getter pipeline(double TrainRunResult::Pipeline::*f) {
  return {KeyMetric::Kind::Number, [f](const TrainRunResult& r, const TrainingResult*) { return r.pipeline.*f; }};
}
Getter memory(double TrainRunResult::Memory::*f) {
  return {KeyMetric::Kind::Number, [f](const TrainRunResult& r, const TrainingResult*) { return r.memory_per_gpu.*f; }};
}
Getter run_figure(double TrainRunResult::Run::*f) {
  return {KeyMetric::Kind::Number, [f](const TrainRunResult& r, const TrainingResult*) -> std::optional<double> {
            if (!r.training_run) return std::nullopt;
            return (*r.training_run).*f;
          }};
}
Getter first_variant(double TrainCompareVariant::*f) {
  return {KeyMetric::Kind::Number, [f](const TrainRunResult&, const TrainingResult* w) -> std::optional<double> {
            if (!w || w->compare.empty()) return std::nullopt;
            return w->compare.front().*f;
          }};
}

// A figure that is not a plain field of one part: its kind and how it is read.
using FigureFn = std::function<std::optional<double>(const TrainRunResult&, const TrainingResult*)>;
Getter real(FigureFn get) { return {KeyMetric::Kind::Number, std::move(get)}; }
Getter whole(FigureFn get) { return {KeyMetric::Kind::Integer, std::move(get)}; }
Getter yes_no(FigureFn get) { return {KeyMetric::Kind::Bool, std::move(get)}; }

// Every training metric's getter, by id: the getter column of the one training
// metric table (scenario/training_metric_table.hpp), whose other columns are
// the catalogue's words.
const std::map<std::string, Getter>& getters() {
  using R = TrainRunResult;
  static const std::map<std::string, Getter> g = {
#define TRAINING_METRIC(id, label, unit, pointer, needs, description, speed, getter) {id, getter},
#include "scenario/training_metric_table.hpp"
  };
  return g;
}

}  // namespace

KeyMetric training_key_metric(const std::string& id, const TrainRunResult& run, const TrainingResult* whole) {
  KeyMetric k;
  k.id = id;
  if (const MetricInfo* info = find_metric(MetricKind::kTraining, id)) {
    k.label = info->label;
    k.unit = info->unit;
    k.description = info->description;
  }
  const auto it = getters().find(id);
  if (it == getters().end()) return k;
  const std::optional<double> v = it->second.get(run, whole);
  if (!v) return k;
  k.kind = it->second.kind;
  k.value = *v;
  return k;
}

KeyMetrics training_key_metrics(const std::vector<std::string>& ids, const TrainRunResult& run,
                                const TrainingResult* whole) {
  KeyMetrics out;
  for (const std::string& id : ids)
    if (find_metric(MetricKind::kTraining, id)) out.push_back(training_key_metric(id, run, whole));
  return out;
}

KeyMetrics variant_key_metrics(const TrainingResult& whole, const TrainCompareVariant& variant) {
  KeyMetrics km;
  for (const KeyMetric& k : whole.key_metrics) {
    KeyMetric own = training_key_metric(k.id, variant.run, nullptr);
    if (own.kind != KeyMetric::Kind::Missing) km.push_back(std::move(own));
  }
  return km;
}

json to_json(const TrainRunResult& x) {
  json r = to_json(x.header);
  r["model"] = model_json(x);
  r["deployment"] = deployment_json(x.deployment);
  r["batch"] = {{"seq_len", x.batch.seq_len},
                {"micro_batch_size", x.batch.micro_batch_size},
                {"micro_batches_per_step", x.batch.micro_batches_per_step},
                {"global_batch_size", x.batch.global_batch_size},
                {"global_batch_tokens", x.batch.global_batch_tokens}};
  r["flop_convention"] = x.flop_convention;
  r["metrics"] = metrics_json(x.metrics);
  r["step_breakdown_ms"] = step_breakdown_json(x.step_breakdown_ms);
  r["pipeline"] = pipeline_json(x.pipeline);
  r["communication"] = communication_json(x.communication);
  r["per_layer"] = per_layer_json(x.per_layer);
  r["memory_per_gpu"] = memory_json(x.memory_per_gpu);
  r["training_run"] = training_run_json(x.training_run);
  json comm_parts = json::array();
  for (const PricedOperator& p : x.communication_parts)
    comm_parts.push_back({{"name", p.name}, {"count", p.count}, {"time_us", p.time_s * 1e6}, {"bytes", p.bytes}});
  r["breakdown"] = {{"forward_per_micro_batch", x.forward.to_json(1)},
                    {"backward_per_micro_batch", x.backward.to_json(1)},
                    {"recompute_per_micro_batch", x.recompute.to_json(1)},
                    {"communication_per_micro_batch", comm_parts}};
  return r;
}

json to_json(const TrainingResult& t) {
  json r = to_json(t.base);
  json cmp = json::array();
  for (const TrainCompareVariant& v : t.compare) {
    const TrainRunResult& x = v.run;
    cmp.push_back({{"label", v.label},
                   {"gpu", x.deployment.gpu},
                   {"gpus", x.deployment.gpus},
                   {"step_time_ms", x.metrics.step_time_ms},
                   {"tokens_per_s", x.metrics.tokens_per_s},
                   {"tokens_per_s_per_gpu", x.metrics.tokens_per_s_per_gpu},
                   {"mfu_pct", x.metrics.mfu_pct},
                   {"memory_per_gpu_GiB", x.memory_per_gpu.total_GiB},
                   {"activations_GiB", x.memory_per_gpu.activations_GiB},
                   {"fits", x.memory_per_gpu.fits},
                   {"base_over_variant_throughput", v.base_over_variant_throughput},
                   {"variant_over_base_memory", v.variant_over_base_memory},
                   {"variant_over_base_activations", v.variant_over_base_activations},
                   {"deployment", deployment_json(x.deployment)},
                   {"metrics", metrics_json(x.metrics)},
                   {"step_breakdown_ms", step_breakdown_json(x.step_breakdown_ms)},
                   {"communication", communication_json(x.communication)},
                   {"per_layer", per_layer_json(x.per_layer)},
                   {"memory_per_gpu", memory_json(x.memory_per_gpu)},
                   {"model", model_json(x)},
                   {"key_metrics", key_metrics_to_json(variant_key_metrics(t, v))}});
  }
  r["compare"] = cmp;
  if (t.does_not_fit_path)
    r["does_not_fit"] = {{"code", "does_not_fit"}, {"path", *t.does_not_fit_path}, {"message", *t.does_not_fit_message}};
  if (t.scaling) {
    json pts = json::array();
    for (const TrainScalingPoint& p : t.scaling->points)
      pts.push_back({{"dp", p.dp},
                     {"gpus", p.gpus},
                     {"nodes", p.nodes},
                     {"micro_batches_per_step", p.micro_batches_per_step},
                     {"global_batch_size", p.global_batch_size},
                     {"step_time_ms", p.step_time_ms},
                     {"tokens_per_s", p.tokens_per_s},
                     {"tokens_per_s_per_gpu", p.tokens_per_s_per_gpu},
                     {"speedup", p.speedup},
                     {"ideal_speedup", p.ideal_speedup},
                     {"efficiency_pct", p.efficiency_pct},
                     {"mfu_pct", p.mfu_pct},
                     {"exposed_dp_comm_ms", p.exposed_dp_comm_ms},
                     {"bubble_ms", p.bubble_ms},
                     {"memory_per_gpu_GiB", p.memory_per_gpu_GiB},
                     {"fits", p.fits}});
    r["scaling"] = {{"axis", t.scaling->axis},
                    {"mode", t.scaling->mode},
                    {"points", pts},
                    {"final_efficiency_pct", t.scaling->final_efficiency_pct},
                    {"efficiency_definition",
                     "tokens/s per GPU at each point relative to the first point (strong scaling: global batch fixed; "
                     "weak: micro-batches per replica fixed)"}};
  } else {
    r["scaling"] = nullptr;
  }
  append_warnings(r, t.warnings);
  r["key_metrics"] = key_metrics_to_json(t.key_metrics);
  r["headline_metrics"] = training_headline_ids(t);
  return r;
}

std::vector<std::string> training_headline_ids(const TrainingResult& t) {
  const bool has_run = t.base.training_run.has_value();
  return headline_metrics(MetricKind::kTraining,
                          [&](const std::string& id) { return id == "time_to_train_days" && has_run; });
}

}  // namespace sightline
