// Table for "serving_simulation" results: the scenario's key metrics first,
// then latency distributions, throughput, KV cache, comparison and search.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <vector>

#include "core/json_text.hpp"
#include "cli/cli_common.hpp"

namespace sightline::cli {

namespace {

std::string num(const json& v, int digits) {
  if (v.is_null()) return "-";
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_integer() || v.is_number_unsigned()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return fixed(v.get<double>(), digits);
  if (v.is_string()) return v.get<std::string>();
  return safe_dump(v);
}

const json kNull;

const json& get(const json& j, const char* key) {
  static const json null_value;
  if (!j.is_object()) return null_value;
  auto it = j.find(key);
  return it == j.end() ? null_value : *it;
}

void row(const std::string& label, const std::string& value, const std::string& unit = "") {
  // A label longer than its column pushes the value right rather than into it.
  std::cout << "  " << std::left << std::setw(44) << label << std::right << std::setw(label.size() > 44 ? 0 : 14)
            << (label.size() > 44 ? "  " + value : value) << (unit.empty() ? "" : "  " + unit) << "\n";
}

// One row per catalogued metric the result has (absent ones are skipped): the
// catalogue's label and unit, so the table says what the page says.
void metric_rows(const json& r, std::initializer_list<const char*> ids) {
  for (const char* id : ids) {
    const MetricInfo& info = catalogued(MetricKind::kServing, id);
    const json& v = catalogued_value(info, r);
    if (v.is_null()) continue;
    const std::string unit = info.unit;
    row(info.label, num(v, unit == "tokens/s" || unit == "KiB" ? 1 : 3), unit == "count" || unit == "bool" ? "" : unit);
  }
}

// The scenario, model, cluster and serving lines, and the engine's verdict.
void print_serving_header(const json& r) {
  const json& dep = r["deployment"];
  std::cout << "scenario  " << num(r["scenario"]["id"], 0) << "  " << num(r["scenario"]["title"], 0) << "\n";
  std::cout << "model     " << num(r["model"]["name"], 0) << " (" << fixed(r["model"]["params_B"], 2) << " B params)\n";
  std::cout << "cluster   " << num(dep["gpus"], 0) << " GPUs:";
  for (const json& p : dep["pools"])
    std::cout << "  " << num(p["name"], 0) << " " << num(p["replicas"], 0) << " x (tp=" << num(p["tp"], 0)
              << " pp=" << num(p["pp"], 0) << " " << num(p["gpu"], 0) << ", " << num(p["role"], 0) << ")";
  std::cout << "\n";
  std::cout << "serving   " << num(dep["scheduler"], 0) << "/" << num(dep["priority"], 0) << ", KV "
            << num(dep["kv_allocation"], 0) << " (block " << num(dep["block_size"], 0) << "), router "
            << num(dep["router"], 0) << ", weights " << num(dep["weights"], 0)
            << ", cost tier: " << num(r["cost_tier"], 0) << "\n";
  if (dep.contains("scheduler_source")) std::cout << "scheduler " << num(dep["scheduler_source"], 0) << "\n";
  if (dep.contains("kv_admission_source")) std::cout << "KV admit  " << num(dep["kv_admission_source"], 0) << "\n";
  else if (dep.contains("kv_admission")) std::cout << "KV admit  " << num(dep["kv_admission"], 0) << "\n";
  if (dep.contains("max_num_seqs_source"))
    std::cout << "batch     at most " << num(dep["max_num_seqs"], 0) << " running per replica: "
              << num(dep["max_num_seqs_source"], 0) << "\n";

  // The engine's verdict line, and its steady-window throughput and goodput.
  if (r.contains("headline")) {
    const json& h = r["headline"];
    std::cout << "\nverdict   " << num(h["line"], 0) << "\n";
    std::cout << "steady    " << num(h["throughput_qps"], 3) << " req/s completed, goodput " << num(h["goodput_qps"], 3)
              << " req/s, over " << num(h["window_requests"], 0) << " requests after the warm-up and before the drain\n";
    if (h["overloaded"] == true && h["estimated_capacity_qps"].is_number())
      std::cout << "OVERLOAD  arrivals outrun the service rate; estimated capacity about " << num(h["estimated_capacity_qps"], 3)
                << " req/s\n";
    else if (h["overloaded"] == true)
      std::cout << "OVERLOAD  arrivals outrun the service rate; no capacity estimate (no request completed while "
                   "requests were arriving)\n";
  }
}

// Distributions over requests: names and units from the catalogue.
void print_serving_distributions(const json& r) {
  std::cout << "\n  " << std::left << std::setw(26) << "" << std::right;
  for (const std::string& k : distribution_stats()) std::cout << std::setw(12) << k;
  std::cout << "\n";
  for (const DistributionInfo& d : distribution_catalogue()) {
    const json* stats = r.contains(json::json_pointer(d.pointer)) ? &r.at(json::json_pointer(d.pointer)) : nullptr;
    if (stats == nullptr) continue;
    const std::string unit = d.unit;
    std::cout << "  " << std::left << std::setw(26) << (std::string(d.label) + " (" + unit + ")") << std::right;
    for (const std::string& k : distribution_stats()) std::cout << std::setw(12) << num(get(*stats, k.c_str()), unit == "s" ? 3 : 2);
    std::cout << "\n";
  }
}

// The compare block: every ratio and speedup the result has, labelled by its
// catalogue entry; "this" and "baseline" where the ratio is of a catalogued
// metric of the same id.
void print_serving_compare(const json& r) {
  const json& cmp = r["compare"];
  const json& baseline = cmp["baseline"];
  std::cout << "\ncompared with: " << num(cmp["label"], 0) << "\n";
  std::cout << "  " << std::left << std::setw(44) << "" << std::right << std::setw(14) << "this" << std::setw(14)
            << "baseline" << std::setw(10) << "ratio\n";
  // Every ratio and speedup the result has, labelled by its catalogue entry; "this"
  // and "baseline" where the ratio is of a catalogued metric of the same id.
  for (const MetricInfo& info : metric_catalogue()) {
    const std::string ptr = info.pointer;
    if (info.kind != MetricKind::kServing || (ptr.rfind("/compare/ratio/", 0) != 0 && ptr.rfind("/compare/speedup/", 0) != 0))
      continue;
    const json* present = metric_value(info, r);
    if (present == nullptr) continue;  // a null ratio (over a zero) still gets its row, as on the page
    const json& ratio = *present;
    const MetricInfo* base = find_metric(MetricKind::kServing, ptr.substr(ptr.rfind('/') + 1));
    const json& a = base == nullptr ? kNull : catalogued_value(*base, r);
    const json& bb = base == nullptr ? kNull : catalogued_value(*base, baseline);
    std::cout << "  " << std::left << std::setw(44) << info.label << std::right << std::setw(14) << num(a, 2)
              << std::setw(14) << num(bb, 2) << std::setw(10) << num(ratio, 3) << "\n";
  }
}

}  // namespace

void print_serving_table(const json& r) {
  const json& m = r["metrics"];
  print_serving_header(r);

  // Key metrics, in the scenario's order (the array's).
  std::cout << "\nkey metrics\n";
  for (const json& k : r["key_metrics"]) row(num(k["label"], 0), num(k["value"], 3), num(k["unit"], 0));

  std::cout << "\nrequests\n";
  metric_rows(r, {"requests_total", "requests_completed", "requests_dropped", "requests_unfinished", "duration_s"});

  print_serving_distributions(r);

  std::cout << "\nthroughput\n";
  metric_rows(r, {"requests_per_s", "input_tokens_per_s", "output_tokens_per_s", "total_tokens_per_s", "output_tokens_per_s_per_gpu",
                  "goodput_requests_per_s", "slo_attainment"});
  std::cout << "\nscheduling\n";
  metric_rows(r, {"running_mean", "running_max", "queue_depth_mean", "queue_depth_max", "batch_size_mean",
                  "tokens_per_step_mean", "gpu_utilization"});
  // Achieved utilization: the share of the GPUs' peaks the steps' work uses,
  // over the run, while busy, and per step.
  std::cout << "\nGPU utilization\n";
  metric_rows(r, {"mfu_wall", "mfu_busy", "mfu_step_p50", "mfu_step_p90", "mbu_wall", "mbu_busy", "mbu_step_p50",
                  "mbu_step_p90"});
  std::cout << "\nKV cache\n";
  metric_rows(r, {"kv_blocks_total", "kv_peak_utilization", "kv_memory_utilization", "kv_fragmentation", "preemptions",
                  "kv_recomputes", "kv_swaps_out", "kv_per_token_KiB", "kv_capacity_tokens", "max_concurrent_at_max_len",
                  "prefix_hit_rate", "spec_tokens_per_step", "spec_expected_tokens_per_step", "lora_adapter_loads",
                  "lora_load_fraction", "kv_transfer_mean_ms", "kv_transfer_p99_ms", "moe_expert_time_fraction",
                  "moe_all_to_all_exposed_fraction"});
  if (m.contains("sessions")) {
    std::cout << "\nsessions (" << num(m["sessions"]["completed"], 0) << " of " << num(m["sessions"]["total"], 0)
              << " completed, " << num(m["sessions"]["turns"], 0) << " turns)\n";
    metric_rows(r, {"session_ttft_first_mean_ms", "session_ttft_returning_mean_ms", "session_ttft_returning_p99_ms",
                    "session_duration_mean_s", "session_returning_hit_rate"});
  }
  if (m.contains("kv_offload")) {
    // One row per tier: the catalogue has ids for the first two, the table shows all.
    std::cout << "\nKV offload tiers (prompt tokens found, reloads " << num(m["kv_offload"]["reload_overlap"], 0) << ")\n";
    metric_rows(r, {"offload_hbm_hit_rate"});
    for (const json& t : m["kv_offload"]["tiers"])
      row(num(t["name"], 0), num(t["hit_token_fraction"], 3), "fraction");
    metric_rows(r, {"offload_exposed_reload_s"});
  }

  std::cout << "\nmemory per GPU (GiB, first pool)\n";
  const json& mem = r["memory_per_gpu"][0];
  for (const char* k : {"capacity_GiB", "weights_GiB", "draft_weights_GiB", "lora_adapters_GiB", "activations_GiB",
                        "runtime_overhead_GiB", "kv_cache_GiB", "unused_GiB"}) {
    const std::string label = memory_label(MetricKind::kServing, k);
    row(label, num(mem[k], 3));
  }
  if (r.contains("quantization")) {
    const json& q = r["quantization"];
    std::cout << "\nquantization (" << num(q["weights"], 0) << " vs " << num(q["unquantized_weights"], 0) << ")\n";
    metric_rows(r, {"quant_decode_step_ms", "quant_decode_step_unquantized_ms", "quant_decode_speedup",
                    "quant_prefill_speedup", "quant_weights_GiB", "quant_weights_unquantized_GiB",
                    "quant_unquantized_fits"});
  }
  if (r.contains("compare")) print_serving_compare(r);
  if (r.contains("max_qps")) {
    const json& q = r["max_qps"];
    const MetricInfo& info = catalogued(MetricKind::kServing, "max_qps");
    std::cout << "\n" << info.label << ": " << num(q["qps"], 3) << " " << info.unit << " (" << q["runs"].size()
              << " runs of " << num(q["requests_per_run"], 0) << " requests)";
    if (!q["note"].is_null()) std::cout << "; " << num(q["note"], 0);
    std::cout << "\n";
  }
  std::cout << "\nGPU busy time by kernel family (s)\n";
  for (auto it = m["gpu"]["busy_time_s_by_family"].begin(); it != m["gpu"]["busy_time_s_by_family"].end(); ++it)
    row(it.key(), num(it.value(), 3));
  std::cout << "\nenergy and cost\n";
  metric_rows(r, {"energy_per_output_token_J", "mean_power_per_gpu_W", "usd_per_million_output_tokens"});
  for (const json& w : r["warnings"]) std::cout << "warning: " << w.get<std::string>() << "\n";
}

}  // namespace sightline::cli
