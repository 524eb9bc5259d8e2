#pragma once
// Framework work of a training step that the pipeline schedule does not hold:
// short synchronous operations on the compute stream that every mainstream
// framework issues, priced from the same collective and PCIe models.
//  - Gradient clipping (Megatron `clip_grad` 1.0, torchtitan `max_norm` 1.0):
//    the global norm needs one all-reduce of a scalar over every rank; the
//    norm's read of the gradients is already in the optimizer's bytes.
//  - FP8 delayed scaling (Transformer Engine): at the end of each
//    micro-batch's forward and backward, the amaxes of the FP8 tensors are
//    all-reduced over the amax-reduction group (data x tensor parallel), so
//    every rank quantizes with the same scale. Forward: input and weight of
//    each FP8 linear module; backward: its output gradient.
//  - The input batch: token ids and labels (int64) of each micro-batch are
//    copied host to device over PCIe (the data-loader workers' CPU time
//    overlaps the GPU; the copy sits on the stream before the forward).
#include "train/placement.hpp"

namespace sightline {

struct FrameworkCostInputs {
  int world_gpus = 1;
  int gpus_per_node = 1;
  GroupShape amax_group;          // data x tensor parallel ranks of one stage
  double micro_batches = 1;       // per step, per pipeline
  double fp8_modules = 0;         // FP8 linear modules on the rank (0: no FP8)
  double tokens_per_micro_batch = 0;
  double pcie_GBps = 0;           // one direction
};

struct FrameworkCosts {
  double grad_norm_allreduce_s = 0;
  double fp8_amax_allreduce_s = 0;  // all micro-batches
  double input_copy_s = 0;          // all micro-batches
  double total_s() const { return grad_norm_allreduce_s + fp8_amax_allreduce_s + input_copy_s; }
};

// The group of all `n` ranks, `gpus_per_node` to a node.
GroupShape world_group(int n, int gpus_per_node);

FrameworkCosts framework_step_costs(const FrameworkCostInputs& in, const CommPricer& comm);

}  // namespace sightline
