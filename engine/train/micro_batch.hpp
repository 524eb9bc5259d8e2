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

// Where one micro-batch's time goes. The JSON writer groups them (compute,
// recompute, exposed communication, overhead) through time_cat_group(), not
// through their order here.
enum class TimeCat {
  Gemm,
  Attention,
  Norm,
  Elementwise,
  Rope,
  Embedding,
  MoeRouter,
  Loss,
  Recompute,
  TpComm,
  EpComm,
  CpComm,
  FsdpComm,
  Overhead,
};
constexpr int kNumTimeCats = 14;
// Every category once, in the order sums run over them (sums are not
// reassociated, so this order is part of the output).
constexpr TimeCat kAllTimeCats[kNumTimeCats] = {
    TimeCat::Gemm,     TimeCat::Attention, TimeCat::Norm,     TimeCat::Elementwise, TimeCat::Rope,
    TimeCat::Embedding, TimeCat::MoeRouter, TimeCat::Loss,    TimeCat::Recompute,   TimeCat::TpComm,
    TimeCat::EpComm,   TimeCat::CpComm,    TimeCat::FsdpComm, TimeCat::Overhead};
constexpr bool time_cats_listed_in_index_order() {
  for (int i = 0; i < kNumTimeCats; ++i)
    if (static_cast<int>(kAllTimeCats[i]) != i) return false;
  return true;
}
static_assert(time_cats_listed_in_index_order(), "CatTimes indexes by the enum value: kAllTimeCats must list each once, in order");

enum class TimeCatGroup { Compute, Recompute, ExposedComm, Overhead };
TimeCatGroup time_cat_group(TimeCat c);
inline bool is_compute_time_cat(TimeCat c) { return time_cat_group(c) == TimeCatGroup::Compute; }
const char* time_cat_name(TimeCat c);

// Seconds (or milliseconds) per category, indexed by TimeCat.
struct CatTimes {
  std::array<double, kNumTimeCats> v{};
  double& operator[](TimeCat c) { return v[static_cast<size_t>(c)]; }
  double operator[](TimeCat c) const { return v[static_cast<size_t>(c)]; }
};

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
  double fp8_cast_s = 0;  // of the compute above: the FP8 recipe's cast kernels, forward + backward
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
