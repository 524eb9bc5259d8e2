#pragma once
// Kernels as the software stacks launch them (issue 36): RoPE, SiLU-and-mul,
// RMSNorm and add + RMSNorm priced for every stack preset, fused where the
// stack fuses them and as the eager chain where it does not, against the
// single-pass and eager kernels timed on a GPU
// (presets/calibrations/measured/fused_<gpu>_<date>.csv, written by
// presets/calibrations/fused_bench.py), at that GPU's target-measured and
// cross-generation tiers. Part of `sightline report-accuracy`.
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "perf/single_pass_fit.hpp"

namespace sightline::cli {

// The fused-kernel sweeps of a directory (fused_*.csv, sorted).
std::vector<std::string> fused_sweep_files(const std::string& measured_dir);

// {samples, median_ape, p90_ape, max_ape, median_signed} of signed relative
// errors (predicted / measured - 1): the summary of every kernel accuracy table.
json signed_error_summary(const std::vector<double>& signed_errors);

// The single-pass kernels of a fused sweep as the engine builds their
// operators (class, bytes, row programs) with their measured times; `gpu_id`
// is set to the sweep's GPU.
std::vector<SinglePassTiming> single_pass_timings(const std::string& path, std::string& gpu_id);

// {file: {"gpu": id, "cross_generation_source", "groups": [{"stacks": [...], "by_kernel": {kind: {"launched_as",
// "ranges": {"all rows" | "under 1024 tokens" | "1024+ tokens, TP n": {"target_measured": {samples, median_ape, p90_ape, max_ape,
// median_signed}, "cross_generation": {...}}}, "rows": [{model, tp, tokens, measured_us, target_measured_us,
// cross_generation_us}]}}}]}}: one group per distinct set of fused kernels among the stack presets.
json fused_kernel_accuracy(const std::string& measured_dir);

// The table report-accuracy prints for it.
void print_fused_kernel_tables(const json& fused);

}  // namespace sightline::cli
