#pragma once
// Reading calibration inputs from disk (native CLI only): Vidur profiling
// folders and measurement CSV files.
#include <map>
#include <string>
#include <vector>

#include "comm/comm_calibration.hpp"
#include "perf/calibrate.hpp"

namespace sightline::cli {

// The GPU preset id that a Vidur profiling folder name stands for ("a100" → "a100-80g-sxm").
std::string vidur_gpu_id(const std::string& folder);

// The GPU folders of a Vidur profiling tree (the names of <vidur_root>/compute/*,
// sorted: the data names its GPUs, a100 and a40 today); io_error when there
// is none.
std::vector<std::string> vidur_compute_folders(const std::string& vidur_root);

// The files the loaders below read, for a command's work estimate before it
// reads any (cli/command_budget): the mlp.csv files of a Vidur compute folder
// (sorted; io_error when the folder is missing), a Vidur network folder's two
// CSVs (either may be absent), the microbenchmark sweeps of a directory.
std::vector<std::string> vidur_compute_files(const std::string& vidur_root, const std::string& folder);
std::vector<std::string> vidur_network_files(const std::string& vidur_root, const std::string& system);
std::vector<std::string> microbench_sweep_files(const std::string& measured_dir);
// The CSV files of a directory whose names start with `prefix`, sorted.
std::vector<std::string> measured_csv_files(const std::string& measured_dir, const std::string& prefix);

// Every mlp.csv under <vidur_root>/compute/<folder>/ as samples, one per operator column and row.
std::vector<KernelSample> load_vidur_compute(const std::string& vidur_root, const std::string& folder);

// Single-node collective timings of a Vidur network folder (e.g. "a100_dgx"),
// labelled with the interconnect preset id they ran on.
std::vector<CollectiveSample> load_vidur_network(const std::string& vidur_root, const std::string& system,
                                                 const std::string& interconnect_id);

// Rows of a collective-measurement CSV file.
std::vector<CollectiveSample> load_collective_csv_file(const std::string& path);

// Rows of a measurement CSV file for one GPU.
std::vector<KernelSample> load_kernel_csv_file(const std::string& path, const std::string& gpu_id);

// Our own microbenchmark sweeps (presets/calibrations/measured/microbench_<gpu>_<date>.csv),
// by GPU preset id, every timing mode included.
std::map<std::string, std::vector<KernelSample>> load_microbench_sweeps(const std::string& measured_dir);

// The directory of those sweeps in this source tree.
std::string default_measured_dir();

// Default location of the shared data next to the repository.
std::string default_data_dir();

}  // namespace sightline::cli
