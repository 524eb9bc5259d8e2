#pragma once
// LoRA adapters on one GPU: which projections carry one (the spec's targets),
// their shapes after tensor-parallel sharding, their trainable parameters, and
// the two low-rank GEMMs (x·A, then ·B) each adds to the forward and backward
// passes.
#include <cstdint>
#include <string>
#include <vector>

#include "train/micro_batch_graph.hpp"

namespace sightline {

struct LoraAdapter {
  std::string target;             // q, k, v, o, up, gate or down
  int64_t d_in_local, d_out_local;  // on this GPU
  int64_t d_in, d_out;              // of the whole projection
};

// The adapters attached to the base projection `base_gemm` (e.g. "attn_pre_proj"); none without LoRA.
std::vector<LoraAdapter> lora_adapters_for(const GraphContext& g, const std::string& base_gemm);

// Trainable adapter parameters of one layer: on this GPU (`per_gpu`) or over all tp ranks.
double lora_params_per_layer(const GraphContext& g, bool per_gpu);

// Adds the adapters of forward operator `base` (their GEMMs and backward GEMMs) to the graph.
void add_lora_adapter_ops(const GraphContext& g, const Operator& base, OpTag tag, TrainingGraph& graph);

}  // namespace sightline
