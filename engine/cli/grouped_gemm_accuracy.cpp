#include "cli/grouped_gemm_accuracy.hpp"

#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "cli/calibration_inputs.hpp"
#include "cli/cli_common.hpp"
#include "cli/fused_accuracy.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "model/moe_routing.hpp"
#include "model/operators.hpp"
#include "perf/cost_setup.hpp"
#include "presets/preset_store.hpp"

namespace sightline::cli {

namespace fs = std::filesystem;

std::vector<std::string> moe_sweep_files(const std::string& measured_dir) {
  return measured_csv_files(measured_dir, "moe_");
}

namespace {

// The routed expert projection the step builder makes for `experts` experts
// of `tokens_per_expert` tokens each (make_grouped_expert_gemm). A "routed"
// split drew each of the experts × tokens_per_expert rows an expert uniformly
// (moe_bench.py routed_counts): the builder's routing model (top-1 of
// `experts`, expected_moe_load), so it is priced with its load and draw;
// balanced and skewed splits with every expert at the mean.
Operator grouped_operator(int64_t tokens_per_expert, int64_t n, int64_t k, int experts, Dtype dtype, bool routed) {
  const double b = dtype_bytes(dtype);
  MoeLoad load;
  load.experts_hit = experts;
  load.assignments = static_cast<double>(experts) * static_cast<double>(tokens_per_expert);
  load.tokens_per_expert = static_cast<double>(tokens_per_expert);
  if (routed) load = expected_moe_load(experts, 1, experts * tokens_per_expert, MoeRouting{});
  return make_routed_expert_gemm("moe_expert_up_proj", load, n, k, b, dtype, dtype);
}

// The GEMMs of one decode step of `preset` over `rows` sequences (the LM head
// left out: the sweep times the layers' projections), one layer's worth.
std::vector<Operator> layer_gemms(const std::string& preset, int64_t rows) {
  const ModelArch m = read_model(json(preset), "/model");
  BatchShape b;
  for (int64_t i = 0; i < rows; ++i) b.seqs.push_back(SeqChunk{1, 128});
  const StepOperators step = build_forward_step(m, Precision{}, ParallelLayout{}, b, StepOptions{});
  std::vector<Operator> out;
  for (const Operator& op : step.ops)
    if (op.family == OpFamily::Gemm && (op.role == OpRole::AttnProj || op.role == OpRole::MlpProj)) {
      out.push_back(op);
      out.back().count = op.count / m.num_layers;
    }
  if (out.empty()) fail(error_code::kMissingKey, "", "no layer GEMMs in a " + preset + " decode step");
  return out;
}

double priced_us(const KernelCostModel& model, const CostContext& ctx, const std::vector<Operator>& ops, double times) {
  double t = 0;
  for (const Operator& op : ops) t += model.cost(op, ctx).time_s * op.count;
  return t * times * 1e6;
}

std::string tokens_range(int64_t m) {
  if (m <= 64) return "1-64 per expert";
  return m <= 512 ? "128-512 per expert" : "1024+ per expert";
}

}  // namespace

std::vector<GroupedGemmPrice> price_moe_sweep(const std::string& path, std::string& gpu_id) {
  std::string text;
  read_input_file(path, text);
  const CsvTable t(text, path);
  std::vector<GroupedGemmPrice> out;
  std::unique_ptr<KernelCostModel> own, cross;
  GpuSpec no_l2;
  CostContext ctx;
  for (const CsvTable::Row& r : t.rows()) {
    GroupedGemmPrice p;
    p.kind = t.text(r, "kind");
    if (p.kind != "grouped_gemm" && p.kind != "gemm_stream") continue;  // copy_stream: the docs' reading only
    if (cross && t.text(r, "gpu") != gpu_id)  // one sweep, one GPU: its rows are priced on it
      fail(error_code::kConstraint, t.position(r, "gpu").describe(),
           "a MoE sweep times one GPU: this row's is '" + t.text(r, "gpu") + "', the first row's '" + gpu_id + "'");
    if (!cross) {
      gpu_id = t.text(r, "gpu");
      // Every row reads more weights than the L2 holds (100 MB to 56 GB), so price with no L2 hits.
      const GpuSpec gpu = read_gpu(json(gpu_id), "/gpu");
      no_l2 = gpu;
      no_l2.l2_cache_MiB = 0;
      ctx.gpu = &no_l2;
      std::string provenance;
      own = make_kernel_cost_model("target-measured", gpu, &provenance);
      cross = make_kernel_cost_model("cross-generation", gpu, &provenance);
    }
    p.model = t.text(r, "model");
    p.impl = t.text(r, "impl");
    p.dtype = t.text(r, "dtype");
    p.m = t.integer(r, "m", 1, 1 << 24);
    p.groups = static_cast<double>(t.integer(r, "batch", 1, 1 << 16));
    p.measured_us = t.number(r, "time_us", 1e-3, 1e12);
    const Dtype dtype = parse_dtype(p.dtype);
    std::vector<Operator> ops;
    double times = 1;
    if (p.kind == "grouped_gemm") {
      const bool routed = p.impl.size() > 7 && p.impl.compare(p.impl.size() - 7, 7, ":routed") == 0;
      ops.push_back(grouped_operator(p.m, t.integer(r, "n", 1, 1 << 20), t.integer(r, "k", 1, 1 << 20),
                                     static_cast<int>(p.groups), dtype, routed));
    } else {
      ops = layer_gemms(p.model, p.m);
      times = p.groups;
    }
    if (own) p.target_measured_us = priced_us(*own, ctx, ops, times);
    p.cross_generation_us = priced_us(*cross, ctx, ops, times);
    out.push_back(p);
  }
  return out;
}

json grouped_gemm_accuracy(const std::string& measured_dir) {
  json out = json::object();
  for (const std::string& path : moe_sweep_files(measured_dir)) {
    std::string gpu_id;
    const std::vector<GroupedGemmPrice> rows = price_moe_sweep(path, gpu_id);
    if (rows.empty()) continue;
    std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> errors;
    json priced = json::array();
    for (const GroupedGemmPrice& r : rows) {
      json pr = {{"kind", r.kind}, {"model", r.model}, {"impl", r.impl}, {"dtype", r.dtype}, {"m", r.m},
                 {"groups", r.groups}, {"measured_us", r.measured_us}, {"cross_generation_us", r.cross_generation_us}};
      if (r.target_measured_us > 0) pr["target_measured_us"] = r.target_measured_us;
      priced.push_back(pr);
      const std::string range = r.kind == "gemm_stream" ? "decode weight streaming, " + r.model + " layers"
                                                         : r.impl + " " + r.dtype + ", " + tokens_range(r.m);
      if (r.target_measured_us > 0) errors[range].first.push_back(r.target_measured_us / r.measured_us - 1);
      errors[range].second.push_back(r.cross_generation_us / r.measured_us - 1);
    }
    json ranges = json::object();
    for (const auto& [range, e] : errors) {
      ranges[range]["cross_generation"] = signed_error_summary(e.second);
      if (!e.first.empty()) ranges[range]["target_measured"] = signed_error_summary(e.first);
    }
    out[fs::path(path).filename().string()] = {{"gpu", gpu_id}, {"ranges", ranges}, {"rows", priced}};
  }
  return out;
}

void print_grouped_gemm_tables(const json& grouped) {
  auto cell = [](const json& range, const char* tier) {
    if (!range.contains(tier)) return std::string("-");
    const json& q = range[tier];
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << 100 * q["median_ape"].get<double>() << "% ("
      << std::showpos << 100 * q["median_signed"].get<double>() << std::noshowpos << "%)";
    return s.str();
  };
  for (auto it = grouped.begin(); it != grouped.end(); ++it) {
    std::cout << "\nMoE grouped GEMMs and decode weight streaming, against " << it.key() << " ("
              << it.value()["gpu"].get<std::string>()
              << "; priced as the step builder prices them: every expert at the mean, routed splits with the "
                 "routing model's draw per expert): median |error| (median signed)\n";
    std::cout << "    rows                                                         n   target-measured   cross-generation\n";
    for (auto r = it.value()["ranges"].begin(); r != it.value()["ranges"].end(); ++r)
      std::cout << "    " << std::left << std::setw(58) << r.key() << std::right << std::setw(4)
                << r.value()["cross_generation"]["samples"].get<size_t>() << "   " << std::left << std::setw(18)
                << cell(r.value(), "target_measured") << cell(r.value(), "cross_generation") << std::right << "\n";
  }
}

}  // namespace sightline::cli
