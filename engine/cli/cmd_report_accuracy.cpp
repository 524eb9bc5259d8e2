// sightline report-accuracy: how well the calibrated kernel model predicts
// measurements it was not fitted on.
//  1. leave-one-model-out on the Vidur per-operator data of each GPU;
//  2. cross-generation: fit on one GPU, transfer by the spec-sheet rule, predict the other;
//  3. the published kernel figures of other GPUs, cross-generation vs target-measured.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>

#include "cli/calibration_inputs.hpp"
#include "cli/cli_common.hpp"
#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "perf/calibrate.hpp"
#include "perf/calibrated_cost.hpp"

namespace sightline::cli {

namespace {

using ErrorsByClass = std::map<std::string, std::vector<double>>;  // class → absolute percentage errors

void add_errors(ErrorsByClass& errors, const std::vector<KernelSample>& samples, const KernelCalibration& cal,
                const GpuSpec& gpu) {
  for (const KernelSample& s : samples) {
    const double pred = predict_sample_s(s, cal, gpu);
    errors[kernel_class_name(kernel_class_of(s.ops[0]))].push_back(std::fabs(pred - s.time_s) / s.time_s);
  }
}

json summarize(const ErrorsByClass& errors) {
  json out = json::object();
  for (const auto& [cls, e] : errors) {
    const std::vector<double> pred(e.size(), 1.0);
    std::vector<double> meas;
    // summarize_errors works on times; feed 1 vs 1/(1±e) is awkward, so compute quantiles directly.
    std::vector<double> sorted = e;
    std::sort(sorted.begin(), sorted.end());
    auto q = [&](double p) {
      const double pos = p * static_cast<double>(sorted.size() - 1);
      const size_t i = static_cast<size_t>(pos);
      const size_t j = std::min(i + 1, sorted.size() - 1);
      return sorted[i] + (pos - static_cast<double>(i)) * (sorted[j] - sorted[i]);
    };
    out[cls] = {{"samples", e.size()}, {"median_ape", q(0.5)}, {"p90_ape", q(0.9)}};
  }
  return out;
}

std::vector<KernelSample> without_model(const std::vector<KernelSample>& all, const std::string& model, bool keep) {
  std::vector<KernelSample> out;
  for (const KernelSample& s : all)
    if ((s.model == model) == keep) out.push_back(s);
  return out;
}

json leave_one_model_out(const std::vector<KernelSample>& samples, const GpuSpec& gpu, const KernelCalibration& base) {
  std::set<std::string> models;
  for (const KernelSample& s : samples) models.insert(s.model);
  ErrorsByClass errors;
  CalibrationFitOptions options;
  for (const std::string& m : models) {
    const KernelCalibration cal = fit_kernel_calibration(gpu, without_model(samples, m, false), base, options);
    add_errors(errors, without_model(samples, m, true), cal, gpu);
  }
  return {{"gpu", gpu.id}, {"models", models.size()}, {"by_class", summarize(errors)}};
}

void print_class_table(const std::string& title, const json& by_class) {
  std::cout << title << "\n";
  std::cout << "  " << std::left << std::setw(20) << "kernel class" << std::right << std::setw(9) << "samples"
            << std::setw(14) << "median APE" << std::setw(11) << "p90 APE" << "\n";
  for (auto it = by_class.begin(); it != by_class.end(); ++it) {
    std::cout << "  " << std::left << std::setw(20) << it.key() << std::right << std::setw(9)
              << it.value()["samples"].get<size_t>() << std::setw(13) << fixed(100 * it.value()["median_ape"].get<double>(), 1)
              << "%" << std::setw(10) << fixed(100 * it.value()["p90_ape"].get<double>(), 1) << "%\n";
  }
  std::cout << "\n";
}

}  // namespace

int cmd_report_accuracy(const Args& args) {
  std::string data_dir = default_data_dir(), format = "table";
  std::string published = std::string(SIGHTLINE_SOURCE_DIR) + "/presets/calibrations/data/published_kernels.csv";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--data" && i + 1 < args.size()) data_dir = args[++i];
    else if (args[i] == "--format" && i + 1 < args.size()) format = args[++i];
    else return usage_error("unexpected argument '" + args[i] + "'");
  }
  if (format != "table" && format != "json") return usage_error("unknown format '" + format + "'");
  try {
    const std::string vidur = data_dir + "/vidur-profiling";
    json report;
    // 1. Leave one model out, per GPU with a per-operator sweep.
    std::map<std::string, std::vector<KernelSample>> vidur_samples;
    std::map<std::string, GpuSpec> gpus;
    for (const std::string folder : {"a100", "a40"}) {
      const std::string id = vidur_gpu_id(folder);
      gpus[id] = read_gpu(json(id), "/gpu");
      vidur_samples[id] = load_vidur_compute(vidur, folder);
      report["leave_one_model_out"][id] = leave_one_model_out(vidur_samples[id], gpus[id], default_calibration());
    }
    // 2. Cross-generation between the two swept GPUs.
    CalibrationFitOptions options;
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{{"a100-80g-sxm", "a40"},
                                                                                    {"a40", "a100-80g-sxm"}}) {
      const KernelCalibration fitted = fit_kernel_calibration(gpus[from], vidur_samples[from], default_calibration(), options);
      ErrorsByClass errors;
      add_errors(errors, vidur_samples[to], transfer_calibration(fitted, to, 0), gpus[to]);
      report["cross_generation"][from + " -> " + to] = summarize(errors);
    }
    // 3. Published kernel figures of other GPUs.
    json rows = json::array();
    for (const std::string id : {"h100-sxm", "h200", "b200"}) {
      const GpuSpec gpu = read_gpu(json(id), "/gpu");
      const KernelCalibration cross = transfer_calibration(reference_calibration(), id, 0);
      const KernelCalibration* own = find_calibration(id);
      for (const KernelSample& s : load_kernel_csv_file(published, id)) {
        json r = {{"gpu", id}, {"kernel", s.label}, {"source", s.source}, {"measured_us", s.time_s * 1e6}};
        const double x = predict_sample_s(s, cross, gpu);
        r["cross_generation_us"] = x * 1e6;
        r["cross_generation_error"] = (x - s.time_s) / s.time_s;
        if (own) {
          const double t = predict_sample_s(s, *own, gpu);
          r["target_measured_us"] = t * 1e6;
          r["target_measured_error"] = (t - s.time_s) / s.time_s;
        }
        rows.push_back(r);
      }
    }
    report["published_kernels"] = rows;

