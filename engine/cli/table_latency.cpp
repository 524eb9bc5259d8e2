// Table for "serving_latency" results.
#include <iomanip>
#include <iostream>

#include "cli/cli_common.hpp"

namespace sightline::cli {

void print_latency_table(const json& r) {
  const json& mem = r["memory_per_gpu"];
  std::cout << "scenario  " << r["scenario"]["id"].get<std::string>() << "  " << r["scenario"]["title"].get<std::string>()
            << "\n";
  std::cout << "model     " << r["model"]["name"].get<std::string>() << " (" << fixed(r["model"]["params_B"], 2)
            << " B params)\n";
  std::cout << "gpus      " << r["deployment"]["gpus"] << " x " << r["deployment"]["gpu"].get<std::string>()
            << "  tp=" << r["deployment"]["tp"] << " pp=" << r["deployment"]["pp"]
            << "  cost tier: " << r["cost_tier"].get<std::string>() << "\n\n";
  if (r.contains("warnings"))
    for (const json& w : r["warnings"]) std::cout << "warning: " << w.get<std::string>() << "\n";
  std::cout << "latency\n";
  // Labels and units from the metric catalogue (the page shows the same words).
  for (const char* id : {"ttft_ms", "tpot_ms", "e2e_ms", "output_tokens_per_s", "decode_tokens_per_s", "prefill_tokens_per_s",
                         "decode_weight_read_ms", "prefill_compute_ms", "prefill_mfu", "prefill_mbu", "decode_mfu", "decode_mbu",
                         "energy_J_per_output_token"}) {
    const MetricInfo& info = catalogued(MetricKind::kLatency, id);
    const std::string unit = info.unit;
    std::cout << "  " << std::left << std::setw(40) << info.label << std::right << std::setw(12)
              << fixed(catalogued_value(info, r).get<double>(), unit == "tokens/s" ? 1 : 3) << " " << unit << "\n";
  }
  std::cout << "\nmemory per GPU (GiB)\n";
  for (const char* k : {"capacity_GiB", "weights_GiB", "kv_cache_GiB", "activations_GiB", "runtime_overhead_GiB",
                        "free_GiB"}) {
    const std::string label = memory_label(MetricKind::kLatency, k);
    std::cout << "  " << std::left << std::setw(20) << label << std::right << std::setw(12) << fixed(mem[k], 3)
              << "\n";
  }
  std::cout << "\ndecode step breakdown (per token)\n";
  for (const json& op : r["breakdown"]["decode_per_step"]) {
    std::cout << "  " << std::left << std::setw(22) << op["name"].get<std::string>() << std::right << std::setw(12)
              << fixed(op["time_us"], 2) << " us  " << op["bound"].get<std::string>() << "\n";
  }
}

}  // namespace sightline::cli
