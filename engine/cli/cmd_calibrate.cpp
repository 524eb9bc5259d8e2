// sightline calibrate: fits a kernel calibration for one GPU from measurements
// (Vidur profiling folders and/or measurement CSV files) and writes it as JSON.
#include <iostream>

#include "core/json_text.hpp"
#include "api/api.hpp"
#include "cli/calibration_inputs.hpp"
#include "cli/cli_common.hpp"
#include "cli/command_budget.hpp"
#include "cli/flags.hpp"
#include "cli/fused_accuracy.hpp"
#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "perf/calibrate.hpp"
#include "perf/calibration.hpp"

namespace sightline::cli {

namespace {

// Measured device-copy efficiency from "copy" rows, 0 if none.
double copy_efficiency(const std::vector<KernelSample>& samples, const GpuSpec& gpu) {
  std::vector<double> etas;
  for (const KernelSample& s : samples)
    // Device time of copies too large for any shipped GPU's L2 cache (B200: 126 MB).
    if (s.label == "copy" && is_kernel_timing(s) && s.ops[0].bytes >= 256.0 * (1 << 20)) etas.push_back(s.ops[0].bytes / s.time_s / (gpu.hbm_bandwidth_GBps * 1e9));
  if (etas.empty()) return 0;
  std::sort(etas.begin(), etas.end());
  return etas[etas.size() / 2];
}

}  // namespace

int cmd_calibrate(const Args& args) {
  std::string gpu_id, out_path, base_id, vidur_dir, vidur_folder, compute_from;
  std::vector<std::string> csv_files, fused_files;
  std::string problem;
  Flags flags("calibrate");
  CommandBudget budget("calibrate");
  budget.flag(flags).text("--gpu", &gpu_id).text("--out", &out_path).text("--base", &base_id).text("--vidur-dir", &vidur_dir)
      .text("--vidur-gpu", &vidur_folder).texts("--csv", &csv_files).text("--compute-from", &compute_from)
      .texts("--fused-csv", &fused_files);
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (gpu_id.empty()) return usage_error("calibrate needs --gpu ID");
  // Classes without measurements come, by default, from the reference
  // calibration: the shipped GPU with the largest measured sweep.
  if (base_id.empty()) base_id = reference_calibration().id;
  if (vidur_dir.empty() != vidur_folder.empty()) return usage_error("--vidur-dir and --vidur-gpu go together");
  try {
    const GpuSpec gpu = read_gpu(json(gpu_id), "/gpu");
    // The fit's work, from the size of the files it reads, before reading any.
    std::vector<std::string> inputs = csv_files;
    for (const std::string& f : fused_files) inputs.push_back(f);
    if (!vidur_dir.empty())
      for (const std::string& f : vidur_compute_files(vidur_dir, vidur_folder)) inputs.push_back(f);
    budget.add_files(inputs, kFitUnitsPerByte, "the measurement files");
    std::vector<KernelSample> samples;
    std::string source;
    if (!vidur_dir.empty()) {
      samples = load_vidur_compute(vidur_dir, vidur_folder);
      source = "Vidur per-operator profiling of " + vidur_folder + " (" + std::to_string(samples.size()) + " kernels)";
    }
    for (const std::string& f : csv_files) {
      std::vector<KernelSample> rows = load_kernel_csv_file(f, gpu_id);
      source += (source.empty() ? "" : "; ") + std::string("measurement CSV ") +
                file_name(f) + " (" +
                std::to_string(rows.size()) + " rows)";
      for (KernelSample& s : rows) samples.push_back(std::move(s));
    }
    if (samples.empty()) fail(error_code::kMissingKey, "", "no measurements of " + gpu_id + " in the inputs");
    // "nearest": the measured GPU the product's cross-generation tier transfers
    // this GPU from (nearest by spec sheet, its own data left out), so that the
    // GPU's own tier and its cross-generation tier fill unmeasured classes from
    // the same source (issue 36: transfer from the nearest measured architecture).
    if (base_id == "nearest") {
      const MeasuredGpu* from = nearest_measured_gpu(gpu);
      if (!from) fail(error_code::kUnknownPreset, "", "no measured GPU to transfer " + gpu_id + " from");
      base_id = from->calibration->id;
    }
    const KernelCalibration* base = base_id == "none" ? &default_calibration() : find_calibration(base_id);
    if (!base) fail(error_code::kUnknownPreset, "", "no calibration for base GPU '" + base_id + "'");
    CalibrationFitOptions options;
    options.source = source;
    options.copy_bandwidth_eta = copy_efficiency(samples, gpu);
    options.held_out_residuals = true;
    if (!compute_from.empty()) {
      const KernelCalibration* same = find_calibration(compute_from);
      if (!same) fail(error_code::kUnknownPreset, "", "no calibration for --compute-from GPU '" + compute_from + "'");
      options.shared_compute = &same->gemm;
      options.shared_compute_id = compute_from;
    }
    KernelCalibration cal = fit_kernel_calibration(gpu, samples, *base, options);
    // Fused kernels' fixed times, on top of the fitted streaming efficiency.
    for (const std::string& f : fused_files) {
      std::string sweep_gpu;
      const std::vector<SinglePassTiming> timings = single_pass_timings(f, sweep_gpu);
      if (sweep_gpu != gpu_id)
        fail(error_code::kConstraint, "", file_name(f) + " times " + (sweep_gpu.empty() ? "no kernels" : sweep_gpu) +
                                              ", not " + gpu_id);
      fit_single_pass_fixed_times(cal, gpu, timings, "fused-kernel CSV " + file_name(f));
    }
    cal.notes = "Generated by `sightline calibrate`; classes without measurements are " +
                std::string(base_id == "none" ? "built-in defaults" : "transferred from " + base_id) +
                " (see each provenance).";
    const std::string text = safe_dump(cal.to_json(), 2) + "\n";
    write_output(out_path, text);
    return 0;
  } catch (const SightlineError& e) {
    return report_error(e);
  }
}

}  // namespace sightline::cli
