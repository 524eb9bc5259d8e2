#include "train/placement.hpp"

#include <algorithm>
#include <map>

namespace sightline {

Mesh make_mesh(const TrainParallelism& p, int gpus_per_node) {
  Mesh m;
  m.dp = p.dp;
  m.tp = p.tp;
  m.pp = p.pp;
  m.cp = p.cp;
  m.ep = p.ep;
  m.gpus_per_node = gpus_per_node;
  int stride = 1;
  for (const auto& a : p.placement) {
    if (a == "tp") { m.stride_tp = stride; stride *= p.tp; }
    else if (a == "cp") { m.stride_cp = stride; stride *= p.cp; }
    else if (a == "dp") { m.stride_dp = stride; stride *= p.dp; }
    else { m.stride_pp = stride; stride *= p.pp; }
  }
  return m;
}

GroupShape group_shape(const std::vector<std::pair<int, int>>& axes, int gpus_per_node) {
  GroupShape g;
  std::vector<std::pair<int, int>> active;
  for (const auto& a : axes)
    if (a.first > 1) active.push_back(a);
  for (const auto& a : active) g.size *= a.first;
  if (g.size <= 1) return g;
  const int gpn = std::max(1, gpus_per_node);
  if (g.size <= (1 << 16)) {
    // Enumerate the members of the group that holds rank 0 and count them per node.
    std::vector<int64_t> ranks = {0};
    for (const auto& a : active) {
      std::vector<int64_t> next;
      next.reserve(ranks.size() * static_cast<size_t>(a.first));
      for (int64_t r : ranks)
        for (int k = 0; k < a.first; ++k) next.push_back(r + static_cast<int64_t>(k) * a.second);
      ranks.swap(next);
    }
    std::map<int64_t, int> per_node;
    for (int64_t r : ranks) ++per_node[r / gpn];
    g.nodes = static_cast<int>(per_node.size());
    for (const auto& kv : per_node) g.local = std::max(g.local, kv.second);
  } else {
    // Regular layout: the innermost axis decides how many members share a node.
    int inner_stride = active.front().second;
    for (const auto& a : active) inner_stride = std::min(inner_stride, a.second);
    g.local = inner_stride >= gpn ? 1 : std::min(g.size, gpn / inner_stride);
    g.nodes = (g.size + g.local - 1) / g.local;
  }
  return g;
}

TrainGroups make_groups(const TrainParallelism& p, const HardwareSpec& hw) {
  const Mesh m = make_mesh(p, hw.gpus_per_node);
  const int gpn = hw.gpus_per_node;
  TrainGroups g;
  g.tp = group_shape({{p.tp, m.stride_tp}}, gpn);
  g.cp = group_shape({{p.cp, m.stride_cp}}, gpn);
  g.pp = group_shape({{p.pp, m.stride_pp}}, gpn);
  // Experts are spread over the first `ep` data-parallel ranks.
  g.ep = group_shape({{p.ep, m.stride_dp}}, gpn);
  g.dp_dense = group_shape({{p.dp, m.stride_dp}, {p.cp, m.stride_cp}}, gpn);
  g.dp_expert = group_shape({{p.dp / std::max(1, p.ep), m.stride_dp * p.ep}, {p.cp, m.stride_cp}}, gpn);
  for (int d = 0; d + 1 < p.pp; ++d) {
    const int64_t a = static_cast<int64_t>(d) * m.stride_pp, b = static_cast<int64_t>(d + 1) * m.stride_pp;
    g.pp_boundary_inter.push_back(a / gpn != b / gpn);
  }
  g.pp_wrap_inter = p.pp > 1 && (static_cast<int64_t>(p.pp - 1) * m.stride_pp) / gpn != 0;
  return g;
}

CommPricer::CommPricer(const CostSetup& setup, const HardwareSpec& hw) : setup_(setup) {
  if (hw.intra_node) intra_ = &*hw.intra_node;
  if (hw.inter_node) inter_ = &*hw.inter_node;
}

double CommPricer::flat(CollectiveKind kind, double bytes, int group, const InterconnectSpec* link) const {
  if (group <= 1 || bytes <= 0 || !link) return 0.0;
  Operator op;
  op.name = "train_" + collective_name(kind);
  op.family = OpFamily::Collective;
  op.collective = kind;
  op.group_size = group;
  op.message_bytes = bytes;
  op.bytes = bytes;
  op.count = 1;
  CostContext ctx = setup_.ctx;
  ctx.tp_link = link;
  ctx.pp_link = link;
  return setup_.model->cost(op, ctx).time_s;
}

double CommPricer::collective(CollectiveKind kind, double bytes, const GroupShape& g) const {
  if (g.size <= 1 || bytes <= 0) return 0.0;
  if (!g.inter_node()) return flat(kind, bytes, g.size, intra_);
  const InterconnectSpec* net = inter_ ? inter_ : intra_;
  if (g.local <= 1) return flat(kind, bytes, g.nodes, net);
  // Hierarchical: the intra-node phase on NVLink, the inter-node phase with
  // every GPU of the node driving its own NIC on 1/local of the data.
  const double shard = bytes / g.local;
  switch (kind) {
    case CollectiveKind::AllReduce:
      return flat(CollectiveKind::ReduceScatter, bytes, g.local, intra_) +
             flat(CollectiveKind::AllReduce, shard, g.nodes, net) +
             flat(CollectiveKind::AllGather, bytes, g.local, intra_);
    case CollectiveKind::ReduceScatter:
      return flat(CollectiveKind::ReduceScatter, bytes, g.local, intra_) +
             flat(CollectiveKind::ReduceScatter, shard, g.nodes, net);
    case CollectiveKind::AllGather:
      return flat(CollectiveKind::AllGather, shard, g.nodes, net) +
             flat(CollectiveKind::AllGather, bytes, g.local, intra_);
    case CollectiveKind::AllToAll:
      // Remote peers over the NICs and local peers over NVLink run concurrently.
      return std::max(flat(CollectiveKind::AllToAll, bytes, g.nodes, net),
                      flat(CollectiveKind::AllToAll, bytes / g.nodes, g.local, intra_));
    case CollectiveKind::Broadcast:
      return flat(CollectiveKind::Broadcast, bytes, g.nodes, net) + flat(CollectiveKind::Broadcast, bytes, g.local, intra_);
    case CollectiveKind::SendRecv:
      return flat(CollectiveKind::SendRecv, bytes, 2, net);
  }
  return 0.0;
}

double CommPricer::collective_intra(CollectiveKind kind, double bytes, int group_size) const {
  return flat(kind, bytes, group_size, intra_ ? intra_ : inter_);
}

double CommPricer::p2p(double bytes, bool inter_node) const {
  const InterconnectSpec* link = inter_node && inter_ ? inter_ : intra_ ? intra_ : inter_;
  return flat(CollectiveKind::SendRecv, bytes, 2, link);
}

}  // namespace sightline
