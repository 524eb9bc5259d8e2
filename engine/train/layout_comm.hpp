#pragma once
// Communication of one micro-batch that runs on its own process group rather
// than inside the tensor-parallel graph: the expert-parallel all-to-all
// (dispatch and combine, forward and backward) and the context-parallel ring
// that passes K,V chunks around the cp group (and dK,dV back in backward).
#include <vector>

#include "perf/step_cost.hpp"
#include "train/micro_batch_graph.hpp"
#include "train/placement.hpp"

namespace sightline {

struct LayoutComm {
  double ep_fwd_s = 0, ep_bwd_s = 0;  // per MoE layer
  double ep_calls = 0;                // all-to-alls per MoE layer and pass
  double cp_fwd_s = 0, cp_bwd_s = 0;  // per layer
  std::vector<PricedOperator> parts;  // whole micro-batch, for the operator breakdown
};

LayoutComm price_layout_comm(const GraphContext& g, const CommPricer& comm, const TrainGroups& groups);

}  // namespace sightline
