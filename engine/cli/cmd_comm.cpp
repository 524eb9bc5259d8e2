// sightline comm: time of one collective call on an interconnect.
//   --gpus N total ranks; --nodes M spreads them over M nodes (N/M per node),
//   then --interconnect is the network between nodes and --intra-node the link inside one.
#include <iostream>

#include "core/json_text.hpp"
#include "cli/cli_common.hpp"
#include "cli/flags.hpp"
#include "comm/collectives.hpp"
#include "core/error.hpp"

namespace sightline::cli {

namespace {
// The largest group a collective is priced for (the rank count is an int in
// the comm layer), and a payload of 1 PB, far past any single call.
constexpr int64_t kMaxCommGpus = 1 << 20;
constexpr double kMaxCommBytes = 1e15;
}  // namespace

int cmd_comm(const Args& args) {
  std::string collective, link_id, intra_id, gpu_id, format = "json";
  int64_t gpus = 0, nodes = 1;
  double bytes = 0;
  std::string problem;
  Flags flags("comm");
  flags.text("--collective", &collective).text("--interconnect", &link_id).text("--intra-node", &intra_id).text("--gpu", &gpu_id)
      .text("--format", &format, {"json", "table"})
      .integer("--gpus", &gpus, 2, kMaxCommGpus)
      .integer("--nodes", &nodes, 1, kMaxCommGpus)
      .number("--bytes", &bytes, 1, kMaxCommBytes);
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (collective.empty() || link_id.empty() || gpus < 2 || bytes <= 0 || nodes < 1 || gpus % nodes != 0)
    return usage_error("comm needs --collective NAME --gpus N (>= 2, a multiple of --nodes) --interconnect ID --bytes N");
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
    const std::shared_ptr<const CommCalibration> held = comm_calibration_for(link);
    const CommCalibration& cal = *held;
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
