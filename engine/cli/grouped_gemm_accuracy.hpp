#pragma once
// MoE grouped GEMMs and decode weight streaming, priced against what was
// timed on a GPU (presets/calibrations/measured/moe_<gpu>_<date>.csv, written
// by presets/calibrations/moe_bench.py; issue 38, point 1). Each grouped_gemm
// row is priced as the step builder prices a routed expert projection (one
// grouped GEMM over the experts), at the GPU's target-measured and
// cross-generation tiers: a balanced row with every expert at the mean, a
// routed row (tokens routed uniformly at random) with the routing model's
// Binomial draw per expert, and a skewed row (the same tokens, a few hot
// experts) at the mean, so its error is what skew within one GPU costs. Each gemm_stream row (the GEMMs
// of L distinct Llama-3-8B layers in one graph, 0.4-56 GB of weights) is
// priced as the builder's decode step's GEMMs times L. Part of
// `sightline report-accuracy`.
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline::cli {

// The MoE sweeps of a directory (moe_*.csv, sorted).
std::vector<std::string> moe_sweep_files(const std::string& measured_dir);

// One timed row of a MoE sweep with its two prices.
struct GroupedGemmPrice {
  std::string kind;   // grouped_gemm | gemm_stream
  std::string model;  // the shape's label (moe_bench.py GROUPED) or the model preset
  std::string impl;   // kernel:split (grouped) or the library call (stream)
  std::string dtype;
  int64_t m = 0;      // mean tokens per expert (grouped), rows (stream)
  double groups = 0;  // experts (grouped), layers (stream)
  double measured_us = 0, target_measured_us = 0, cross_generation_us = 0;
};

// Every grouped_gemm and gemm_stream row of `path` priced; `gpu_id` is set to
// the sweep's GPU. Rows of other kinds (copy_stream) are skipped.
std::vector<GroupedGemmPrice> price_moe_sweep(const std::string& path, std::string& gpu_id);

// {file: {"gpu", "rows": [...], "ranges": {"<impl> <dtype>, <range>": {"target_measured": {samples, median_ape,
// p90_ape, max_ape, median_signed}, "cross_generation": {...}}}}}; ranges by tokens per expert: 1-64 (weight
// streaming), 128-512, 1024+ (math).
json grouped_gemm_accuracy(const std::string& measured_dir);

// The table report-accuracy prints for it.
void print_grouped_gemm_tables(const json& grouped);

}  // namespace sightline::cli
