#include "cli/kernel_accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "cli/calibration_inputs.hpp"
#include "hw/hardware.hpp"
#include "perf/calibrated_cost.hpp"
#include "perf/calibration.hpp"
#include "presets/preset_store.hpp"

namespace sightline::cli {

namespace {

std::vector<KernelSample> kernel_timings(std::vector<KernelSample> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](const KernelSample& s) { return !is_kernel_timing(s) || !(s.time_s > 0); }),
          v.end());
  return v;
}

json residuals_json(const std::vector<double>& pred, const std::vector<double>& meas) {
  json j = summarize_errors(pred, meas).to_json();
  std::vector<double> signed_err;
  for (size_t i = 0; i < pred.size(); ++i) signed_err.push_back((pred[i] - meas[i]) / meas[i]);
  std::sort(signed_err.begin(), signed_err.end());
  j["median_signed"] = signed_err.empty() ? 0.0 : (signed_err[(signed_err.size() - 1) / 2] + signed_err[signed_err.size() / 2]) / 2;
  return j;
}

}  // namespace

DevKernels load_development_kernels(const std::string& vidur_root, const std::string& published_csv,
                                    const std::string& measured_dir) {
  DevKernels dev;
  for (const std::string& folder : vidur_compute_folders(vidur_root)) dev[vidur_gpu_id(folder)] = load_vidur_compute(vidur_root, folder);
  for (auto& [id, rows] : load_microbench_sweeps(measured_dir)) dev[id] = std::move(rows);
  for (auto& [id, rows] : dev) {
    for (KernelSample& s : load_kernel_csv_file(published_csv, id)) rows.push_back(std::move(s));
    rows = kernel_timings(std::move(rows));
  }
  return dev;
}

constexpr double kPooledPerPair = 200;

json cross_generation_pairs(const DevKernels& dev) {
  json out = {{"pairs", json::object()}, {"pooled", json::object()}};
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> pooled;  // class → predicted, measured
  CalibrationFitOptions options;
  for (const auto& [from, from_rows] : dev) {
    const GpuSpec from_gpu = read_gpu(json(from), "/gpu");
    const KernelCalibration fitted = fit_kernel_calibration(from_gpu, from_rows, default_calibration(), options);
    for (const auto& [to, to_rows] : dev) {
      if (to == from) continue;
      const GpuSpec to_gpu = read_gpu(json(to), "/gpu");
      const SamplePricer moved(transfer_calibration(fitted, to, 0), to_gpu);
      std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_class, pair_pooled;
      for (const KernelSample& s : to_rows) {
        const double pred = moved(s);
        auto& [p, m] = by_class[sample_class_label(s)];
        p.push_back(pred);
        m.push_back(s.time_s);
        auto& [pp, pm] = pair_pooled[kernel_class_name(kernel_class_of(s.ops[0]))];
        pp.push_back(pred);
        pm.push_back(s.time_s);
      }
      json classes = json::object();
      for (const auto& [cls, pm] : by_class) classes[cls] = residuals_json(pm.first, pm.second);
      out["pairs"][from + " -> " + to] = classes;
      // Every pair weighs the same in the pooled error (the Vidur sweeps have ~1000x more rows than ours).
      for (auto& [cls, pm] : pair_pooled) {
        auto& [pp, mm] = pooled[cls];
        const double step = std::max(1.0, static_cast<double>(pm.first.size()) / kPooledPerPair);
        for (double i = 0; i < static_cast<double>(pm.first.size()); i += step) {
          pp.push_back(pm.first[static_cast<size_t>(i)]);
          mm.push_back(pm.second[static_cast<size_t>(i)]);
        }
      }
    }
  }
  for (const auto& [cls, pm] : pooled) out["pooled"][cls] = residuals_json(pm.first, pm.second);
  return out;
}

