#pragma once
// Collective communication time on a topology: calibrated ring, NVLS (in-switch
// reduction) and point-to-point models per interconnect, composed
// hierarchically when a group spans nodes (reduce-scatter inside each node,
// the collective across nodes on 1/g of the data, all-gather inside the node).
#include <memory>
#include <string>

#include "comm/comm_calibration.hpp"
#include "hw/hardware.hpp"
#include "model/operators.hpp"

namespace sightline {

struct AllReducePolicy;  // comm/allreduce_policy.hpp

struct CollectiveCost {
  double time_s = 0;
  // 80% band of log(actual / time_s): the algorithm's held-out residuals,
  // widened by the measured transfer error where the link (or the algorithm,
  // or the multi-node composition) has too few measurements of its own.
  double log_q10 = 0, log_q90 = 0;
  double algbw_GBps = 0;   // message bytes / time
  double busbw_GBps = 0;   // nccl-tests convention
  std::string algorithm;   // ring | nvls | p2p | pairwise | hierarchical(...)
};

struct CommGroup {
  int size = 1;
  int gpus_per_node = 1;                     // members of the group inside one node
  const InterconnectSpec* intra = nullptr;   // links inside a node
  const InterconnectSpec* inter = nullptr;   // network between nodes (needed when size > gpus_per_node)
  // The serving stack's all-reduce implementations (nullptr: NCCL for every size).
  const AllReducePolicy* all_reduce = nullptr;
};

CollectiveCost collective_cost(CollectiveKind kind, double message_bytes, const CommGroup& group);

// A flat group whose members all talk over `link`.
CollectiveCost collective_cost(CollectiveKind kind, double message_bytes, int group_size,
                               const InterconnectSpec& link);

// A flat group on `link` priced with an explicit calibration (for fitting and validation).
CollectiveCost flat_collective_cost(CollectiveKind kind, double message_bytes, int group_size,
                                    const InterconnectSpec& link, const CommCalibration& calibration);

// The collective model used for a link: its own calibration or a transferred
// one. Shared: the engine keeps the answer for the next collective on the link
// (tests/unit covers the cache), and a caller's copy outlives the cache.
std::shared_ptr<const CommCalibration> comm_calibration_for(const InterconnectSpec& link);

// What a link without measurements gets from calibration `from`: its
// efficiencies, with the link's own spec-sheet latency.
CommCalibration transferred_comm_calibration(const InterconnectSpec& link, const CommCalibration& from);

// nccl-tests' bus-bandwidth factor for a collective of n ranks.
double bus_bandwidth_factor(CollectiveKind kind, int n);

}  // namespace sightline
