#include "comm/collectives.hpp"

#include <algorithm>

#include "comm/allreduce_policy.hpp"
#include "comm/comm_model.hpp"
#include "presets/preset_store.hpp"

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

namespace {

// Links whose collectives behave alike: networks between nodes, full meshes
// of direct links, and the rest (switches and buses inside a node).
int transport_class(const InterconnectSpec& l) {
  if (l.kind == "infiniband" || l.kind == "roce") return 0;
  return l.full_mesh() ? 1 : 2;
}

// The shipped links that have their own measurements, read once: the presets
// do not change while the engine runs.
struct MeasuredLink {
  InterconnectSpec link;
  const CommCalibration* calibration;
};

const std::vector<MeasuredLink>& measured_links() {
  static const std::vector<MeasuredLink> links = [] {
    std::vector<MeasuredLink> out;
    for (const json* p : list_presets("comm_calibrations")) {
      const std::string id = p->at("id").get<std::string>();
      const CommCalibration* c = find_comm_calibration(id);
      if (!c || !find_preset("interconnects", id)) continue;
      out.push_back({read_interconnect(json(id), "/comm_calibrations/" + id), c});
    }
    return out;
  }();
  return links;
}

CommCalibration chosen_comm_calibration(const InterconnectSpec& link) {
  if (!link.calibration.empty())
    if (const CommCalibration* own = find_comm_calibration(link.calibration)) return *own;
  // No measurements named: a measured link with these very values lends its
  // own; otherwise the largest sweep of the same transport class lends its
  // efficiencies, with the link's own spec-sheet latency. Chosen by values,
  // never by the link's id.
  const CommCalibration* from = nullptr;
  int from_samples = -1;
  for (const MeasuredLink& m : measured_links()) {
    if (m.link.same_values(link)) return *m.calibration;
    if (transport_class(m.link) != transport_class(link)) continue;
    if (m.calibration->ring.samples > from_samples) {
      from = m.calibration;
      from_samples = m.calibration->ring.samples;
    }
  }
  CommCalibration none;
  none.id = "defaults";
  return transferred_comm_calibration(link, from ? *from : none);
}

// Distinct links a thread keeps answers for; past it the cache starts again
// (a run uses a handful; a fuzzer or a long-lived page may type thousands).
constexpr size_t kMaxCachedLinks = 64;

}  // namespace

std::shared_ptr<const CommCalibration> comm_calibration_for(const InterconnectSpec& link) {
  // Every priced collective asks, so the answer is kept per thread, keyed by
  // everything it depends on: choosing it anew (reading the measured links'
  // presets each time) took half the CPU of a disaggregated or wide-EP run.
  struct Entry {
    InterconnectSpec link;
    std::shared_ptr<const CommCalibration> calibration;
  };
  thread_local std::vector<Entry> cache;
  for (const Entry& e : cache)
    if (e.link.id == link.id && e.link.calibration == link.calibration && e.link.same_values(link)) return e.calibration;
  if (cache.size() >= kMaxCachedLinks) cache.clear();
  cache.push_back({link, std::make_shared<const CommCalibration>(chosen_comm_calibration(link))});
  return cache.back().calibration;
}

CommCalibration transferred_comm_calibration(const InterconnectSpec& link, const CommCalibration& from) {
  CommCalibration c = from;
  const std::string provenance = "transferred from " + from.id + "; latency from the preset's latency_us";
  c.id = link.id;
  c.source = provenance;
  c.ring.provenance = c.p2p.provenance = provenance;
  c.ring.latency_us = link.latency_us;
  c.p2p.latency_us = link.latency_us;
  c.ring.samples = c.p2p.samples = 0;
  c.ll.reset();  // LL's per-hop latency was measured on that link only
  if (!link.sharp) c.nvls.reset();
  else if (c.nvls) c.nvls->provenance = provenance;
  return c;
}

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

void widen(CollectiveCost& c, const CommBand& b) {
  c.log_q10 = std::min(c.log_q10, b.log_q10);
  c.log_q90 = std::max(c.log_q90, b.log_q90);
}