json leave_one_gpu_out(const DevKernels& dev, const json& pairs_report) {
  json out = json::object();
  for (const auto& [target, rows] : dev) {
    // Chosen as the product chooses (nearest_by_spec), among the other GPUs
    // with development data, each weighed by its count of samples.
    const GpuSpec target_gpu = read_gpu(json(target), "/gpu");
    std::vector<std::string> ids;
    std::vector<GpuSpec> specs;
    std::vector<SpecCandidate> candidates;
    specs.reserve(dev.size());  // candidates point into it
    for (const auto& [other, other_rows] : dev) {
      if (other == target) continue;
      ids.push_back(other);
      specs.push_back(read_gpu(json(other), "/gpu"));
      candidates.push_back({&specs.back(), static_cast<int64_t>(other_rows.size())});
    }
    const std::size_t i = nearest_by_spec(target_gpu, candidates);
    if (i == SIZE_MAX) continue;
    const std::string& from = ids[i];
    out[target] = {{"from", from}, {"by_class", pairs_report["pairs"][from + " -> " + target]}};
  }
  return out;
}

json transfer_error_preset(const json& pairs_report) {
  json classes = json::object();
  for (auto it = pairs_report["pooled"].begin(); it != pairs_report["pooled"].end(); ++it) {
    json r = it.value();
    r.erase("median_signed");
    classes[it.key()] = r;
  }
  std::string pairs;
  for (auto it = pairs_report["pairs"].begin(); it != pairs_report["pairs"].end(); ++it)
    pairs += (pairs.empty() ? "" : ", ") + it.key();
  return {{"id", "kernels"},
          {"name", "Cross-GPU transfer error of the kernel model, per kernel class"},
          {"source", "Generated by `sightline report-accuracy --transfer-errors-out`: each GPU with development data fitted "
                     "alone and transferred by the spec-sheet rule to every other (" + pairs +
                     "); residuals log(measured / predicted) pooled over all pairs. Widens the 80% interval of every "
                     "transferred or anchored class."},
          {"classes", classes}};
}

json interval_coverage(const DevKernels& dev) {
  json out = json::object();
  size_t inside_all = 0, total_all = 0;
  for (const auto& [id, rows] : dev) {
    const KernelCalibration* cal = find_calibration(id);
    if (!cal) continue;
    const GpuSpec gpu = read_gpu(json(id), "/gpu");
    const CalibratedCostModel model(*cal, "target-measured");
    CostContext ctx;
    ctx.gpu = &gpu;
    std::map<std::string, std::pair<size_t, size_t>> by_class;  // inside, total
    size_t inside = 0;
    for (const KernelSample& s : rows) {
      double lo = 0, hi = 0;
      for (const Operator& op : s.ops) {
        const OpCost c = model.cost(op, ctx);
        lo += c.time_low_s;
        hi += c.time_high_s;
      }
      const bool in = s.time_s >= lo && s.time_s <= hi;
      inside += in;
      auto& [ci, ct] = by_class[sample_class_label(s)];
      ci += in;
      ++ct;
    }
    json classes = json::object();
    for (const auto& [cls, it] : by_class) classes[cls] = {{"inside", it.first}, {"samples", it.second},
                                                           {"share", static_cast<double>(it.first) / it.second}};
    out["by_gpu"][id] = {{"samples", rows.size()}, {"share", rows.empty() ? 0.0 : static_cast<double>(inside) / rows.size()},
                         {"by_class", classes}};
    inside_all += inside;
    total_all += rows.size();
  }
  // Every GPU counts once: the Vidur A100 sweep alone has ~90k rows.
  double mean_share = 0;
  for (auto it = out["by_gpu"].begin(); it != out["by_gpu"].end(); ++it) mean_share += it.value()["share"].get<double>();
  out["mean_share_over_gpus"] = out["by_gpu"].empty() ? 0.0 : mean_share / out["by_gpu"].size();
  out["pooled_share"] = total_all ? static_cast<double>(inside_all) / total_all : 0.0;
  out["target"] = "between 0.70 and 0.90";
  return out;
}

