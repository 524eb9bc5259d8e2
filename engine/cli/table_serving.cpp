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

const json& get(const json& j, const char* key) {
  static const json null_value;
  if (!j.is_object()) return null_value;
  auto it = j.find(key);
  return it == j.end() ? null_value : *it;
}

void row(const std::string& label, const std::string& value, const std::string& unit = "") {
  std::cout << "  " << std::left << std::setw(44) << label << std::right << std::setw(14) << value
            << (unit.empty() ? "" : "  " + unit) << "\n";
}

void dist_row(const char* label, const json& d, int digits) {
  std::cout << "  " << std::left << std::setw(14) << label << std::right;
  for (const char* k : {"mean", "p50", "p90", "p99", "max"}) std::cout << std::setw(12) << num(get(d, k), digits);
  std::cout << "\n";
}

}  // namespace

void print_serving_table(const json& r) {
  const json& m = r["metrics"];
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

  // Key metrics, in the scenario's order (the array's).
  std::cout << "\nkey metrics\n";
  for (const json& k : r["key_metrics"]) row(num(k["label"], 0), num(k["value"], 3), num(k["unit"], 0));

  const json& req = m["requests"];
  std::cout << "\nrequests  " << num(req["total"], 0) << " total, " << num(req["completed"], 0) << " completed, "
            << num(req["dropped"], 0) << " dropped, " << num(req["unfinished"], 0) << " unfinished, over "
            << fixed(m["duration_s"], 2) << " s\n";
  std::cout << "\nlatency       " << std::right;
  for (const char* k : {"mean", "p50", "p90", "p99", "max"}) std::cout << std::setw(12) << k;
  std::cout << "\n";
  dist_row("TTFT (ms)", m["ttft_ms"], 2);
  dist_row("TPOT (ms)", m["tpot_ms"], 2);
  dist_row("ITL (ms)", m["itl_ms"], 2);
  dist_row("E2E (s)", m["e2e_s"], 3);
  dist_row("queue (ms)", m["queueing_ms"], 2);

  std::cout << "\nthroughput\n";
  const json& t = m["throughput"];
  row("requests/s", num(t["requests_per_s"], 3));
  row("input tokens/s", num(t["input_tokens_per_s"], 1));
  row("output tokens/s", num(t["output_tokens_per_s"], 1));
  row("output tokens/s per GPU", num(t["output_tokens_per_s_per_gpu"], 1));
  if (!m["goodput"].is_null()) {
    row("goodput (requests/s within the SLO)", num(m["goodput"]["requests_per_s"], 3));
    row("SLO attainment", num(m["goodput"]["slo_attainment"], 3));
  }
  const json& c = m["concurrency"];
  std::cout << "\nscheduling\n";
  row("running requests mean / max", num(c["running_mean"], 1) + " / " + num(c["running_max"], 0));
  row("queue depth mean / max", num(c["waiting_mean"], 1) + " / " + num(c["waiting_max"], 0));
  row("batch size mean", num(c["batch_size_mean"], 1));
  row("tokens per step mean", num(c["tokens_per_step_mean"], 1));
  row("GPU busy fraction (a step running)", num(m["gpu"]["busy_fraction"], 3));
  // Achieved utilization: the share of the GPUs' peaks the steps' work uses,
  // over the run, while busy, and per step.
  const json& gpu = m["gpu"];
  if (gpu.contains("mfu") && gpu.contains("mbu")) {
    std::cout << "\nGPU utilization  over run  while busy   step mean    step p50    step p90\n";
    auto util_row = [&](const char* label, const json& u) {
      std::cout << "  " << std::left << std::setw(14) << label << std::right << std::setw(11)
                << num(u["over_wall_time"], 3) << std::setw(12) << num(u["over_busy_time"], 3);
      for (const char* k : {"mean", "p50", "p90"}) std::cout << std::setw(12) << num(get(u["per_step"], k), 3);
      std::cout << "\n";
    };
    util_row("MFU (compute)", gpu["mfu"]);
    util_row("MBU (HBM)", gpu["mbu"]);
  }
  const json& kv = m["kv_cache"];
  std::cout << "\nKV cache\n";
  row("blocks (all replicas)", num(kv["blocks_total"], 0));
  row("peak block utilization", num(kv["peak_block_utilization"], 3));
  row("memory holding tokens / fragmentation", num(kv["token_utilization"], 3) + " / " + num(kv["fragmentation"], 3));
  row("preemptions (recompute / swap)", num(kv["preemptions"], 0) + " (" + num(kv["recomputes"], 0) + " / " +
                                            num(kv["swaps_out"], 0) + ")");
  const json& cap = r["capacity"];
  row("KV per token (replica)", num(cap["kv_KiB_per_token"], 1), "KiB");
  row("KV capacity per replica", num(cap["kv_tokens_per_replica"], 0), "tokens");
  row("max concurrent max_model_len requests", num(cap["max_concurrent_at_max_len"], 0));
  if (m.contains("prefix_cache")) row("prefix cache: prompt tokens cached", num(m["prefix_cache"]["cached_token_fraction"], 3));
  if (m.contains("speculative"))
    row("speculative: tokens per verify step", num(m["speculative"]["tokens_per_verify_step"], 2) + " (expected " +
                                                   num(m["speculative"]["expected_tokens_per_verify_step"], 2) + ")");
  if (m.contains("lora"))
    row("LoRA adapter loads / load share of busy", num(m["lora"]["adapter_loads"], 0) + " / " +
                                                       num(m["lora"]["load_time_fraction"], 3));
  if (m.contains("kv_transfer"))
    row("KV transfer mean / p99 (ms)", num(m["kv_transfer"]["transfer_ms"]["mean"], 3) + " / " +
                                           num(m["kv_transfer"]["transfer_ms"]["p99"], 3));
  if (m.contains("moe")) row("MoE expert share of busy time", num(m["moe"]["expert_time_fraction"], 3));

  std::cout << "\nmemory per GPU (GiB, first pool)\n";
  const json& mem = r["memory_per_gpu"][0];
  for (const char* k : {"capacity_GiB", "weights_GiB", "draft_weights_GiB", "lora_adapters_GiB", "activations_GiB",
                        "runtime_overhead_GiB", "kv_cache_GiB", "unused_GiB"}) {
    std::string label = k;
    label = label.substr(0, label.size() - 4);
    row(label, num(mem[k], 3));
  }
  if (r.contains("quantization")) {
    const json& q = r["quantization"];
    std::cout << "\nquantization (" << num(q["weights"], 0) << " vs " << num(q["unquantized_weights"], 0) << ")\n";
    row("decode step, batch 1 (ms)", num(q["decode_step_ms"], 3) + " vs " + num(q["decode_step_ms_unquantized"], 3));
    row("decode speedup", num(q["decode_speedup"], 2), "x");
    row("prefill speedup", num(q["prefill_speedup"], 2), "x");
    row("weights per GPU (GiB)", num(q["weights_GiB"], 2) + " vs " + num(q["weights_GiB_unquantized"], 2));
    row("unquantized weights fit", num(q["unquantized_fits"], 0));
  }
  if (r.contains("compare")) {
    const json& cmp = r["compare"];
    const json& b = cmp["baseline"]["metrics"];
    std::cout << "\ncompared with: " << num(cmp["label"], 0) << "\n";
    std::cout << "  " << std::left << std::setw(30) << "" << std::right << std::setw(14) << "this" << std::setw(14)
              << "baseline" << std::setw(10) << "ratio\n";
    auto cmp_row = [&](const char* label, const json& a, const json& bb, const char* ratio_key) {
      std::cout << "  " << std::left << std::setw(30) << label << std::right << std::setw(14) << num(a, 2)
                << std::setw(14) << num(bb, 2) << std::setw(10) << num(get(cmp["ratio"], ratio_key), 3) << "\n";
    };
    cmp_row("output tokens/s", m["throughput"]["output_tokens_per_s"], b["throughput"]["output_tokens_per_s"],
            "output_tokens_per_s");
    cmp_row("TTFT mean (ms)", m["ttft_ms"]["mean"], b["ttft_ms"]["mean"], "ttft_mean_ms");
    cmp_row("TTFT p99 (ms)", m["ttft_ms"]["p99"], b["ttft_ms"]["p99"], "ttft_p99_ms");
    cmp_row("TPOT mean (ms)", m["tpot_ms"]["mean"], b["tpot_ms"]["mean"], "tpot_mean_ms");
    cmp_row("TPOT p99 (ms)", m["tpot_ms"]["p99"], b["tpot_ms"]["p99"], "tpot_p99_ms");
    cmp_row("E2E p50 (s)", m["e2e_s"]["p50"], b["e2e_s"]["p50"], "e2e_p50_s");
    cmp_row("running requests mean", m["concurrency"]["running_mean"], b["concurrency"]["running_mean"], "running_mean");
    if (!m["goodput"].is_null() && !b["goodput"].is_null())
      cmp_row("goodput (req/s)", m["goodput"]["requests_per_s"], b["goodput"]["requests_per_s"], "goodput_requests_per_s");
  }
  if (r.contains("max_qps")) {
    const json& q = r["max_qps"];
    std::cout << "\nmax sustainable QPS under the SLO: " << num(q["qps"], 3) << " req/s (" << q["runs"].size()
              << " runs of " << num(q["requests_per_run"], 0) << " requests)";
    if (!q["note"].is_null()) std::cout << "; " << num(q["note"], 0);
    std::cout << "\n";
  }
  std::cout << "\nGPU busy time by kernel family (s)\n";
  for (auto it = m["gpu"]["busy_time_s_by_family"].begin(); it != m["gpu"]["busy_time_s_by_family"].end(); ++it)
    row(it.key(), num(it.value(), 3));
  std::cout << "\nenergy per output token " << num(m["energy"]["per_output_token_J"], 3) << " J (mean "
            << num(m["energy"]["mean_power_per_gpu_W"], 1) << " W per GPU)";
  if (!m["cost"].is_null())
    std::cout << ", cost per million output tokens $" << num(m["cost"]["usd_per_million_output_tokens"], 3);
  std::cout << "\n";
  for (const json& w : r["warnings"]) std::cout << "warning: " << w.get<std::string>() << "\n";
}

}  // namespace sightline::cli
