// sightline comm: time of one collective call on an interconnect.
//   --gpus N total ranks; --nodes M spreads them over M nodes (N/M per node),
//   then --interconnect is the network between nodes and --intra-node the link inside one.
#include <iostream>

#include "core/json_text.hpp"
#include "cli/cli_common.hpp"
#include "comm/collectives.hpp"
#include "core/error.hpp"

namespace sightline::cli {

int cmd_comm(const Args& args) {
  std::string collective, link_id, intra_id, gpu_id, format = "json";
  int64_t gpus = 0, nodes = 1;
  double bytes = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool v = i + 1 < args.size();
    try {
      if (args[i] == "--collective" && v) collective = args[++i];
      else if (args[i] == "--interconnect" && v) link_id = args[++i];
      else if (args[i] == "--intra-node" && v) intra_id = args[++i];
      else if (args[i] == "--gpu" && v) gpu_id = args[++i];
      else if (args[i] == "--format" && v) format = args[++i];
      else if (args[i] == "--gpus" && v) gpus = std::stoll(args[++i]);
      else if (args[i] == "--nodes" && v) nodes = std::stoll(args[++i]);
      else if (args[i] == "--bytes" && v) bytes = std::stod(args[++i]);
      else return usage_error("unexpected argument '" + args[i] + "'");
    } catch (const std::exception&) {
      return usage_error("'" + args[i] + "' needs a number");
    }
  }
  if (collective.empty() || link_id.empty() || gpus < 2 || bytes <= 0 || nodes < 1 || gpus % nodes != 0)
    return usage_error("comm needs --collective NAME --gpus N (>= 2, a multiple of --nodes) --interconnect ID --bytes N");
  if (format != "json" && format != "table") return usage_error("unknown format '" + format + "'");
  try {
    const CollectiveKind kind = parse_collective_kind(collective, "/collective");
    const InterconnectSpec link = read_interconnect(json(link_id), "/interconnect");
    CommGroup g;
    g.size = static_cast<int>(gpus);
    InterconnectSpec intra;
    if (nodes > 1 && gpus > nodes) {
      if (link.scope != "inter_node")
        fail(error_code::kConstraint, "/interconnect", "with --nodes > 1, --interconnect is the network between nodes");
      // The link inside a node: --intra-node, else the GPU preset's own link (its default_intra_node).
      if (intra_id.empty() && !gpu_id.empty()) intra_id = read_gpu(json(gpu_id), "/gpu").default_intra_node;
      if (intra_id.empty())
        fail(error_code::kMissingKey, "/intra-node", "with --nodes > 1, give --intra-node ID or --gpu ID (its own link)");
      intra = read_interconnect(json(intra_id), "/intra-node");
      g.gpus_per_node = static_cast<int>(gpus / nodes);
      g.intra = &intra;
      g.inter = &link;
    } else {
      g.gpus_per_node = static_cast<int>(gpus);
      g.intra = &link;
    }
    const CollectiveCost c = collective_cost(kind, bytes, g);
    const CommCalibration cal = comm_calibration_for(link);
    json out = {{"collective", collective}, {"gpus", gpus}, {"nodes", nodes}, {"bytes", bytes},
                {"interconnect", link.id}, {"intra_node", g.inter ? json(intra_id) : json(nullptr)},
                {"time_us", c.time_s * 1e6}, {"algbw_GBps", c.algbw_GBps}, {"busbw_GBps", c.busbw_GBps},
                {"algorithm", c.algorithm}, {"calibration", cal.source}};
    if (format == "json") std::cout << safe_dump(out, 2) << "\n";
    else
      std::cout << collective << " " << bytes << " B on " << gpus << " GPUs: " << fixed(c.time_s * 1e6, 1)
                << " us, busbw " << fixed(c.busbw_GBps, 1) << " GB/s (" << c.algorithm << ")\n";
    return 0;
  } catch (const SightlineError& e) {
    return report_error(e);
  }
}

}  // namespace sightline::cli
