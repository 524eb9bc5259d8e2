#include "cli/fused_accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "cli/calibration_inputs.hpp"
#include "cli/cli_common.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "model/operators.hpp"
#include "perf/cost_setup.hpp"
#include "perf/host_overhead.hpp"
#include "presets/preset_store.hpp"

namespace sightline::cli {

namespace fs = std::filesystem;

std::vector<std::string> fused_sweep_files(const std::string& measured_dir) {
  return measured_csv_files(measured_dir, "fused_");
}

namespace {

// One timed kernel of a fused sweep.
struct FusedRow {
  std::string model;  // the model preset the shape is of
  int tp = 1;         // its tensor-parallel degree (the sweep's "-tp8" suffix)
  std::string kind;   // rope | activation | norm | add_norm
  bool fused = false; // a single-pass kernel (else the eager chain)
  int64_t tokens = 0;
  double time_us = 0;
};

// The operator of a step that each measured kind stands for (the eager chain
// of add + RMSNorm is the norm plus the residual add it would absorb).
const std::map<std::string, std::string>& fused_kind_ops() {
  static const std::map<std::string, std::string> ops = {
      {"rope", "attn_rope"}, {"activation", "mlp_act"}, {"norm", "final_layernorm"}, {"add_norm", "post_attention_layernorm"}};
  return ops;
}

bool stack_fuses(const KernelFusion& f, const std::string& kind) {
  if (kind == "rope") return f.rotary_embedding;
  if (kind == "activation") return f.silu_and_mul;
  return f.fused_add_rms_norm;  // norm and add + norm: the fused RMSNorm kernel
}

std::vector<FusedRow> read_fused_rows(const std::string& path, std::string& gpu_id) {
  std::string text;
  read_input_file(path, text);
  const CsvTable t(text, path);
  std::vector<FusedRow> rows;
  for (const CsvTable::Row& r : t.rows()) {
    const std::string kind = t.text(r, "kind");
    const std::string impl = t.text(r, "impl");
    if (!fused_kind_ops().count(kind) || (impl != "triton-fused" && impl != "eager-chain")) continue;  // e.g. grouped GEMMs
    gpu_id = t.text(r, "gpu");
    FusedRow row;
    row.model = t.text(r, "model");
    const size_t tp_at = row.model.rfind("-tp");
    if (tp_at != std::string::npos && !find_preset("models", row.model)) {
      row.tp = static_cast<int>(read_integer_token(row.model.substr(tp_at + 3), t.position(r, "model"), "tp suffix", 1, 64));
      row.model = row.model.substr(0, tp_at);
    }
    row.kind = kind;
    row.fused = impl == "triton-fused";
    row.tokens = t.integer(r, "m", 1, 1 << 24);
    row.time_us = t.number(r, "time_us", 1e-3, 1e9);
    rows.push_back(row);
  }
  return rows;
}


// The operator `name` of a prefill of `row.tokens` on `row.model` as `fusion` launches it.
Operator row_operator(const FusedRow& row, const KernelFusion& fusion, const std::string& name) {
  const ModelArch m = read_model(json(row.model), "/model");
  Precision p;
  ParallelLayout layout;
  layout.tp = row.tp;
  BatchShape b;
  b.seqs.push_back(SeqChunk{row.tokens, 0});
  StepOptions o;
  o.fusion = fusion;
  const StepOperators step = build_forward_step(m, p, layout, b, o);
  for (const Operator& op : step.ops)
    if (op.name == name) return op;
  fail(error_code::kMissingKey, "", "no operator '" + name + "' in a " + row.model + " prefill step");
}

// The priced time (µs) of `kind`'s operator on a prefill of `row.tokens` as `fusion` launches it.
double priced_us(const KernelCostModel& model, const CostContext& ctx, const FusedRow& row, const KernelFusion& fusion) {
  const auto op = fused_kind_ops().find(row.kind);  // read_fused_rows keeps only these kinds
  double t = model.cost(row_operator(row, fusion, op->second), ctx).time_s * 1e6;
  if (row.kind == "add_norm" && !stack_fuses(fusion, row.kind)) t += model.cost(row_operator(row, fusion, "add"), ctx).time_s * 1e6;
  return t;
}

}  // namespace

// Median, p90 and max of |error|, and the median signed error.
json signed_error_summary(const std::vector<double>& signed_errors) {
  std::vector<double> ape, s = signed_errors;
  for (double e : signed_errors) ape.push_back(std::fabs(e));
  std::sort(ape.begin(), ape.end());
  std::sort(s.begin(), s.end());
  auto at = [](const std::vector<double>& v, double p) {
    if (v.empty()) return 0.0;
    const double pos = p * static_cast<double>(v.size() - 1);
    const size_t i = static_cast<size_t>(pos);
    const size_t j = std::min(i + 1, v.size() - 1);
    return v[i] + (pos - static_cast<double>(i)) * (v[j] - v[i]);
  };
  return {{"samples", ape.size()}, {"median_ape", at(ape, 0.5)}, {"p90_ape", at(ape, 0.9)},
          {"max_ape", ape.empty() ? 0.0 : ape.back()}, {"median_signed", at(s, 0.5)}};
}

std::vector<SinglePassTiming> single_pass_timings(const std::string& path, std::string& gpu_id) {
  KernelFusion all;  // every kernel fused, as the serving stacks launch them
  all.rotary_embedding = all.silu_and_mul = all.fused_add_rms_norm = true;
  std::vector<SinglePassTiming> out;
  for (const FusedRow& r : read_fused_rows(path, gpu_id)) {
    if (!r.fused) continue;
    // read_fused_rows keeps only the kinds fused_kind_ops names.
    const Operator op = row_operator(r, all, fused_kind_ops().find(r.kind)->second);
    if (!op.single_pass) continue;  // a model whose norm is not RMSNorm
    out.push_back({kernel_class_of(op), op.bytes, op.rows, r.time_us * 1e-6});
  }
  return out;
}

json fused_kernel_accuracy(const std::string& measured_dir) {
  // The stack presets, grouped by what they fuse (stacks that launch the same
  // kernels get the same prices).
  std::vector<std::pair<KernelFusion, std::vector<std::string>>> groups;
  for (const json* p : list_presets("stacks")) {
    const std::string id = p->at("id").get<std::string>();
    const KernelFusion f = read_software_stack(json(id), "/stacks/" + id).fusion;
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == f; });
    if (g == groups.end()) groups.push_back({f, {id}});
    else g->second.push_back(id);
  }
  json out = json::object();
  for (const std::string& path : fused_sweep_files(measured_dir)) {
    std::string gpu_id;
    const std::vector<FusedRow> rows = read_fused_rows(path, gpu_id);
    if (rows.empty()) continue;
    const GpuSpec gpu = read_gpu(json(gpu_id), "/gpu");
    // The sweep rotates its inputs past the L2 (fused_bench.py), so price with no L2 hits.
    GpuSpec no_l2 = gpu;
    no_l2.l2_cache_MiB = 0;
    CostContext ctx;
    ctx.gpu = &no_l2;
    std::string provenance;
    const std::unique_ptr<KernelCostModel> own = make_kernel_cost_model("target-measured", gpu, &provenance);
    const std::unique_ptr<KernelCostModel> cross = make_kernel_cost_model("cross-generation", gpu, &provenance);
    json file = {{"gpu", gpu_id}, {"cross_generation_source", provenance}, {"groups", json::array()}};
    for (const auto& [fusion, stacks] : groups) {
      json by_kernel = json::object();
      for (const auto& [kind, op_name] : fused_kind_ops()) {
        const bool fused = stack_fuses(fusion, kind);
        // Signed errors (target-measured, cross-generation) by range: every
        // row, rows under 1,024 tokens, then prefill sizes (1,024+ tokens) per
        // tensor-parallel degree.
        std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> errors;
        json priced_rows = json::array();
        for (const FusedRow& r : rows) {
          if (r.kind != kind || r.fused != fused) continue;
          const double own_us = own ? priced_us(*own, ctx, r, fusion) : 0;
          const double cross_us = priced_us(*cross, ctx, r, fusion);
          json pr = {{"model", r.model}, {"tp", r.tp}, {"tokens", r.tokens}, {"measured_us", r.time_us},
                     {"cross_generation_us", cross_us}};
          if (own) pr["target_measured_us"] = own_us;
          priced_rows.push_back(pr);
          std::vector<std::string> ranges = {"all rows"};
          // Under 1,024 tokens a kernel is far from bandwidth-bound: its fixed time rules.
          ranges.push_back(r.tokens >= 1024 ? "1024+ tokens, TP " + std::to_string(r.tp) : "under 1024 tokens");
          for (const std::string& range : ranges) {
            if (own) errors[range].first.push_back(own_us / r.time_us - 1);
            errors[range].second.push_back(cross_us / r.time_us - 1);
          }
        }
        json k = {{"launched_as", fused ? "one fused kernel" : "eager chain"}, {"ranges", json::object()}, {"rows", priced_rows}};
        for (const auto& [range, e] : errors) {
          k["ranges"][range]["cross_generation"] = signed_error_summary(e.second);
          if (own) k["ranges"][range]["target_measured"] = signed_error_summary(e.first);
        }
        by_kernel[kind] = k;
      }
      file["groups"].push_back({{"stacks", stacks}, {"by_kernel", by_kernel}});
    }
    out[fs::path(path).filename().string()] = file;
  }
  return out;
}

