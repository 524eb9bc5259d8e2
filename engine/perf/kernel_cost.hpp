#pragma once
// Prices operators on a GPU. The roofline tier is the plain physical bound:
// max(compute at dense peak, traffic at HBM bandwidth). The calibrated tiers of
// the cost-model issue plug in behind the same interface.
#include <string>
#include <string_view>

#include "core/json_reader.hpp"

#include "comm/collectives.hpp"
#include "hw/hardware.hpp"
#include "model/operators.hpp"

namespace sightline {

struct DecodeKernel;  // perf/decode_kernel.hpp

struct OpCost {
  double time_s = 0;      // per invocation
  double time_low_s = 0;  // 80% interval of the prediction (equal to time_s when uncalibrated)
  double time_high_s = 0;
  double compute_s = 0;   // FLOPs at the achievable compute rate
  double memory_s = 0;    // bytes at the achievable bandwidth
  // "compute", "memory", "launch" or "communication": always a literal, so a
  // view (a cost is made per operator per step; a string would be copied each time).
  std::string_view bound;
};

struct CostContext {
  const GpuSpec* gpu = nullptr;
  const InterconnectSpec* tp_link = nullptr;  // link used by collectives inside a node
  const InterconnectSpec* pp_link = nullptr;  // link between pipeline stages (send/recv)
  // For collectives whose group spans nodes: the network and how many of the
  // group's ranks share a node (0: the whole group is inside one node).
  const InterconnectSpec* inter_link = nullptr;
  int gpus_per_node = 0;
  const AllReducePolicy* all_reduce = nullptr;  // the stack's all-reduce kernels; nullptr: NCCL
  // The stack's decode-attention kernel where it runs on this GPU's
  // architecture (perf/decode_kernel.hpp); nullptr: the GPU's own level.
  const DecodeKernel* decode_kernel = nullptr;
};

// Collective operators are priced by the calibrated communication model in
// every tier (the tiers differ in how kernels are priced).
OpCost collective_op_cost(const Operator& op, const CostContext& ctx);

// What a result says about its own accuracy (the "accuracy" block of every result).
struct AccuracySummary {
  std::string tier;               // target-measured | cross-generation | roofline | mixed
  double expected_error_pct = 0;  // typical |error| of a kernel time in this tier (held-out median APE)
  std::string interval = "80%";
  std::string note;
  json to_json() const;
};

class KernelCostModel {
 public:
  virtual ~KernelCostModel() = default;
  virtual std::string tier() const = 0;
  virtual OpCost cost(const Operator& op, const CostContext& ctx) const = 0;
  virtual AccuracySummary accuracy() const = 0;
};

// The plain physical bound. It is a floor on time, so its interval runs from
// the bound up to the bound divided by the reference GPU's measured efficiency.
class RooflineCostModel : public KernelCostModel {
 public:
  std::string tier() const override { return "roofline"; }
  OpCost cost(const Operator& op, const CostContext& ctx) const override;
  AccuracySummary accuracy() const override;
};

}  // namespace sightline
