#include "cli/calibration_inputs.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/cli_common.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "perf/kernel_samples.hpp"

namespace sightline::cli {

namespace fs = std::filesystem;

std::string vidur_gpu_id(const std::string& folder) {
  if (folder == "a100") return "a100-80g-sxm";  // Vidur's README: A100 80GB SXM
  return folder;
}

namespace {

const char* kVidurColumns[] = {"emb", "input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
                               "post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"};

}  // namespace

std::vector<std::string> vidur_compute_folders(const std::string& vidur_root) {
  const fs::path dir = fs::path(vidur_root) / "compute";
  std::vector<std::string> folders;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory()) folders.push_back(e.path().filename().string());
  if (folders.empty()) fail("io_error", "", "no Vidur profiling folders under " + dir.string());
  std::sort(folders.begin(), folders.end());
  return folders;
}

std::vector<std::string> vidur_compute_files(const std::string& vidur_root, const std::string& folder) {
  const fs::path dir = fs::path(vidur_root) / "compute" / folder;
  if (!fs::is_directory(dir)) fail("io_error", "", "no Vidur profiling folder " + dir.string());
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.path().filename() == "mlp.csv") files.push_back(entry.path());
  std::sort(files.begin(), files.end());  // deterministic order (by path elements)
  return std::vector<std::string>(files.begin(), files.end());
}

std::vector<KernelSample> load_vidur_compute(const std::string& vidur_root, const std::string& folder) {
  std::vector<KernelSample> out;
  for (const fs::path file : vidur_compute_files(vidur_root, folder)) {
    const std::string model = file.parent_path().filename().string();
    std::string text;
    read_input_file(file.string(), text);
    // Vidur's files have no comment lines: the first line is the header.
    const CsvTable table(text, file.string(), false);
    const std::string source = "Vidur profiling (MIT), " + fs::relative(file, vidur_root).string();
    for (const CsvTable::Row& row : table.rows()) {
      if (row.cells.size() != table.header().size()) continue;
      const auto count = [&](const char* key, int64_t max_value) { return table.integer(row, key, 1, max_value); };
      VidurShape v;
      v.heads = static_cast<int>(count("n_head", 1 << 20));
      v.kv_heads = static_cast<int>(count("n_kv_head", 1 << 20));
      v.hidden = count("n_embd", int64_t{1} << 30);
      v.intermediate = count("n_expanded_embd", int64_t{1} << 30);
      v.vocab = count("vocab_size", int64_t{1} << 30);
      v.gated = table.text(row, "use_gated_mlp") == "True";
      v.tokens = count("num_tokens", int64_t{1} << 30);
      v.tp = static_cast<int>(count("num_tensor_parallel_workers", 1 << 20));
      std::vector<std::pair<std::string, double>> medians;
      for (const char* c : kVidurColumns) {
        const std::string key = std::string("time_stats.") + c + ".median";
        if (table.has_column(key)) medians.emplace_back(c, table.number(row, key, 0, 1e15));
      }
      for (KernelSample& s : vidur_row_samples(v, medians, model, source)) out.push_back(std::move(s));
    }
  }
  return out;
}

namespace {

std::string vidur_network_file(const std::string& vidur_root, const std::string& system, const char* collective) {
  return (fs::path(vidur_root) / "network" / system / (std::string(collective) + ".csv")).string();
}

}  // namespace

std::vector<std::string> vidur_network_files(const std::string& vidur_root, const std::string& system) {
  return {vidur_network_file(vidur_root, system, "all_reduce"), vidur_network_file(vidur_root, system, "send_recv")};
}

std::vector<CollectiveSample> load_vidur_network(const std::string& vidur_root, const std::string& system,
                                                 const std::string& interconnect_id) {
  std::vector<CollectiveSample> out;
  for (const char* collective : {"all_reduce", "send_recv"}) {
    const fs::path file = vidur_network_file(vidur_root, system, collective);
    if (!fs::exists(file)) continue;
    std::string text;
    read_input_file(file.string(), text);
    const CsvTable table(text, file.string(), false);
    const std::string median = std::string("time_stats.") + collective + ".median";
    for (const CsvTable::Row& row : table.rows()) {
      if (row.cells.size() != table.header().size()) continue;
      const int64_t workers = table.integer(row, "num_workers", 1, 1 << 20);
      // Only calls inside one node: the network between Vidur's nodes is not described.
      if (table.integer(row, "devices_per_node", 1, 1 << 20) != workers) continue;
      CollectiveSample s;
      s.interconnect = interconnect_id;
      s.kind = parse_collective_kind(collective, "");
      s.gpus = static_cast<int>(workers);
      s.bytes = table.number(row, "size", 0, 1e15);
      s.time_s = table.number(row, median, 0, 1e15) * 1e-3;
      s.source = "Vidur profiling (MIT), network/" + system + "/" + collective + ".csv";
      out.push_back(s);
    }
  }
  if (out.empty()) fail("io_error", "", "no Vidur network data in " + vidur_root + "/network/" + system);
  return out;
}

std::vector<CollectiveSample> load_collective_csv_file(const std::string& path) {
  std::string text;
  read_input_file(path, text);
  return read_collective_csv(text, path);
}

std::vector<KernelSample> load_kernel_csv_file(const std::string& path, const std::string& gpu_id) {
  std::string text;
  read_input_file(path, text);
  return read_kernel_csv(text, gpu_id, path);
}

std::vector<std::string> measured_csv_files(const std::string& measured_dir, const std::string& prefix) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(measured_dir, ec))
    if (e.path().extension() == ".csv" && e.path().filename().string().rfind(prefix, 0) == 0) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return std::vector<std::string>(files.begin(), files.end());
}

std::vector<std::string> microbench_sweep_files(const std::string& measured_dir) {
  return measured_csv_files(measured_dir, "microbench_");
}

std::map<std::string, std::vector<KernelSample>> load_microbench_sweeps(const std::string& measured_dir) {
  std::map<std::string, std::vector<KernelSample>> out;
  for (const fs::path f : microbench_sweep_files(measured_dir)) {
    // microbench_<gpu>_<date>.csv: the GPU id is everything between the prefix and the last '_'.
    const std::string stem = f.stem().string().substr(std::string("microbench_").size());
    const std::string gpu = stem.substr(0, stem.rfind('_'));
    for (KernelSample& s : load_kernel_csv_file(f.string(), gpu)) out[gpu].push_back(std::move(s));
  }
  return out;
}

std::string default_measured_dir() {
#ifdef SIGHTLINE_SOURCE_DIR
  return std::string(SIGHTLINE_SOURCE_DIR) + "/presets/calibrations/measured";
#else
  return "presets/calibrations/measured";
#endif
}

std::string default_data_dir() {
#ifdef SIGHTLINE_SOURCE_DIR
  return std::string(SIGHTLINE_SOURCE_DIR) + "/../shared/data";
#else
  return "../shared/data";
#endif
}

}  // namespace sightline::cli
