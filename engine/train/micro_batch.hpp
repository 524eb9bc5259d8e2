#pragma once
// One micro-batch of training on one GPU, priced per transformer layer (and
// for the embedding and the LM head): the forward and backward operators of
// the model's graph, rewritten for the training configuration (sequence
// parallelism, context parallelism, expert parallelism, FP8 GEMMs, LoRA
// adapters and frozen/quantized bases, recomputation), priced through the
// scenario's cost model.
#include <array>
#include <string>
#include <vector>

#include "perf/cost_setup.hpp"
#include "scenario/scenario.hpp"
#include "train/micro_batch_graph.hpp"
#include "train/placement.hpp"

namespace sightline {

enum TimeCat {
  kCatGemm,
  kCatAttention,
  kCatNorm,
  kCatElementwise,
  kCatRope,
  kCatEmbedding,
  kCatMoeRouter,
  kCatLoss,
  kCatRecompute,
  kCatTpComm,
  kCatEpComm,
  kCatCpComm,
  kCatFsdpComm,
  kCatOverhead,
  kNumTimeCats
};
const char* time_cat_name(int c);
using CatTimes = std::array<double, kNumTimeCats>;

// The two kinds of transformer layer.
enum class LayerKind { Dense, Moe };

// One layer of a kind (or the embedding / head) for one micro-batch.
struct ItemCost {
  double fwd_s = 0;        // incl. exposed TP/EP/CP communication
  double bwd_s = 0;        // incl. exposed communication and recomputation
  CatTimes fwd_cat{};
  CatTimes bwd_cat{};
  double fwd_flops = 0, bwd_flops = 0, recompute_flops = 0;
  // Parameters on this GPU (after tp / ep sharding), trainable and frozen.
  double params_dense = 0, params_expert = 0;       // trainable
  double frozen_params_dense = 0;                   // frozen (LoRA base), counted in elements
  double frozen_param_bytes = 0;                    // frozen, at their storage dtype
  double fp8_gemm_params = 0;                       // weights used by FP8 GEMMs
  double largest_matrix_params = 0;                 // biggest single weight matrix on this GPU
  // Communication totals for one pass (before overlap), per kind.
  double tp_fwd_s = 0, tp_bwd_s = 0, tp_all_gather_s = 0, tp_all_gather_calls = 0;
  double ep_s = 0, ep_calls = 0, cp_s = 0;
};

struct LayerTimes {
  double attn_core_fwd_s = 0, attn_core_bwd_s = 0;
  double attn_block_s = 0, mlp_block_s = 0, mlp_block_flops = 0;
  double layer_fwd_bwd_s = 0;
};

// Operator-level breakdown of one micro-batch through the whole model.
struct OpBreakdown {
  StepCost forward, backward, recompute;
};

class MicroBatchModel {
 public:
  MicroBatchModel(const Scenario& s, const CostSetup& setup, const CommPricer& comm, const TrainGroups& groups);
  // `recomputed`: checkpointed under full recomputation.
  const ItemCost& layer(LayerKind kind, bool recomputed) const {
    return layers_[kind == LayerKind::Moe ? 1 : 0][recomputed ? 1 : 0];
  }
  // The kind most of the model's layers are (dense when tied).
  LayerKind main_layer_kind() const { return main_kind_; }
  const ItemCost& embedding() const { return embedding_; }
  const ItemCost& head() const { return head_; }
  const LayerTimes& layer_times() const { return layer_times_; }
  const OpBreakdown& breakdown() const { return breakdown_; }
  // Extra priced parts not in the breakdown lists (EP all-to-all, CP ring), per micro-batch.
  const std::vector<PricedOperator>& comm_parts() const { return comm_parts_; }
  double tokens() const { return tokens_; }  // tokens of one micro-batch on one GPU
  double unattributed_s() const { return unattributed_s_; }  // step-level overhead the cost model adds
  double trainable_params_per_layer_total() const { return trainable_layer_total_; }  // all ranks, one layer

 private:
  void build();

  const Scenario& s_;
  const CostSetup& setup_;
  const CommPricer& comm_;
  const TrainGroups& groups_;
  ItemCost layers_[2][2];  // [dense, MoE][stored, recomputed]
  LayerKind main_kind_ = LayerKind::Dense;
  ItemCost embedding_, head_;
  LayerTimes layer_times_;
  OpBreakdown breakdown_;
  std::vector<PricedOperator> comm_parts_;
  double tokens_ = 0;
  double unattributed_s_ = 0;
  double trainable_layer_total_ = 0;
};

}  // namespace sightline