// The band of calls priced by `p`: its own held-out residuals where enough of
// this link's calls of this algorithm were measured; otherwise (transferred,
// derived from the ring, or too few rows) widened by the transfer error.
void set_band(CollectiveCost& c, const AlgorithmParams& p) {
  c.log_q10 = p.log_q10;
  c.log_q90 = p.log_q90;
  const bool own = p.samples >= kMinRowsForOwnBand && !starts_with(p.provenance, "transferred") &&
                   !starts_with(p.provenance, "derived");
  if (!own) widen(c, comm_transfer_error());
}

CollectiveCost flat_cost(CollectiveKind kind, double bytes, int n, const InterconnectSpec& link) {
  return flat_collective_cost(kind, bytes, n, link, *comm_calibration_for(link));
}

void fill_bandwidths(CollectiveCost& c, CollectiveKind kind, double bytes, int n) {
  if (c.time_s <= 0) return;
  c.algbw_GBps = bytes / c.time_s / 1e9;
  c.busbw_GBps = c.algbw_GBps * bus_bandwidth_factor(kind, n);
}

// A fully connected mesh of direct links (AMD xGMI): no switch, so a rank
// reaches each peer over its own link. A group of n GPUs in a mesh of
// domain_gpus uses n-1 of the domain_gpus-1 links, so its bandwidth is that
// share of the GPU's aggregate. Collectives run the direct algorithms RCCL
// uses on a mesh: every rank exchanges its 1/n pieces with all peers at once,
// one step for all-gather, reduce-scatter and all-to-all, two (reduce-scatter
// then all-gather) for all-reduce and for broadcast (scatter then all-gather),
// instead of the n-1 or 2(n-1) latency steps of a ring.
CollectiveCost mesh_collective_cost(CollectiveKind kind, double bytes, int n, const InterconnectSpec& link,
                                    const CommCalibration& cal) {
  CollectiveCost c;
  const int domain = std::max(2, link.domain_gpus);
  const int peers = std::min(n, domain) - 1;
  const double bw = link.bandwidth_per_gpu_GBps * 1e9 * peers / (domain - 1);
  const double d = n;
  const AlgorithmParams* used = &cal.ring;
  switch (kind) {
    case CollectiveKind::AllReduce:
    case CollectiveKind::Broadcast:
      c.time_s = pipelined_time_s(cal.ring, 2, 2 * (d - 1) / d, bytes, n, bw, n);
      break;
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
      c.time_s = pipelined_time_s(cal.ring, 1, (d - 1) / d, bytes, n, bw, n);
      break;
    case CollectiveKind::AllToAll:
      c.time_s = pipelined_time_s(cal.p2p, 1, (d - 1) / d, bytes, 1, bw, n);
      used = &cal.p2p;
      break;
    case CollectiveKind::SendRecv:
      c.time_s = pipelined_time_s(cal.p2p, 1, 1, bytes, 1, bw, 2);  // one direct link: peers = 1
      used = &cal.p2p;
      break;
  }
  c.algorithm = kind == CollectiveKind::SendRecv ? "p2p" : "direct (full mesh)";
  set_band(c, *used);
  fill_bandwidths(c, kind, bytes, n);
  return c;
}

// The stack's own all-reduce where its engine would run one and it beats
// NCCL's price `c` (see allreduce_policy.hpp): the cheapest implementation
// the message size and the link allow. Its fixed latencies come from
// published measurements, not from this link's fit, so its band is the
// transfer error.
void stack_all_reduce(CollectiveCost& c, double bytes, int n, const InterconnectSpec& link,
                      const AllReducePolicy& policy) {
  for (const AllReduceImplementation& impl : policy.implementations) {
    if (impl.algorithm == AllReduceAlgorithm::Nccl || bytes > impl.up_to_bytes) continue;
    if (!all_reduce_algorithm_runs_on(impl.algorithm, link, n)) continue;
    const double t = custom_all_reduce_time_s(impl, bytes, n, link);
    if (t >= c.time_s) continue;
    c.time_s = t;
    c.algorithm = all_reduce_algorithm_name(impl.algorithm);
    c.log_q10 = c.log_q90 = 0;
    widen(c, comm_transfer_error());
  }
  fill_bandwidths(c, CollectiveKind::AllReduce, bytes, n);
}

}  // namespace

