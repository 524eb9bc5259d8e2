// sightline calibrate-comm: fits the collective model of one interconnect
// from Vidur network folders and/or collective CSV files and writes it as JSON.
#include <iostream>
#include <optional>

#include "core/json_text.hpp"
#include "cli/calibration_inputs.hpp"
#include "cli/cli_common.hpp"
#include "comm/comm_fit.hpp"
#include "comm/collectives.hpp"
#include "core/error.hpp"

namespace sightline::cli {

int cmd_calibrate_comm(const Args& args) {
  std::string link_id, out_path, vidur_dir, vidur_system, shape_path;
  std::vector<std::string> csv_files;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool v = i + 1 < args.size();
    if (args[i] == "--interconnect" && v) link_id = args[++i];
    else if (args[i] == "--out" && v) out_path = args[++i];
    else if (args[i] == "--vidur-dir" && v) vidur_dir = args[++i];
    else if (args[i] == "--vidur-system" && v) vidur_system = args[++i];
    else if (args[i] == "--csv" && v) csv_files.push_back(args[++i]);
    else if (args[i] == "--shape-from" && v) shape_path = args[++i];
    else return usage_error("unexpected argument '" + args[i] + "'");
  }
  if (link_id.empty()) return usage_error("calibrate-comm needs --interconnect ID");
  try {
    const InterconnectSpec link = read_interconnect(json(link_id), "/interconnect");
    std::vector<CollectiveSample> samples;
    std::string source;
    if (!vidur_dir.empty()) {
      samples = load_vidur_network(vidur_dir, vidur_system, link_id);
      source = "Vidur network profiling " + vidur_system + " (" + std::to_string(samples.size()) + " single-node calls)";
    }
    for (const std::string& f : csv_files) {
      size_t used = 0;
      for (CollectiveSample& s : load_collective_csv_file(f))
        if (s.interconnect == link_id) {
          samples.push_back(s);
          ++used;
        }
      source += (source.empty() ? "" : "; ") + std::string("collective CSV ") +
                file_name(f) + " (" +
                std::to_string(used) + " rows)";
    }
    if (samples.empty()) fail(error_code::kMissingKey, "", "no measurements of " + link_id + " in the inputs");
    // Start from fixed defaults (never from a previously shipped file), so a
    // calibration regenerates identically from the same measurements.
    CommCalibration base;
    base.ring = AlgorithmParams{"defaults (the preset's latency_us, 1 MiB chunks)", 0.8, link.latency_us, 1 << 20, 0, 0};
    base.p2p = base.ring;
    std::optional<CommCalibration> shape;
    if (!shape_path.empty()) {
      std::string text;
      if (!read_file(shape_path, text)) fail("io_error", "", "cannot read " + shape_path);
      shape = CommCalibration::from_json(parse_json_text(text), "");
      source += "; ring shape from " + file_name(shape_path);
    }
    const CommCalibration cal = fit_comm_calibration(link, samples, base, source, shape ? &*shape : nullptr);
    const std::string text = safe_dump(cal.to_json(), 2) + "\n";
    write_output(out_path, text);
    return 0;
  } catch (const SightlineError& e) {
    return report_error(e);
  }
}

}  // namespace sightline::cli