    if (format == "json") {
      std::cout << report.dump(2) << "\n";
      return 0;
    }
    for (auto it = report["leave_one_model_out"].begin(); it != report["leave_one_model_out"].end(); ++it)
      print_class_table("Leave-one-model-out, " + it.key() + " (" + std::to_string(it.value()["models"].get<int>()) +
                            " models, Vidur per-operator data): fit on the others, predict the held-out model",
                        it.value()["by_class"]);
    for (auto it = report["cross_generation"].begin(); it != report["cross_generation"].end(); ++it)
      print_class_table("Cross-generation " + it.key() + ": fitted on the first GPU only, transferred by spec sheet",
                        it.value());
    std::cout << "Published kernel figures (measurements.md): cross-generation from A100 vs target-measured "
                 "(in-sample: these rows are the GPU's calibration data)\n";
    for (const json& r : rows) {
      std::cout << "  " << std::left << std::setw(10) << r["gpu"].get<std::string>() << std::setw(20)
                << r["kernel"].get<std::string>() << std::right << " measured " << std::setw(10)
                << fixed(r["measured_us"], 1) << " us  cross-gen " << std::setw(7)
                << fixed(100 * r["cross_generation_error"].get<double>(), 1) << "%";
      if (r.contains("target_measured_error"))
        std::cout << "  target-measured " << std::setw(7) << fixed(100 * r["target_measured_error"].get<double>(), 1) << "%";
      std::cout << "\n";
    }
    return 0;
  } catch (const SightlineError& e) {
    std::cerr << "error [" << e.code() << "] at '" << e.path() << "': " << e.what() << "\n";
    return 1;
  }
}

}  // namespace sightline::cli
