#pragma once
// The one catalogue of metrics a result can headline: for every result kind,
// each metric's id, label, unit, description and where it lives in the result.
// Scenario readers validate `key_metrics` against it, the jobs write their
// key_metrics labels from it, and the API exports it (listRegistries), so the
// page and the CLI tables show the same words and units as the engine.
#include <functional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline {

enum class MetricKind { kLatency, kServing, kTraining, kDeploymentSearch, kTrainingSearch };

// How the run's end-to-end speed reaches a metric: the quantity the
// development rows measure (TTFT, E2E latency, output throughput; training
// throughput and step time) and the figures proportional to it. kTime: the
// figure grows when the run is slower (a latency, a step time); kRate: it
// falls (a throughput, MFU). kNone: a share, a size, a count, a part of a
// step, a floor, a spread, or a figure an SLO decides (goodput, max QPS: the
// bound runs carry the kernels' error through the SLO; a scaled band would
// not). The kind's measured end-to-end error band (jobs/kind_error_band.hpp)
// widens the interval of exactly the kTime and kRate figures.
enum class EndToEndSpeed { kNone, kTime, kRate };

struct MetricInfo {
  MetricKind kind;
  const char* id;
  const char* label;
  const char* unit;
  const char* pointer;  // JSON pointer into the result of this kind
  const char* needs;    // "" or the input the metric needs: "compare", "scaling", "tokens_to_train", "gpu_hour_usd",
                        // "sessions" (serving.workload.sessions), "kv_offload" (serving.kv_cache.offload)
  const char* description;
  EndToEndSpeed speed;  // the tables' speed column
};

// "latency", "serving", "training", "deployment_search", "training_search"
// (the searches' kinds are their results' "kind").
const char* metric_kind_name(MetricKind kind);

const std::vector<MetricInfo>& metric_catalogue();
// nullptr when `kind` has no metric `id`.
const MetricInfo* find_metric(MetricKind kind, const std::string& id);
// The metric of `kind` the result writes at JSON pointer `pointer`; nullptr when none.
const MetricInfo* find_metric_at(MetricKind kind, const std::string& pointer);
// The catalogue kind of a result's "kind" ("serving_latency", "serving_simulation",
// "training", "deployment_search", "training_search"); nullptr for any other.
const MetricKind* metric_kind_of_result(const std::string& result_kind);
// The ids of one kind, in catalogue order (for "valid: ..." error messages).
std::vector<std::string> metric_ids(MetricKind kind);
// The key metrics a result of `kind` headlines when the scenario names none.
const std::vector<std::string>& default_key_metrics(MetricKind kind);
// The headline cards of a result of `kind`, in order: the engine's one choice,
// written into every latency, serving and training result as
// "headline_metrics" (ids of this catalogue), so the page draws its cards from
// the result and keeps no list of its own. Two cards depend on the run:
// max_qps (serving) only where a capacity search ran, time_to_train_days
// (training) only where the scenario gives tokens to train; `has_optional(id)`
// answers for those. The searches headline their key_metrics: empty here.
std::vector<std::string> headline_metrics(MetricKind kind, const std::function<bool(const std::string&)>& has_optional);
json headline_metrics_json(MetricKind kind, const std::function<bool(const std::string&)>& has_optional);
// The value at the metric's pointer in `result`; nullptr when absent.
const json* metric_value(const MetricInfo& m, const json& result);

// The per-request distributions a serving result summarizes (an object of
// statistics at `pointer`): the CLI's and the page's percentile tables and CDFs.
struct DistributionInfo {
  const char* id;
  const char* label;
  const char* unit;
  const char* pointer;
  const char* description;
};
const std::vector<DistributionInfo>& distribution_catalogue();
// The statistics the tables show, in column order: mean, p50, p90, p99, max.
const std::vector<std::string>& distribution_stats();
// [{kind, id, label, unit, pointer, stats, description}].
json distribution_catalogue_json();

// The parts of a result's memory per GPU (keys of `memory_per_gpu`, GiB): the
// CLI's and the page's memory tables and charts, in the order they stack.
struct MemoryPartInfo {
  MetricKind kind;
  const char* id;  // key in memory_per_gpu (an object; for serving, each pool's object)
  const char* label;
  const char* description;
};
const std::vector<MemoryPartInfo>& memory_parts();
const MemoryPartInfo* find_memory_part(MetricKind kind, const std::string& id);
// [{kind, id, label, unit: "GiB", description}].
json memory_parts_json();

// The parts of a training step (keys of `step_breakdown_ms`, ms; `exposed_comm/tp`
// for the nested ones; `compute` labels each kernel family's part, "<label>: <family>"):
// the CLI's and the page's step-time breakdowns.
struct StepPartInfo {
  const char* id;
  const char* label;
  const char* description;
};
const std::vector<StepPartInfo>& step_parts();
const StepPartInfo* find_step_part(const std::string& id);
// [{kind: "training", id, label, unit: "ms", description}].
json step_parts_json();

// The whole catalogue as [{kind, id, label, unit, pointer, needs, description}].
json metric_catalogue_json();

}  // namespace sightline
