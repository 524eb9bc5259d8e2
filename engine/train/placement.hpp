#pragma once
// Where the ranks of each parallel group sit (GPUs of a group per node, nodes
// spanned) and what a collective over such a group costs. Collectives are
// priced by the scenario's cost model only: a group inside a node on the
// intra-node link; a group spanning nodes hierarchically (intra-node phase on
// the intra-node link, inter-node phase on the network with each GPU's NIC
// carrying its share).
#include <string>
#include <vector>

#include "perf/cost_setup.hpp"
#include "scenario/scenario.hpp"

namespace sightline {

struct GroupShape {
  int size = 1;
  int local = 1;  // members of the group inside one node
  int nodes = 1;  // nodes the group spans
  bool inter_node() const { return nodes > 1; }
};

// Mesh axes: stride of each axis under the placement (innermost first).
struct Mesh {
  int dp = 1, tp = 1, pp = 1, cp = 1, ep = 1;
  int stride_dp = 1, stride_tp = 1, stride_pp = 1, stride_cp = 1;
  int gpus_per_node = 1;
};
Mesh make_mesh(const TrainParallelism& p, int gpus_per_node);

// Shape of the group containing rank 0 that spans the given (size, stride) axes.
GroupShape group_shape(const std::vector<std::pair<int, int>>& axes, int gpus_per_node);

struct TrainGroups {
  GroupShape tp, cp, ep, pp;
  GroupShape dp_dense;   // gradient sync / ZeRO sharding of dense parameters: dp × cp
  GroupShape dp_expert;  // of expert parameters: (dp / ep) × cp
  std::vector<bool> pp_boundary_inter;  // stage d -> d+1 crosses nodes (size pp - 1; plus wrap for interleaving)
  bool pp_wrap_inter = false;           // last stage -> first stage (interleaved schedules)
};
TrainGroups make_groups(const TrainParallelism& p, const HardwareSpec& hw);

class CommPricer {
 public:
  CommPricer(const CostSetup& setup, const HardwareSpec& hw);
  // One collective of `message_bytes` (nccl-tests convention: the full buffer)
  // over a group of the given shape.
  double collective(CollectiveKind kind, double message_bytes, const GroupShape& g) const;
  // The same collective forced onto the intra-node link (for "what if it were NVLink" comparisons).
  double collective_intra(CollectiveKind kind, double message_bytes, int group_size) const;
  double p2p(double bytes, bool inter_node) const;
  const InterconnectSpec* intra() const { return intra_; }
  const InterconnectSpec* inter() const { return inter_; }

 private:
  double flat(CollectiveKind kind, double bytes, int group, const InterconnectSpec* link) const;
  const CostSetup& setup_;
  const InterconnectSpec* intra_ = nullptr;
  const InterconnectSpec* inter_ = nullptr;
};

}  // namespace sightline