CollectiveCost flat_collective_cost(CollectiveKind kind, double bytes, int n, const InterconnectSpec& link,
                                    const CommCalibration& cal) {
  CollectiveCost c;
  if (n <= 1 || bytes <= 0) return c;
  if (link.full_mesh()) return mesh_collective_cost(kind, bytes, n, link, cal);
  const double bw = link.bandwidth_per_gpu_GBps * 1e9;
  const double d = n;
  auto ring = [&](double steps, double factor) { return pipelined_time_s(cal.ring, steps, factor, bytes, n, bw, n); };
  const AlgorithmParams* used = &cal.ring;
  switch (kind) {
    case CollectiveKind::AllReduce: {
      c.time_s = ring(2 * (d - 1), 2 * (d - 1) / d);
      c.algorithm = "ring";
      // NCCL picks the protocol its model says is fastest: LL wins where the
      // latency of 2(n-1) hops outweighs its halved bandwidth (small messages).
      if (cal.ll && bytes <= cal.ll->up_to_bytes) {
        const double ll = pipelined_time_s(*cal.ll, 2 * (d - 1), 2 * (d - 1) / d, bytes, n, bw, n);
        if (ll < c.time_s) {
          c.time_s = ll;
          c.algorithm = "ring (LL)";
          used = &*cal.ll;
        }
      }
      if (link.sharp && cal.nvls) {
        const double nvls = pipelined_time_s(*cal.nvls, 1, 1, bytes, 1, bw, n);
        if (nvls < c.time_s) {
          c.time_s = nvls;
          c.algorithm = "nvls";
          used = &*cal.nvls;
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
      used = &cal.p2p;
      break;
    case CollectiveKind::SendRecv:
      c.time_s = pipelined_time_s(cal.p2p, 1, 1, bytes, 1, bw, 2);
      c.algorithm = "p2p";
      used = &cal.p2p;
      break;
  }
  set_band(c, *used);
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
    if (kind == CollectiveKind::AllReduce && g.all_reduce) stack_all_reduce(c, bytes, g.size, *link, *g.all_reduce);
  } else if (kind == CollectiveKind::SendRecv) {
    c = flat_cost(kind, bytes, 2, *g.inter);
  } else if (kind == CollectiveKind::AllToAll) {
    // The share addressed to other nodes crosses the network; the rest stays on NVLink.
    const int nodes = (g.size + per_node - 1) / per_node;
    const CollectiveCost remote = flat_cost(kind, bytes * (nodes - 1) / nodes, nodes, *g.inter);
    c.time_s = remote.time_s;
    c.log_q10 = remote.log_q10;
    c.log_q90 = remote.log_q90;
    if (per_node > 1 && g.intra) {
      const CollectiveCost local = flat_cost(kind, bytes / nodes, per_node, *g.intra);
      c.time_s += local.time_s;
      c.log_q10 = std::min(c.log_q10, local.log_q10);
      c.log_q90 = std::max(c.log_q90, local.log_q90);
    }
    widen(c, comm_transfer_error());  // the two-level composition itself was never fitted
    c.algorithm = "hierarchical";
  } else {
    // NCCL runs one ring channel per NIC ("rail"): each channel crosses every
    // node boundary on its own NIC, so a rank's ring throughput is
    // min(its NVLink bandwidth, the node's total NIC bandwidth).
    const std::shared_ptr<const CommCalibration> inter_held = comm_calibration_for(*g.inter);
    const CommCalibration& cn = *inter_held;
    double bw = per_node * g.inter->bandwidth_per_gpu_GBps * 1e9 * cn.ring.eta_for(g.size);
    AlgorithmParams p = cn.ring;
    set_band(c, cn.ring);
    if (g.intra) {
      const std::shared_ptr<const CommCalibration> intra_held = comm_calibration_for(*g.intra);
      const CommCalibration& ci = *intra_held;
      bw = std::min(bw, g.intra->bandwidth_per_gpu_GBps * 1e9 * ci.ring.eta_for(per_node));
      p.latency_us = std::max(ci.ring.latency_us, cn.ring.latency_us);
      p.base_latency_us = std::max(ci.ring.base_latency_us, cn.ring.base_latency_us);
      CollectiveCost intra_band;
      set_band(intra_band, ci.ring);
      c.log_q10 = std::min(c.log_q10, intra_band.log_q10);
      c.log_q90 = std::max(c.log_q90, intra_band.log_q90);
    }
    widen(c, comm_transfer_error());  // the rail-aligned composition itself was never fitted
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