void print_fused_kernel_tables(const json& fused) {
  auto cell = [](const json& range, const char* tier) {
    if (!range.contains(tier)) return std::string("-");
    const json& q = range[tier];
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << 100 * q["median_ape"].get<double>() << "% ("
      << 100 * q["max_ape"].get<double>() << "%)";
    return s.str();
  };
  for (auto it = fused.begin(); it != fused.end(); ++it) {
    const json& f = it.value();
    std::cout << "\nKernels as the stacks launch them, against " << it.key() << " (" << f["gpu"].get<std::string>()
              << "; inputs rotated past the L2, so priced with no L2 hits): median |error| (max), target-measured = the "
                 "GPU's own calibration, cross-generation = "
              << f["cross_generation_source"].get<std::string>() << "\n";
    for (const json& g : f["groups"]) {
      std::string names;
      for (const json& s : g["stacks"]) names += (names.empty() ? "" : ", ") + s.get<std::string>();
      std::cout << "  stacks: " << names << "\n";
      std::cout << "    kernel       launched as        range                     rows   target-measured   cross-generation\n";
      for (auto k = g["by_kernel"].begin(); k != g["by_kernel"].end(); ++k)
        for (auto r = k.value()["ranges"].begin(); r != k.value()["ranges"].end(); ++r)
          std::cout << "    " << std::left << std::setw(13) << k.key() << std::setw(19)
                    << k.value()["launched_as"].get<std::string>() << std::setw(24) << r.key() << std::right << std::setw(6)
                    << r.value()["cross_generation"]["samples"].get<size_t>() << "   " << std::left << std::setw(18)
                    << cell(r.value(), "target_measured") << cell(r.value(), "cross_generation") << std::right << "\n";
    }
  }
}

}  // namespace sightline::cli
