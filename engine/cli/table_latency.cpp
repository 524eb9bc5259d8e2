// Table for "serving_latency" results.
#include <iomanip>
#include <iostream>

#include "cli/cli_common.hpp"

namespace sightline::cli {

void print_latency_table(const json& r) {
  const json& m = r["metrics"];
  const json& mem = r["memory_per_gpu"];
  std::cout << "scenario  " << r["scenario"]["id"].get<std::string>() << "  " << r["scenario"]["title"].get<std::string>()
            << "\n";
  std::cout << "model     " << r["model"]["name"].get<std::string>() << " (" << fixed(r["model"]["params_B"], 2)
            << " B params)\n";
  std::cout << "gpus      " << r["deployment"]["gpus"] << " x " << r["deployment"]["gpu"].get<std::string>()
            << "  tp=" << r["deployment"]["tp"] << " pp=" << r["deployment"]["pp"]
            << "  cost tier: " << r["cost_tier"].get<std::string>() << "\n\n";
  std::cout << "latency\n";
  std::cout << "  TTFT                 " << std::setw(12) << fixed(m["ttft_ms"], 3) << " ms\n";
  std::cout << "  TPOT                 " << std::setw(12) << fixed(m["tpot_ms"], 3) << " ms\n";
  std::cout << "  E2E                  " << std::setw(12) << fixed(m["e2e_ms"], 3) << " ms\n";
  std::cout << "  output tokens/s      " << std::setw(12) << fixed(m["output_tokens_per_s"], 1) << "\n";
  std::cout << "  prefill tokens/s     " << std::setw(12) << fixed(m["prefill_tokens_per_s"], 1) << "\n";
  std::cout << "  decode floor (weights/HBM BW) " << fixed(r["floors"]["decode_weight_read_ms"], 3) << " ms\n";
  std::cout << "  MFU / MBU prefill     " << fixed(m["prefill_mfu"], 3) << " / " << fixed(m["prefill_mbu"], 3)
            << "   decode " << fixed(m["decode_mfu"], 3) << " / " << fixed(m["decode_mbu"], 3) << "\n";
  std::cout << "  energy per output token " << fixed(m["energy_J_per_output_token"], 3) << " J\n\n";
  std::cout << "memory per GPU (GiB)\n";
  for (const char* k : {"capacity_GiB", "weights_GiB", "kv_cache_GiB", "activations_GiB", "runtime_overhead_GiB",
                        "free_GiB"}) {
    std::string label = k;
    label = label.substr(0, label.size() - 4);
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
