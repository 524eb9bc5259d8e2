#include "comm/collectives.hpp"

#include <algorithm>

#include "comm/comm_model.hpp"

namespace sightline {

double bus_bandwidth_factor(CollectiveKind kind, int n) {
  const double d = n;
  switch (kind) {
    case CollectiveKind::AllReduce: return 2 * (d - 1) / d;
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllToAll: return (d - 1) / d;
    case CollectiveKind::SendRecv:
    case CollectiveKind::Broadcast: return 1;
  }
  return 1;
}

CommCalibration comm_calibration_for(const InterconnectSpec& link) {
  if (const CommCalibration* own = find_comm_calibration(link.id)) return *own;
  // No measurements of this link: take the efficiencies of the closest
  // measured kind and the link's own spec-sheet latency.
  const bool network = link.kind == "infiniband" || link.kind == "roce";
  const char* from_id = network ? "ib-ndr" : "nvlink3-nvswitch";
  CommCalibration c;
  if (const CommCalibration* from = find_comm_calibration(from_id)) c = *from;
  const std::string provenance = std::string("transferred from ") + from_id + "; latency from the preset's latency_us";
  c.id = link.id;
  c.source = provenance;
  c.ring.provenance = c.p2p.provenance = provenance;
  c.ring.latency_us = link.latency_us;
  c.p2p.latency_us = link.latency_us;
  c.ring.samples = c.p2p.samples = 0;
  if (!link.sharp) c.nvls.reset();
  else if (c.nvls) c.nvls->provenance = provenance;
  return c;
}

namespace {

CollectiveCost flat_cost(CollectiveKind kind, double bytes, int n, const InterconnectSpec& link) {
  return flat_collective_cost(kind, bytes, n, link, comm_calibration_for(link));
}

void fill_bandwidths(CollectiveCost& c, CollectiveKind kind, double bytes, int n) {
  if (c.time_s <= 0) return;
  c.algbw_GBps = bytes / c.time_s / 1e9;
  c.busbw_GBps = c.algbw_GBps * bus_bandwidth_factor(kind, n);
}

}  // namespace

CollectiveCost flat_collective_cost(CollectiveKind kind, double bytes, int n, const InterconnectSpec& link,
                                    const CommCalibration& cal) {
  CollectiveCost c;
  if (n <= 1 || bytes <= 0) return c;
  const double bw = link.bandwidth_per_gpu_GBps * 1e9;
  const double d = n;
  auto ring = [&](double steps, double factor) { return pipelined_time_s(cal.ring, steps, factor, bytes, n, bw, n); };
  switch (kind) {
    case CollectiveKind::AllReduce: {
      c.time_s = ring(2 * (d - 1), 2 * (d - 1) / d);
      c.algorithm = "ring";
      if (link.sharp && cal.nvls) {
        const double nvls = pipelined_time_s(*cal.nvls, 1, 1, bytes, 1, bw, n);
        if (nvls < c.time_s) {
          c.time_s = nvls;
          c.algorithm = "nvls";
        }
      }
      break;
    }
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
      c.time_s = ring(d - 1, (d - 1) / d);
      c.algorithm = "ring";
      break;
    case CollectiveKind::Broadcast:
      c.time_s = ring(d - 1, 1);
      c.algorithm = "ring";
      break;
    case CollectiveKind::AllToAll:
      c.time_s = pipelined_time_s(cal.p2p, 1, (d - 1) / d, bytes, 1, bw, n);
      c.algorithm = "pairwise";
      break;
    case CollectiveKind::SendRecv:
      c.time_s = pipelined_time_s(cal.p2p, 1, 1, bytes, 1, bw, 2);
      c.algorithm = "p2p";
      break;
  }
  fill_bandwidths(c, kind, bytes, n);
  return c;
}

CollectiveCost collective_cost(CollectiveKind kind, double bytes, const CommGroup& g) {
  CollectiveCost c;
  if (g.size <= 1 || bytes <= 0) return c;
  const int per_node = std::max(1, std::min(g.gpus_per_node, g.size));
  const bool spans_nodes = g.size > per_node && g.inter;
  if (!spans_nodes) {
    const InterconnectSpec* link = g.intra ? g.intra : g.inter;
    if (!link) return c;
    c = flat_cost(kind, bytes, g.size, *link);
  } else if (kind == CollectiveKind::SendRecv) {
    c = flat_cost(kind, bytes, 2, *g.inter);
  } else if (kind == CollectiveKind::AllToAll) {
    // The share addressed to other nodes crosses the network; the rest stays on NVLink.
    const int nodes = (g.size + per_node - 1) / per_node;
    c.time_s = flat_cost(kind, bytes * (nodes - 1) / nodes, nodes, *g.inter).time_s +
               (per_node > 1 && g.intra ? flat_cost(kind, bytes / nodes, per_node, *g.intra).time_s : 0.0);
    c.algorithm = "hierarchical";
  } else {
    // NCCL runs one ring channel per NIC ("rail"): each channel crosses every
    // node boundary on its own NIC, so a rank's ring throughput is
    // min(its NVLink bandwidth, the node's total NIC bandwidth).
    const CommCalibration cn = comm_calibration_for(*g.inter);
    double bw = per_node * g.inter->bandwidth_per_gpu_GBps * 1e9 * cn.ring.eta_for(g.size);
    AlgorithmParams p = cn.ring;
    if (g.intra) {
      const CommCalibration ci = comm_calibration_for(*g.intra);
      bw = std::min(bw, g.intra->bandwidth_per_gpu_GBps * 1e9 * ci.ring.eta_for(per_node));
      p.latency_us = std::max(ci.ring.latency_us, cn.ring.latency_us);
      p.base_latency_us = std::max(ci.ring.base_latency_us, cn.ring.base_latency_us);
    }
    p.eta_bandwidth = 1.0;  // folded into bw above
    p.eta_by_gpus.clear();
    const double n = g.size;
    const double steps = kind == CollectiveKind::AllReduce ? 2 * (n - 1) : n - 1;
    const double factor = kind == CollectiveKind::Broadcast ? 1.0 : bus_bandwidth_factor(kind, g.size);
    c.time_s = pipelined_time_s(p, steps, factor, bytes, g.size, bw, g.size);
    c.algorithm = "ring (rail-aligned across nodes)";
  }
  fill_bandwidths(c, kind, bytes, g.size);
  return c;
}

CollectiveCost collective_cost(CollectiveKind kind, double bytes, int group_size, const InterconnectSpec& link) {
  CommGroup g;
  g.size = group_size;
  g.gpus_per_node = group_size;
  g.intra = &link;
  return collective_cost(kind, bytes, g);
}

}  // namespace sightline
