#include "train/micro_batch.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "model/param_count.hpp"
#include "train/layout_comm.hpp"
#include "train/lora_adapters.hpp"
#include "train/tp_overlap.hpp"

namespace sightline {

const char* time_cat_name(TimeCat c) {
  switch (c) {
    case TimeCat::Gemm: return "gemm";
    case TimeCat::Attention: return "attention";
    case TimeCat::Norm: return "norm";
    case TimeCat::Elementwise: return "elementwise";
    case TimeCat::Rope: return "rope";
    case TimeCat::Embedding: return "embedding";
    case TimeCat::MoeRouter: return "moe_router";
    case TimeCat::Loss: return "loss";
    case TimeCat::Recompute: return "recompute";
    case TimeCat::TpComm: return "tp_comm";
    case TimeCat::EpComm: return "ep_comm";
    case TimeCat::CpComm: return "cp_comm";
    case TimeCat::FsdpComm: return "fsdp_comm";
    case TimeCat::Overhead: return "overhead";
  }
  return "?";
}

TimeCatGroup time_cat_group(TimeCat c) {
  switch (c) {
    case TimeCat::Gemm:
    case TimeCat::Attention:
    case TimeCat::Norm:
    case TimeCat::Elementwise:
    case TimeCat::Rope:
    case TimeCat::Embedding:
    case TimeCat::MoeRouter:
    case TimeCat::Loss: return TimeCatGroup::Compute;
    case TimeCat::Recompute: return TimeCatGroup::Recompute;
    case TimeCat::TpComm:
    case TimeCat::EpComm:
    case TimeCat::CpComm:
    case TimeCat::FsdpComm: return TimeCatGroup::ExposedComm;
    case TimeCat::Overhead: return TimeCatGroup::Overhead;
  }
  return TimeCatGroup::Overhead;
}

namespace {

TimeCat cat_of(const Operator& op) {
  switch (op.family) {
    case OpFamily::Gemm: return TimeCat::Gemm;
    case OpFamily::AttentionPrefill:
    case OpFamily::AttentionDecode: return TimeCat::Attention;
    case OpFamily::Norm: return TimeCat::Norm;
    case OpFamily::Elementwise:
    case OpFamily::KvCacheWrite: return TimeCat::Elementwise;
    case OpFamily::Rope: return TimeCat::Rope;
    case OpFamily::Embedding: return TimeCat::Embedding;
    case OpFamily::MoeRouter: return TimeCat::MoeRouter;
    case OpFamily::Sampling: return TimeCat::Loss;
    case OpFamily::Collective: return TimeCat::TpComm;
    case OpFamily::Host: return TimeCat::Overhead;
  }
  return TimeCat::Elementwise;
}

// Priced times of one item (one layer of a kind, or the embedding / head),
// summed from the operator lists.
struct ItemTotals {
  CatTimes fwd{}, bwd{};
  double fwd_flops = 0, bwd_flops = 0;
  double tp_fwd = 0, tp_bwd = 0, tp_wgrad = 0, gemm_fwd = 0, gemm_bwd = 0, dgrad_bwd = 0;
  double attn_core_fwd = 0, attn_core_bwd = 0;
  double rec_s = 0, rec_flops = 0;
  double fp8_cast_s = 0;  // Transformer Engine's FP8 cast(-transpose) kernels, forward and backward
  double part_s[kNumParts] = {0, 0, 0, 0};
  double mlp_flops = 0;
  double ag_s = 0, ag_calls = 0;
  // Per operator of one layer, for the overlap of each TP collective with its own GEMM.
  std::vector<NamedTime> tp_fwd_ops, tp_bwd_ops;
  std::map<std::string, double> gemm_fwd_by_name, gemm_bwd_by_name;
};
using AllItemTotals = std::array<ItemTotals, kNumGraphItems>;

// The kernels the FP8 recipe adds before its GEMMs (micro_batch_graph.cpp
// names them "<gemm>_fp8_cast", "<gemm>_grad_fp8_cast", and the current-scaling
// amax scans "<gemm>_fp8_amax", "<gemm>_grad_fp8_amax").
bool is_fp8_cast(const std::string& name) {
  for (const std::string suffix : {"_fp8_cast", "_fp8_amax"})
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) return true;
  return false;
}

// Lists hold all layers of a kind; the totals are per layer.
double per_item(const GraphContext& g, GraphItem item) {
  const double n = g.layers[item_index(item)];
  return n > 0 ? n : 1.0;
}

void add_forward_totals(const GraphContext& g, const TaggedOps& F, const StepCost& priced, AllItemTotals& acc) {
  for (size_t i = 0; i < F.ops.size(); ++i) {
    const Operator& op = F.ops[i];
    const OpTag& tg = F.tags[i];
    ItemTotals& x = acc[item_index(tg.item)];
    const double time = priced.parts[i].time_s / per_item(g, tg.item);
    const double flops = op.flops * op.count / per_item(g, tg.item);
    if (tg.comm != TpCommRole::None) {
      x.tp_fwd += time;
      x.tp_fwd_ops.push_back({op.name, time});
      if (op.collective == CollectiveKind::AllGather) {
        x.ag_s += time;
        x.ag_calls += op.count / per_item(g, tg.item);
      }
    } else {
      x.fwd[cat_of(op)] += time;
      if (is_fp8_cast(op.name)) x.fp8_cast_s += time;
      x.fwd_flops += flops;
      if (op.family == OpFamily::Gemm) {
        x.gemm_fwd += time;
        x.gemm_fwd_by_name[op.name] += time;
      }
      if (tg.part == kPartAttnCore) x.attn_core_fwd += time;
      if (tg.part == kPartMlp) x.mlp_flops += flops;
    }
    x.part_s[tg.part] += time;
  }
}

void add_backward_totals(const GraphContext& g, const TaggedOps& B, const StepCost& priced, AllItemTotals& acc) {
  for (size_t i = 0; i < B.ops.size(); ++i) {
    const Operator& op = B.ops[i];
    const OpTag& tg = B.tags[i];
    ItemTotals& x = acc[item_index(tg.item)];
    const double time = priced.parts[i].time_s / per_item(g, tg.item);
    const double flops = op.flops * op.count / per_item(g, tg.item);
    if (tg.comm != TpCommRole::None) x.tp_bwd_ops.push_back({op.name, time});
    if (tg.comm == TpCommRole::WeightGradGather) {
      x.tp_wgrad += time;
      x.ag_s += time;
      x.ag_calls += op.count / per_item(g, tg.item);
    } else if (tg.comm == TpCommRole::Activation) {
      x.tp_bwd += time;
      if (op.collective == CollectiveKind::AllGather) {
        x.ag_s += time;
        x.ag_calls += op.count / per_item(g, tg.item);
      }
    } else {
      x.bwd[cat_of(op)] += time;
      if (is_fp8_cast(op.name)) x.fp8_cast_s += time;
      x.bwd_flops += flops;
      if (op.family == OpFamily::Gemm) {
        x.gemm_bwd += time;
        x.gemm_bwd_by_name[op.name] += time;
        if (is_data_gradient(op.name)) x.dgrad_bwd += time;
      }
      if (tg.part == kPartAttnCore) x.attn_core_bwd += time;
      if (tg.part == kPartMlp) x.mlp_flops += flops;
    }
    x.part_s[tg.part] += time;
  }
}

void add_recompute_totals(const GraphContext& g, const TaggedOps& R, const StepCost& priced, AllItemTotals& acc) {
  for (size_t i = 0; i < R.ops.size(); ++i) {
    const Operator& op = R.ops[i];
    const GraphItem item = R.tags[i].item;
    ItemTotals& x = acc[item_index(item)];
    x.rec_s += priced.parts[i].time_s / per_item(g, item);
    x.rec_flops += op.flops * op.count / per_item(g, item);
  }
}

// Parameters of one item on this GPU (after tp / ep sharding).
void fill_params(const GraphContext& g, const ParamCounts& pc, GraphItem item, double adapters_local, ItemCost& it) {
  const ModelArch& m = g.model;
  const TrainConfig& c = g.config;
  const int tp = g.tp, ep = g.ep;
  const double h = static_cast<double>(m.hidden_size);
  double dense = 0, expert = 0, norms = 0, largest = 0, fp8p = 0;
  if (item == GraphItem::DenseLayer) {
    dense = static_cast<double>(pc.dense_layer.attention + pc.dense_layer.mlp) / tp;
    norms = static_cast<double>(pc.dense_layer.norms);
    const double up = h * (m.gated_mlp ? 2 : 1) * g.dims.intermediate;
    largest = std::max({up, h * (g.q_local + 2 * g.kv_local)});
    if (c.fp8 == Fp8Gemms::Mlp) fp8p = static_cast<double>(pc.dense_layer.mlp) / tp;
    else if (c.fp8 != Fp8Gemms::None) fp8p = dense;
  } else if (item == GraphItem::MoeLayer) {
    const double expert_all = static_cast<double>(pc.moe_layer.mlp) - h * m.moe.num_experts;
    const double shared_frac = static_cast<double>(m.moe.num_shared_experts) /
                               static_cast<double>(m.moe.num_experts + m.moe.num_shared_experts);
    const double routed = expert_all * (1.0 - shared_frac);
    const double shared = expert_all * shared_frac;
    expert = routed / (static_cast<double>(tp) * ep);
    dense = static_cast<double>(pc.moe_layer.attention) / tp + shared / tp + h * m.moe.num_experts;
    norms = static_cast<double>(pc.moe_layer.norms);
    largest = h * (m.gated_mlp ? 2 : 1) * g.dims.expert_intermediate;
    if (c.fp8 == Fp8Gemms::Mlp) fp8p = expert + shared / tp;
    else if (c.fp8 != Fp8Gemms::None) fp8p = expert + dense;
  } else if (item == GraphItem::Embedding) {
    norms = static_cast<double>(pc.embedding) / tp;  // embeddings stay in the activation dtype
    largest = norms;
  } else {
    const double head = m.tied_embeddings ? (c.parallelism.pp > 1 ? static_cast<double>(m.vocab_size) * h : 0.0)
                                          : static_cast<double>(pc.lm_head);
    norms = head / tp + static_cast<double>(pc.final_norm);
    largest = head / tp;
    if (c.fp8 == Fp8Gemms::All) fp8p = head / tp;
  }
  it.largest_matrix_params = largest;
  it.fp8_gemm_params = fp8p;
  if (g.lora) {
    // Norms, embeddings and the head stay in the activation dtype.
    it.frozen_params_dense = dense + expert + norms;
    it.frozen_param_bytes = (dense + expert) * g.base_weight_bytes + norms * g.act_bytes;
    it.params_dense = (item == GraphItem::DenseLayer || item == GraphItem::MoeLayer) ? adapters_local : 0.0;
    it.params_expert = 0;
  } else {
    it.params_dense = dense + norms;
    it.params_expert = expert;
  }
}

// Compute times per category, and their sums per pass.
void copy_compute(const ItemTotals& x, ItemCost& it, double& fwd_s, double& bwd_s) {
  fwd_s = bwd_s = 0;
  for (const TimeCat k : kAllTimeCats) {
    it.fwd_cat[k] = x.fwd[k];
    it.bwd_cat[k] = x.bwd[k];
    fwd_s += x.fwd[k];
    bwd_s += x.bwd[k];
  }
}

// Transformer Engine runs the GEMMs of its ring-exchange and pipelined TP
// overlaps in chunks along the tokens (train/tp_overlap.hpp): one chunk of
// each such GEMM priced at its own shape (the weights whole, the rows split),
// per layer, by GEMM name. Empty without TP overlap.
struct SplitGemmTimes {
  std::map<std::string, double> fwd, bwd;
};

SplitGemmTimes split_gemm_times(const GraphContext& g, const TrainingGraph& graph, const CostSetup& setup) {
  SplitGemmTimes out;
  if (!(g.config.overlap.tp && g.sequence_parallel && g.tp > 1)) return out;
  std::map<std::string, int> splits;  // by the GEMM a split overlap runs
  for (const char* comm : {"attn_all_gather", "mlp_all_gather", "attn_reduce_scatter", "mlp_reduce_scatter",
                           "attn_all_gather_bwd", "mlp_all_gather_bwd"})
    if (tp_overlap_splits(comm, g.tp) > 1) splits[tp_overlap_partner(comm)] = tp_overlap_splits(comm, g.tp);
  auto price = [&](const TaggedOps& list, std::map<std::string, double>& into) {
    for (size_t i = 0; i < list.ops.size(); ++i) {
      const Operator& op = list.ops[i];
      const GraphItem item = list.tags[i].item;
      if (op.family != OpFamily::Gemm || (item != GraphItem::DenseLayer && item != GraphItem::MoeLayer)) continue;
      const auto sp = splits.find(op.name);
      if (sp == splits.end() || op.m < sp->second) continue;
      Operator chunk = op;
      chunk.m = (op.m + sp->second - 1) / sp->second;
      const double rows = static_cast<double>(chunk.m) / static_cast<double>(op.m);
      const double weights = static_cast<double>(op.k) * op.n;
      const double per_row = static_cast<double>(op.m) * (op.k + op.n);  // A and C elements
      chunk.flops = op.flops * rows;
      chunk.bytes = op.bytes * (weights + per_row * rows) / (weights + per_row);
      into[op.name] = setup.price_kernels(StepOperators{{chunk}}).gpu_time_s / per_item(g, item);
    }
  };
  price(graph.forward, out.fwd);
  price(graph.backward, out.bwd);
  return out;
}

// One transformer layer: compute plus the exposed part of its TP, EP and CP
// communication, and its recomputation.
ItemCost compose_layer(const GraphContext& g, const ItemTotals& x, const LayoutComm& lc, bool moe, bool recomputed,
                       int sm_count, const SplitGemmTimes& split) {
  const TrainConfig& c = g.config;
  const OverlapSpec& ov = c.overlap;
  ItemCost it;
  double cf = 0, cb = 0;
  copy_compute(x, it, cf, cb);
  // With comm overlap (it needs sequence parallelism) each collective hides
  // behind its own GEMM only; without it, only the weight-gradient gather
  // overlaps the data-gradient GEMMs (Megatron's default).
  const bool overlap_tp = ov.tp && g.sequence_parallel;
  const double tp_f =
      overlap_tp ? tp_exposed_with_overlap_s(x.tp_fwd_ops, x.gemm_fwd_by_name, g.tp, sm_count, split.fwd) : x.tp_fwd;
  const double tp_b = overlap_tp ? tp_exposed_with_overlap_s(x.tp_bwd_ops, x.gemm_bwd_by_name, g.tp, sm_count, split.bwd)
                                 : x.tp_bwd + std::max(0.0, x.tp_wgrad - x.dgrad_bwd);
  const double ep_f = moe ? lc.ep_fwd_s : 0.0;
  const double ep_b = moe ? lc.ep_bwd_s : 0.0;
  // Ring attention overlaps each K,V hop with the attention of the chunk already there.
  const double cp_f = ov.cp ? std::max(0.0, lc.cp_fwd_s - x.attn_core_fwd) : lc.cp_fwd_s;
  const double cp_b = ov.cp ? std::max(0.0, lc.cp_bwd_s - x.attn_core_bwd) : lc.cp_bwd_s;
  it.fwd_cat[TimeCat::TpComm] = tp_f;
  it.fwd_cat[TimeCat::EpComm] = ep_f;
  it.fwd_cat[TimeCat::CpComm] = cp_f;
  it.bwd_cat[TimeCat::TpComm] = tp_b;
  it.bwd_cat[TimeCat::EpComm] = ep_b;
  it.bwd_cat[TimeCat::CpComm] = cp_b;
  it.fwd_s = cf + tp_f + ep_f + cp_f;
  double recompute = 0, rec_flops = 0;
  if (recomputed) {
    recompute = it.fwd_s;  // the whole layer forward runs again, communication included
    rec_flops = x.fwd_flops;
  } else if (c.recompute.mode == RecomputeMode::Selective || c.recompute.mode == RecomputeMode::SelectiveOp) {
    recompute = x.rec_s;
    rec_flops = x.rec_flops;
  }
  it.bwd_cat[TimeCat::Recompute] = recompute;
  it.bwd_s = cb + tp_b + ep_b + cp_b + recompute;
  it.fwd_flops = x.fwd_flops;
  it.bwd_flops = x.bwd_flops;
  it.recompute_flops = rec_flops;
  it.tp_fwd_s = x.tp_fwd;
  it.tp_bwd_s = x.tp_bwd + x.tp_wgrad;
  it.tp_all_gather_s = x.ag_s;
  it.tp_all_gather_calls = x.ag_calls;
  it.ep_s = lc.ep_fwd_s + lc.ep_bwd_s;
  it.ep_calls = moe ? 2 * lc.ep_calls : 0;
  it.cp_s = lc.cp_fwd_s + lc.cp_bwd_s;
  it.fp8_cast_s = x.fp8_cast_s;
  return it;
}

// The embedding or the LM head: compute plus its (never overlapped) TP collectives.
ItemCost compose_end_item(const ItemTotals& x) {
  ItemCost it;
  double cf = 0, cb = 0;
  copy_compute(x, it, cf, cb);
  it.fwd_cat[TimeCat::TpComm] = x.tp_fwd;
  it.bwd_cat[TimeCat::TpComm] = x.tp_bwd;
  it.fwd_s = cf + x.tp_fwd;
  it.bwd_s = cb + x.tp_bwd;
  it.fwd_flops = x.fwd_flops;
  it.bwd_flops = x.bwd_flops;
  it.tp_fwd_s = x.tp_fwd;
  it.tp_bwd_s = x.tp_bwd;
  it.tp_all_gather_s = x.ag_s;
  it.tp_all_gather_calls = x.ag_calls;
  it.fp8_cast_s = x.fp8_cast_s;
  return it;
}

// Time the cost model adds on top of the listed operators (none today) is kept as overhead.
double unlisted_s(const StepCost& sc, size_t listed) {
  double x = sc.time_s;
  for (size_t i = 0; i < listed && i < sc.parts.size(); ++i) x -= sc.parts[i].time_s;
  return x > 1e-9 * sc.time_s ? x : 0.0;  // rounding of the sum is not overhead
}

}  // namespace

