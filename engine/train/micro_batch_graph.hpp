#pragma once
// The operator lists of one training micro-batch on one GPU: the model's
// forward graph rewritten for the training layout (sequence, context and
// expert parallelism, FP8 GEMMs, frozen or quantized LoRA bases), its backward
// pass, the LoRA adapters' own GEMMs, and the operators that selective
// recomputation runs again. Pricing and composition live in micro_batch.cpp.
#include <cstdint>
#include <vector>

#include "model/architecture.hpp"
#include "model/operators.hpp"
#include "scenario/training_spec.hpp"

namespace sightline {

// Where an operator sits in the model.
enum class GraphItem { Embedding, DenseLayer, MoeLayer, Head };
inline constexpr int kNumGraphItems = 4;
inline int item_index(GraphItem item) { return static_cast<int>(item); }

// Which sub-block of a layer an operator belongs to (used as an array index).
enum LayerPart { kPartAttnCore, kPartAttnOther, kPartMlp, kPartOther, kNumParts };

// The role of a tensor-parallel collective: none (a compute operator), one that
// moves activations or their gradients, or the backward all-gather of a block
// input that only the weight gradient needs.
enum class TpCommRole { None, Activation, WeightGradGather };

struct OpTag {
  GraphItem item = GraphItem::DenseLayer;
  LayerPart part = kPartOther;
  TpCommRole comm = TpCommRole::None;
};

// Operators with their tags, in the order they run.
struct TaggedOps {
  std::vector<Operator> ops;
  std::vector<OpTag> tags;
  void add(Operator op, OpTag tag) {
    ops.push_back(std::move(op));
    tags.push_back(tag);
  }
};

struct TrainingGraph {
  TaggedOps forward, backward, recompute;
};

// Shapes and switches that every part of the graph reads.
struct GraphContext {
  const ModelArch& model;
  const TrainConfig& config;
  Precision precision;
  int tp = 1, cp = 1, ep = 1;
  bool sequence_parallel = false;  // Megatron SP (only meaningful with tp > 1)
  Dtype act_dtype = Dtype::BF16;
  double act_bytes = 2;            // bytes per activation element
  ShardDims dims;
  int64_t seq_local = 0;           // tokens of one sequence on this GPU (seq / cp)
  int64_t tokens = 0;              // tokens of one micro-batch on this GPU
  double layers[kNumGraphItems] = {1, 0, 0, 1};  // how many of each item the model has
  bool lora = false;
  bool quantized_base = false;     // LoRA over an int/fp8 base (QLoRA-style)
  double base_weight_bytes = 2;    // bytes per frozen/trainable base weight element
  double hidden_msg_bytes = 0;     // one micro-batch's hidden states
  int64_t q_local = 0, kv_local = 0;  // per-GPU widths of the q and k (or v) projections
};

GraphContext make_graph_context(const ModelArch& m, const Precision& precision, const TrainConfig& c);

TrainingGraph build_training_graph(const GraphContext& g);

bool is_weight_gradient(const std::string& op_name);  // "<gemm>_wgrad"
bool is_data_gradient(const std::string& op_name);    // "<gemm>_dgrad"

}  // namespace sightline
