#include "scenario/metric_catalogue.hpp"

namespace sightline {

namespace {
// The entry of `list` that `match` accepts; nullptr when none does.
template <class T, class Match>
const T* find_in(const std::vector<T>& list, Match match) {
  for (const T& e : list)
    if (match(e)) return &e;
  return nullptr;
}

constexpr MetricKind kLatency = MetricKind::kLatency;
constexpr MetricKind kServing = MetricKind::kServing;
constexpr MetricKind kTraining = MetricKind::kTraining;
constexpr MetricKind kDeploymentSearch = MetricKind::kDeploymentSearch;
constexpr MetricKind kTrainingSearch = MetricKind::kTrainingSearch;
// The tables' speed column (MetricInfo::speed); a search has no measured band: not_speed.
constexpr EndToEndSpeed speed_time = EndToEndSpeed::kTime;
constexpr EndToEndSpeed speed_rate = EndToEndSpeed::kRate;
constexpr EndToEndSpeed not_speed = EndToEndSpeed::kNone;
}  // namespace

const char* metric_kind_name(MetricKind kind) {
  switch (kind) {
    case MetricKind::kLatency: return "latency";
    case MetricKind::kServing: return "serving";
    case MetricKind::kTraining: return "training";
    case MetricKind::kDeploymentSearch: return "deployment_search";
    case MetricKind::kTrainingSearch: return "training_search";
  }
  return "";
}

const std::vector<MetricInfo>& metric_catalogue() {
  static const std::vector<MetricInfo> list = {
      // Each kind's words, from its one table (the getter column is compiled by the layer that computes the figure).
#define LATENCY_METRIC(id, label, unit, pointer, needs, description, speed, getter) \
  {kLatency, id, label, unit, pointer, needs, description, speed},
#include "scenario/latency_metric_table.hpp"
#define SERVING_METRIC(id, label, unit, pointer, needs, description, speed, comparison, getter) \
  {kServing, id, label, unit, pointer, needs, description, speed},
#define SERVING_COMPARED_FIGURE(comparison, getter)
#define SERVING_COMPARE_RESULT(id, label, group, name) \
  {kServing, id, label, "x", "/compare/" #group "/" name, "", "", not_speed},
#include "scenario/serving_metric_table.hpp"
#define TRAINING_METRIC(id, label, unit, pointer, needs, description, speed, getter) \
  {kTraining, id, label, unit, pointer, needs, description, speed},
#include "scenario/training_metric_table.hpp"
#define DEPLOYMENT_SEARCH_METRIC(id, label, unit, pointer, needs, description, getter) \
  {kDeploymentSearch, id, label, unit, pointer, needs, description, not_speed},
#define TRAINING_SEARCH_METRIC(id, label, unit, pointer, needs, description, getter) \
  {kTrainingSearch, id, label, unit, pointer, needs, description, not_speed},
#include "scenario/search_metric_table.hpp"
  };
  return list;
}

const MetricInfo* find_metric(MetricKind kind, const std::string& id) {
  return find_in(metric_catalogue(), [&](const MetricInfo& m) { return m.kind == kind && id == m.id; });
}

const MetricInfo* find_metric_at(MetricKind kind, const std::string& pointer) {
  return find_in(metric_catalogue(), [&](const MetricInfo& m) { return m.kind == kind && pointer == m.pointer; });
}

const MetricKind* metric_kind_of_result(const std::string& result_kind) {
  static const std::pair<const char*, MetricKind> kinds[] = {{"serving_latency", kLatency},
                                                             {"serving_simulation", kServing},
                                                             {"training", kTraining},
                                                             {"deployment_search", kDeploymentSearch},
                                                             {"training_search", kTrainingSearch}};
  for (const auto& k : kinds)
    if (result_kind == k.first) return &k.second;
  return nullptr;
}

std::vector<std::string> metric_ids(MetricKind kind) {
  std::vector<std::string> ids;
  for (const auto& m : metric_catalogue())
    if (m.kind == kind) ids.emplace_back(m.id);
  return ids;
}

const std::vector<std::string>& default_key_metrics(MetricKind kind) {
  static const std::vector<std::string> latency = {"ttft_ms", "tpot_ms", "e2e_ms", "output_tokens_per_s"};
  static const std::vector<std::string> serving = {"ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms",
                                                   "e2e_p50_s",   "e2e_p99_s",   "output_tokens_per_s"};
  static const std::vector<std::string> training = {"tokens_per_s_per_gpu", "mfu_pct", "step_time_ms",
                                                    "memory_per_gpu_GiB"};
  static const std::vector<std::string> none;
  switch (kind) {
    case MetricKind::kLatency: return latency;
    case MetricKind::kServing: return serving;
    case MetricKind::kTraining: return training;
    case MetricKind::kDeploymentSearch:
    case MetricKind::kTrainingSearch: return none;
  }
  return none;
}

std::vector<std::string> headline_metrics(MetricKind kind, const std::function<bool(const std::string&)>& has_optional) {
  struct Card {
    const char* id;
    bool optional;  // shown only where the run has the figure (has_optional)
    // The steady window's counterpart, shown instead where the run has it
    // (has_optional): the figure the verdict judges.
    const char* steady_id = nullptr;
  };
  static const std::vector<Card> latency = {
      {"ttft_ms", false}, {"tpot_ms", false}, {"e2e_ms", false}, {"output_tokens_per_s", false}};
  static const std::vector<Card> serving = {
      {"ttft_p50_ms", false},         {"ttft_p99_ms", false},
      {"tpot_p50_ms", false},         {"e2e_p99_s", false},
      {"output_tokens_per_s", false}, {"output_tokens_per_s_per_gpu", false},
      {"goodput_requests_per_s", false, "steady_goodput_requests_per_s"},
      {"slo_attainment", false, "steady_slo_attainment"},
      {"max_qps", true}};
  static const std::vector<Card> training = {{"step_time_ms", false},
                                             {"tokens_per_s_per_gpu", false},
                                             {"mfu_pct", false},
                                             {"time_to_train_days", true},
                                             {"memory_per_gpu_GiB", false}};
  static const std::vector<Card> none;
  const std::vector<Card>* cards = &none;
  switch (kind) {
    case MetricKind::kLatency: cards = &latency; break;
    case MetricKind::kServing: cards = &serving; break;
    case MetricKind::kTraining: cards = &training; break;
    case MetricKind::kDeploymentSearch:
    case MetricKind::kTrainingSearch: break;
  }
  std::vector<std::string> ids;
  for (const Card& c : *cards)
    if (c.steady_id && has_optional(c.steady_id)) ids.emplace_back(c.steady_id);
    else if (!c.optional || has_optional(c.id)) ids.emplace_back(c.id);
  return ids;
}

json headline_metrics_json(MetricKind kind, const std::function<bool(const std::string&)>& has_optional) {
  json out = json::array();
  for (const std::string& id : headline_metrics(kind, has_optional)) out.push_back(id);
  return out;
}

const json* metric_value(const MetricInfo& m, const json& result) {
  const json::json_pointer ptr(m.pointer);
  return result.contains(ptr) ? &result.at(ptr) : nullptr;
}

const std::vector<DistributionInfo>& distribution_catalogue() {
  static const std::vector<DistributionInfo> list = {
      {"ttft_ms", "TTFT", "ms", "/metrics/ttft_ms", "time to first token of each request"},
      {"tpot_ms", "TPOT", "ms", "/metrics/tpot_ms", "time per output token after the first, per request"},
      {"itl_ms", "inter-token latency", "ms", "/metrics/itl_ms", "time between two output tokens of a request"},
      {"e2e_s", "E2E latency", "s", "/metrics/e2e_s", "arrival to last token of each request"},
      {"queueing_ms", "queueing delay", "ms", "/metrics/queueing_ms", "arrival to first scheduling of each request"},
  };
  return list;
}

const std::vector<std::string>& distribution_stats() {
  static const std::vector<std::string> stats = {"mean", "p50", "p90", "p99", "max"};
  return stats;
}

json distribution_catalogue_json() {
  json out = json::array();
  for (const auto& d : distribution_catalogue())
    out.push_back({{"kind", "serving"},
                   {"id", d.id},
                   {"label", d.label},
                   {"unit", d.unit},
                   {"pointer", d.pointer},
                   {"stats", distribution_stats()},
                   {"description", d.description}});
  return out;
}

const std::vector<MemoryPartInfo>& memory_parts() {
  static const std::vector<MemoryPartInfo> list = {
      {kLatency, "weights_GiB", "Weights", "model weights resident on each GPU (after TP/PP sharding)"},
      {kLatency, "kv_cache_GiB", "KV cache", "attention key/value cache for the whole batch at full length"},
      {kLatency, "activations_GiB", "Activations", "peak transient activations"},
      {kLatency, "runtime_overhead_GiB", "Runtime overhead", "CUDA context, allocator and framework reserve"},
      {kLatency, "free_GiB", "Free", "capacity left over"},
      {kLatency, "capacity_GiB", "Capacity", "GPU memory"},
      {kServing, "weights_GiB", "Weights", "model weights resident on each GPU of the pool (after TP/PP sharding)"},
      {kServing, "kv_cache_GiB", "KV cache", "KV blocks allocated from what the other parts leave of the usable memory"},
      {kServing, "activations_GiB", "Activations", "peak transient activations of the largest step"},
      {kServing, "draft_weights_GiB", "Draft model", "weights of the speculative draft model"},
      {kServing, "lora_adapters_GiB", "LoRA adapters", "adapter slots resident on the GPU"},
      {kServing, "runtime_overhead_GiB", "Runtime overhead", "CUDA context, allocator and framework reserve"},
      {kServing, "unused_GiB", "Unused", "capacity outside gpu_memory_utilization"},
      {kServing, "usable_GiB", "Usable", "gpu_memory_utilization x capacity"},
      {kServing, "capacity_GiB", "Capacity", "GPU memory"},
      {kTraining, "params_GiB", "Parameters", "model weights held by this GPU (after TP/PP/ZeRO-3 sharding)"},
      {kTraining, "grads_GiB", "Gradients", "gradient buffers (sharded with ZeRO-2/3)"},
      {kTraining, "optimizer_states_GiB", "Optimizer states", "master weights and optimizer moments in GPU memory (sharded with ZeRO >= 1)"},
      {kTraining, "activations_GiB", "Activations", "stored activations of the micro-batches in flight, plus the working set"},
      {kTraining, "temporary_GiB", "Temporary buffers", "logits, communication and gather buffers at the peak"},
      {kTraining, "runtime_overhead_GiB", "Runtime overhead", "CUDA context, workspaces and NCCL buffers"},
      {kTraining, "free_GiB", "Free", "capacity left over"},
      {kTraining, "activations_stored_GiB", "of which stored activations", "activations kept from the forward until the backward"},
      {kTraining, "activations_working_GiB", "of which working set", "activations alive inside one layer at the peak"},
      {kTraining, "logits_GiB", "of which logits", "output logits of one micro-batch"},
      {kTraining, "host_optimizer_states_GiB", "Optimizer states in host memory", "with CPU offload, in host memory (not counted on the GPU)"},
      {kTraining, "overflow_GiB", "Over capacity", "what does not fit: total minus capacity"},
      {kTraining, "total_GiB", "Total (peak)", "peak memory on the most loaded GPU"},
      {kTraining, "capacity_GiB", "Capacity", "GPU memory"},
  };
  return list;
}

const MemoryPartInfo* find_memory_part(MetricKind kind, const std::string& id) {
  return find_in(memory_parts(), [&](const MemoryPartInfo& p) { return p.kind == kind && id == p.id; });
}

json memory_parts_json() {
  json out = json::array();
  for (const auto& p : memory_parts())
    out.push_back({{"kind", metric_kind_name(p.kind)},
                   {"id", p.id},
                   {"label", p.label},
                   {"unit", "GiB"},
                   {"description", p.description}});
  return out;
}

const std::vector<StepPartInfo>& step_parts() {
  static const std::vector<StepPartInfo> list = {
      {"compute", "Compute", "kernels of one family, forward and backward"},
      {"recompute", "Recomputation", "forward passes recomputed in the backward"},
      {"exposed_comm/tp", "Exposed TP communication", "tensor-parallel collectives not hidden behind compute"},
      {"exposed_comm/ep", "Exposed EP all-to-all", "expert-parallel all-to-all not hidden behind compute"},
      {"exposed_comm/cp", "Exposed CP ring exchange", "context-parallel ring exchange not hidden behind compute"},
      {"exposed_comm/fsdp", "Exposed FSDP gather", "FSDP parameter all-gathers not hidden behind compute"},
      {"exposed_comm/dp", "Exposed DP gradient sync", "data-parallel gradient sync not hidden behind compute"},
      {"pipeline_bubble", "Pipeline bubble and waits", "idle time of the pipeline schedule (fill, drain and waits)"},
      {"optimizer", "Optimizer step", "optimizer update and parameter casts"},
      {"cpu_offload", "CPU offload", "optimizer update in host memory and its PCIe transfers"},
      {"framework", "Framework", "gradient-norm and FP8 amax all-reduces, input batch copies"},
      {"overhead", "Overhead", "host and framework overhead"},
  };
  return list;
}

const StepPartInfo* find_step_part(const std::string& id) {
  return find_in(step_parts(), [&](const StepPartInfo& p) { return id == p.id; });
}

json step_parts_json() {
  json out = json::array();
  for (const auto& p : step_parts())
    out.push_back({{"kind", "training"}, {"id", p.id}, {"label", p.label}, {"unit", "ms"}, {"description", p.description}});
  return out;
}

json metric_catalogue_json() {
  json out = json::array();
  for (const auto& m : metric_catalogue())
    out.push_back({{"kind", metric_kind_name(m.kind)},
                   {"id", m.id},
                   {"label", m.label},
                   {"unit", m.unit},
                   {"pointer", m.pointer},
                   {"needs", m.needs},
                   {"description", m.description}});
  return out;
}

}  // namespace sightline