json same_silicon_gemms(const DevKernels& dev) {
  json out = json::array();
  for (auto a = dev.begin(); a != dev.end(); ++a)
    for (auto b = std::next(a); b != dev.end(); ++b) {
      const KernelCalibration* ca = find_calibration(a->first);
      const KernelCalibration* cb = find_calibration(b->first);
      if (!ca || !cb || !find_preset("gpus", a->first) || !find_preset("gpus", b->first)) continue;
      const GpuSpec ga = read_gpu(json(a->first), "/gpu"), gb = read_gpu(json(b->first), "/gpu");
      if (ga.peak_tflops.bf16 != gb.peak_tflops.bf16 || ga.sm_count != gb.sm_count ||
          ga.boost_clock_MHz != gb.boost_clock_MHz)
        continue;
      const CalibratedCostModel ma(*ca, "target-measured"), mb(*cb, "target-measured");
      CostContext xa, xb;
      xa.gpu = &ga;
      xb.gpu = &gb;
      // One GEMM timed on the device, keyed by dtype and shape.
      auto gemms = [](const std::vector<KernelSample>& rows) {
        std::map<std::string, const KernelSample*> by_shape;
        for (const KernelSample& s : rows)
          if (s.ops.size() == 1 && s.ops[0].family == OpFamily::Gemm && is_kernel_timing(s)) {
            const Operator& op = s.ops[0];
            by_shape[dtype_name(op.compute_dtype) + " " + std::to_string(op.m) + "x" + std::to_string(op.n) + "x" +
                     std::to_string(op.k)] = &s;
          }
        return by_shape;
      };
      const auto sa = gemms(a->second), sb = gemms(b->second);
      const double ridge = std::max(ga.peak_tflops.bf16 * 1e12 / (ga.hbm_bandwidth_GBps * 1e9),
                                    gb.peak_tflops.bf16 * 1e12 / (gb.hbm_bandwidth_GBps * 1e9));
      std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> ratios;  // measured, predicted
      for (const auto& [key, s] : sa) {
        auto it = sb.find(key);
        if (it == sb.end()) continue;
        const Operator& op = s->ops[0];
        const std::string group = dtype_name(op.compute_dtype) +
                                  (op.flops / op.bytes > ridge ? " compute-bound" : " memory/launch-bound");
        ratios[group].first.push_back(it->second->time_s / s->time_s);
        ratios[group].second.push_back(mb.cost(op, xb).time_s / ma.cost(op, xa).time_s);
      }
      auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v.empty() ? 0.0 : v[v.size() / 2];
      };
      json groups = json::object();
      for (const auto& [group, r] : ratios)
        groups[group] = {{"shapes", r.first.size()}, {"measured_time_ratio", median(r.first)},
                         {"predicted_time_ratio", median(r.second)}};
      out.push_back({{"gpus", {a->first, b->first}},
                     {"eta_compute", {ca->gemm.eta_compute, cb->gemm.eta_compute}},
                     {"ceiling_bf16_tflops", {ca->gemm.ceiling_tflops.count("bf16") ? ca->gemm.ceiling_tflops.at("bf16") : 0.0,
                                              cb->gemm.ceiling_tflops.count("bf16") ? cb->gemm.ceiling_tflops.at("bf16") : 0.0}},
                     {"by_regime", groups}});
    }
  return out;
}

json gemm_ceiling_sweep() {
  json out = json::array();
  for (const json* p : list_presets("calibrations")) {
    const std::string id = p->at("id").get<std::string>();
    const KernelCalibration* cal = find_calibration(id);
    if (!find_preset("gpus", id)) continue;
    const GpuSpec gpu = read_gpu(json(id), "/gpu");
    const CalibratedCostModel model(*cal, "target-measured");
    CostContext ctx;
    ctx.gpu = &gpu;
    for (const auto& [dtype, ceiling] : cal->gemm.ceiling_tflops) {
      const Dtype d = parse_dtype(dtype);
      double best = 0;
      int64_t shapes = 0;
      std::string best_shape;
      for (int64_t m = 1; m <= 65536; m *= 2)
        for (int64_t n = 256; n <= 65536; n *= 2)
          for (int64_t k = 256; k <= 65536; k *= 2) {
            const Operator op = make_gemm_operator("gemm", 1, m, n, k, dtype_bytes(d), dtype_bytes(d), d);
            const double tflops = op.flops / model.cost(op, ctx).time_s / 1e12;
            ++shapes;
            if (tflops > best) {
              best = tflops;
              best_shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
            }
          }
      out.push_back({{"gpu", id}, {"dtype", dtype}, {"shapes", shapes}, {"best_priced_tflops", best},
                     {"best_priced_shape_mnk", best_shape}, {"measured_best_tflops", ceiling},
                     {"ok", best <= ceiling * (1 + 1e-9)}});
    }
  }
  return out;
}

}  // namespace sightline::cli