MicroBatchModel::MicroBatchModel(const Scenario& s, const CostSetup& setup, const CommPricer& comm,
                                 const TrainGroups& groups)
    : s_(s), setup_(setup), comm_(comm), groups_(groups) {
  build();
}

void MicroBatchModel::build() {
  const ModelArch& m = s_.model;
  const GraphContext g = make_graph_context(m, s_.precision, s_.training->config);
  tokens_ = static_cast<double>(g.tokens);
  trainable_layer_total_ = lora_params_per_layer(g, false);

  // Price the compute and tensor-parallel lists through the scenario's cost model.
  // Kernels only: a training step's host work (launches) overlaps the GPU.
  const TrainingGraph graph = build_training_graph(g);
  breakdown_.forward = setup_.price_kernels(StepOperators{graph.forward.ops});
  breakdown_.backward = setup_.price_kernels(StepOperators{graph.backward.ops});
  breakdown_.recompute = setup_.price_kernels(StepOperators{graph.recompute.ops});
  unattributed_s_ = unlisted_s(breakdown_.forward, graph.forward.ops.size()) +
                    unlisted_s(breakdown_.backward, graph.backward.ops.size()) +
                    unlisted_s(breakdown_.recompute, graph.recompute.ops.size());
  if (unattributed_s_ < 0) unattributed_s_ = 0;

  AllItemTotals acc;
  add_forward_totals(g, graph.forward, breakdown_.forward, acc);
  add_backward_totals(g, graph.backward, breakdown_.backward, acc);
  add_recompute_totals(g, graph.recompute, breakdown_.recompute, acc);

  // Communication priced on its own group: EP all-to-all and the CP ring.
  const LayoutComm lc = price_layout_comm(g, comm_, groups_);
  comm_parts_ = lc.parts;

  const ParamCounts pc = count_params(m);
  const double adapters_local = lora_params_per_layer(g, true);
  const int sm_count = s_.hardware.gpu.sm_count;
  const SplitGemmTimes split = split_gemm_times(g, graph, setup_);
  for (const LayerKind kind : {LayerKind::Dense, LayerKind::Moe}) {
    const bool moe = kind == LayerKind::Moe;
    const GraphItem item = moe ? GraphItem::MoeLayer : GraphItem::DenseLayer;
    const bool present = moe ? m.num_moe_layers() > 0 : m.num_dense_layers() > 0;
    for (const bool recomputed : {false, true}) {
      ItemCost it = compose_layer(g, acc[item_index(item)], lc, moe, recomputed, sm_count, split);
      fill_params(g, pc, item, adapters_local, it);
      layers_[moe ? 1 : 0][recomputed ? 1 : 0] = present ? it : ItemCost{};
    }
  }
  embedding_ = compose_end_item(acc[item_index(GraphItem::Embedding)]);
  fill_params(g, pc, GraphItem::Embedding, adapters_local, embedding_);
  head_ = compose_end_item(acc[item_index(GraphItem::Head)]);
  fill_params(g, pc, GraphItem::Head, adapters_local, head_);

  // Per-layer figures of the most common layer kind (T1 kernels).
  main_kind_ = m.num_dense_layers() >= m.num_moe_layers() ? LayerKind::Dense : LayerKind::Moe;
  const ItemTotals& x = acc[item_index(main_kind_ == LayerKind::Dense ? GraphItem::DenseLayer : GraphItem::MoeLayer)];
  const ItemCost& main_item = layer(main_kind_, s_.training->config.recompute.mode == RecomputeMode::Full);
  layer_times_.attn_core_fwd_s = x.attn_core_fwd;
  layer_times_.attn_core_bwd_s = x.attn_core_bwd;
  layer_times_.attn_block_s = x.part_s[kPartAttnCore] + x.part_s[kPartAttnOther];
  layer_times_.mlp_block_s = x.part_s[kPartMlp];
  layer_times_.mlp_block_flops = x.mlp_flops;
  layer_times_.layer_fwd_bwd_s = main_item.fwd_s + main_item.bwd_s;
}

}  // namespace sightline
