// TrainRun's step taken apart by mechanism (train/step_explained.hpp): the
// bottleneck rank's step, line by line, from the same figures the result is
// written from, so the lines add up to the step. Each line says what it is
// made of and where its numbers come from.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "comm/collectives.hpp"
#include "train/estimator.hpp"
#include "train/estimator_figures.hpp"
#include "train/tp_overlap.hpp"

namespace sightline {

namespace {

std::string fmt(const char* pattern, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, pattern, a, b, c, d);
  return buf;
}

double compute_of(const ItemCost& it) {
  double x = 0;
  for (const TimeCat k : kAllTimeCats)
    if (is_compute_time_cat(k)) x += it.fwd_cat[k] + it.bwd_cat[k];
  return x;
}

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

void TrainRun::explain_step(const StepFigures& f, const RankSummary& rb) {
  TrainStepExplained& x = explained_;
  x = TrainStepExplained{};
  x.rank = f.b;
  x.step_ms = f.step * 1e3;
  const TrainConfig& c = s_.training->config;
  const double mb = static_cast<double>(c.batch.gradient_accumulation);
  explain_compute(rb, mb);
  auto add = [&](std::string name, double s, std::string detail, std::string source) {
    x.mechanisms.push_back({std::move(name), s * 1e3, std::move(detail), std::move(source)});
  };
  add("recomputation", rb.cats[TimeCat::Recompute], "forward kernels run again in the backward (" +
      std::string(recompute_name(c.recompute.mode)) + ")", "the layer's own forward operators, priced again");
  const bool tp_overlap = c.overlap.tp && c.parallelism.sequence_parallel;
  add("tensor/sequence-parallel communication exposed", rb.cats[TimeCat::TpComm],
      fmt("%.1f ms of TP collectives per step, ", rb.tp_s * 1e3) +
          (tp_overlap ? "each all-gather / reduce-scatter hidden behind its own GEMM as Transformer Engine splits it"
                      : "not overlapped (only the weight-gradient gather hides behind the data-gradient GEMMs)"),
      tp_overlap ? "Transformer Engine userbuffers by its default method per GEMM: ring exchange in tp chunks for the "
                   "gathers, pipelined reduce-scatter in 4 chunks on 16 reserved SMs, bulk beside the backward GEMMs "
                   "(train/tp_overlap.hpp)"
                 : "Megatron-LM without --tp-comm-overlap");
  add("expert-parallel all-to-all exposed", rb.cats[TimeCat::EpComm], fmt("%.1f ms of dispatch/combine per step", rb.ep_s * 1e3),
      "token bytes x top-k x load imbalance on the EP group (train/layout_comm.cpp)");
  add("context-parallel ring exchange exposed", rb.cats[TimeCat::CpComm],
      fmt("%.1f ms of K,V ring hops per step, ", rb.cp_s * 1e3) +
          (c.overlap.cp ? "each hop hidden behind the attention of the chunk already there" : "not overlapped"),
      "Transformer Engine context parallelism (p2p ring): cp-1 hops of the local K,V forward, twice that backward");
  add("FSDP gathers / reduce-scatters exposed", rb.cats[TimeCat::FsdpComm], fmt("%.1f ms of FSDP collectives per step", rb.fsdp_s * 1e3),
      "per-layer all-gather prefetched one layer ahead, reduce-scatter after each layer's backward (PyTorch FSDP2)");
  const auto& pin = sim_->input();
  const RankTimeline& tb = sim_->ranks()[f.b];
  const double p = pin.pp, v = pin.virtual_stages, m = static_cast<double>(pin.micro_batches);
  const std::string sched = schedule_name(c.schedule);
  add("pipeline bubble and waits", f.bubble,
      "schedule " + sched + "; p=" + std::to_string(pin.pp) + ", v=" + std::to_string(pin.virtual_stages) +
          ", m=" + std::to_string(pin.micro_batches) +
          fmt(" micro-batches: idle %.2f%% of the busy time (formula (p-1)/(v*m) = %.2f%%)",
              tb.busy_s > 0 ? 100.0 * f.bubble / tb.busy_s : 0.0, 100.0 * (p - 1) / (v * m)),
      "the simulated schedule (train/schedule.cpp): every pass of every micro-batch, with stage-to-stage transfers; "
      "includes the wait for slower ranks' optimizer and gathers");
  explain_data_parallel(f, rb);
  add("FP8 weight cast (once per step)", rb.cast_s, fmt("%.0f M FP8 GEMM weights cast from the FP32 master copy", rb.fp8 / 1e6),
      "Transformer Engine caches the FP8 weights across micro-batches (is_first_microbatch)");
  add("FP8 amax all-reduces", rb.framework.fp8_amax_allreduce_s,
      fmt("per micro-batch, forward and backward, over the data x tensor-parallel group, %.0f micro-batches", mb),
      "Transformer Engine delayed scaling (reduce_amax), train/framework_costs.hpp");
  const double held = rb.n_dense / (c.parallelism.zero_stage >= 1 ? groups_.dp_dense.size : 1) +
                      rb.n_expert / (c.parallelism.zero_stage >= 1 ? groups_.dp_expert.size : 1);
  add("optimizer step", rb.opt_s + rb.offload_s,
      std::string(optimizer_name(c.optimizer.kind)) + fmt(" on %.1f M parameters held by this GPU", held / 1e6) +
          (c.optimizer.cpu_offload ? " (offloaded: PCIe transfers and the host update)" : ""),
      "memory-bound fused update: master weights, moments, gradient read twice (clipping norm, update)");
  add("gradient-norm all-reduce and input copy", rb.framework.grad_norm_allreduce_s + rb.framework.input_copy_s,
      fmt("norm all-reduce %.3f ms over all GPUs; token ids and labels over PCIe %.3f ms",
          rb.framework.grad_norm_allreduce_s * 1e3, rb.framework.input_copy_s * 1e3),
      "gradient clipping (Megatron clip_grad 1.0) and the data loader's host-to-device copy");
  add("other step overhead", rb.cats[TimeCat::Overhead], "time the cost model adds beyond the listed operators",
      "cost model step overhead");
  explain_network(rb);
}

// Compute by layer kind, the embedding and head, and the FP8 casts (whose
// time the kernels of each item include; the lines here take it out).
void TrainRun::explain_compute(const RankSummary& rb, double mb) {
  const TrainConfig& c = s_.training->config;
  const ModelArch& m = s_.model;
  const int pp = c.parallelism.pp, v = c.parallelism.virtual_stages;
  const int d = explained_.rank;
  double dense_s = 0, moe_s = 0, ends_s = 0, casts_s = 0;
  int dense_n = 0, moe_n = 0;
  for (int k = 0; k < v; ++k) {
    const int j = k * pp + d;
    if (j == 0) {
      ends_s += compute_of(mb_->embedding()) - mb_->embedding().fp8_cast_s;
      casts_s += mb_->embedding().fp8_cast_s;
    }
    for (int i = chunk_first_layer_[j]; i < chunk_first_layer_[j] + chunk_layers_[j]; ++i) {
      const bool moe = m.is_moe() && i >= m.moe.first_dense_layers;
      const bool ck = c.recompute.mode == RecomputeMode::Full && i % c.recompute.every_n_layers == 0;
      const ItemCost& it = mb_->layer(moe ? LayerKind::Moe : LayerKind::Dense, ck);
      (moe ? moe_s : dense_s) += compute_of(it) - it.fp8_cast_s;
      (moe ? moe_n : dense_n) += 1;
      casts_s += it.fp8_cast_s;
    }
    if (j == pp * v - 1) {
      ends_s += compute_of(mb_->head()) - mb_->head().fp8_cast_s;
      casts_s += mb_->head().fp8_cast_s;
    }
  }
  double total = 0;
  for (const TimeCat k : kAllTimeCats)
    if (is_compute_time_cat(k)) total += rb.cats[k];
  auto add = [&](std::string name, double s, std::string detail, std::string source) {
    explained_.mechanisms.push_back({std::move(name), s * 1e3, std::move(detail), std::move(source)});
  };
  const std::string kernels = "kernel cost model: " + setup_.provenance;
  if (dense_n > 0)
    add("compute: dense layers", dense_s * mb,
        std::to_string(dense_n) + " layers on this rank" +
            fmt(" x %.0f micro-batches, %.3f ms per layer forward + backward", mb, dense_s / dense_n * 1e3),
        kernels);
  if (moe_n > 0)
    add("compute: MoE layers", moe_s * mb,
        std::to_string(moe_n) + " layers on this rank" +
            fmt(" x %.0f micro-batches, %.3f ms per layer forward + backward", mb, moe_s / moe_n * 1e3),
        kernels);
  add("compute: embedding, LM head and loss", ends_s * mb, "on the first and last pipeline stages", kernels);
  add("FP8 casts (activations and gradients)", casts_s * mb,
      std::string("one cast(-transpose) of each FP8 GEMM's input forward and of its output gradient backward") +
          (c.fp8_recipe == Fp8Recipe::Current ? ", each after an amax scan of the tensor (current scaling)"
                                                : " (delayed scaling: the scale comes from the amax history)"),
      "Transformer Engine cast_transpose kernels, memory-bound (train/micro_batch_graph.cpp)");
  add("compute: FSDP copies and other kernels", std::max(0.0, total - (dense_s + moe_s + ends_s + casts_s) * mb),
      "FSDP2's copy-out after each all-gather and copy-in before each reduce-scatter, and any kernel the lines above do not hold",
      "memory-bound copies, torch/distributed/_composable/fsdp/_fsdp_collectives.py (train/estimator.cpp)");
}

// The data-parallel gradient reduce and the parameter all-gather: what is
// exposed, and the buckets it comes from.
void TrainRun::explain_data_parallel(const StepFigures& f, const RankSummary& rb) {
  const TrainConfig& c = s_.training->config;
  const int pp = c.parallelism.pp;
  const int d = explained_.rank;
  const auto& buckets = sim_->input().buckets;
  int n = 0;
  double bytes = 0, last_ms = 0, time = 0;
  for (int k = 0; k < c.parallelism.virtual_stages; ++k)
    for (const GradBucket& b : buckets[k * pp + d]) {
      ++n;
      bytes += b.bytes;
      time += b.time_s;
    }
  if (!buckets[d].empty()) last_ms = buckets[d].back().time_s * 1e3;  // local chunk 0 finishes last
  const bool zero3 = c.parallelism.zero_stage == 3;
  const std::string kind = c.parallelism.zero_stage == 0 ? "all-reduce" : "reduce-scatter";
  explained_.mechanisms.push_back(
      {"data-parallel gradient " + kind + " exposed", f.dp_exposed * 1e3,
       zero3 ? std::string("ZeRO-3: the gradients are reduce-scattered layer by layer (the FSDP line)")
             : std::to_string(n) + fmt(" buckets (%.0f MiB each, %.1f MiB on this GPU), %.1f ms on the stream; the last "
                                        "bucket (%.2f ms) leaves when the backward ends",
                                        c.overlap.bucket_MiB, bytes / kMiB, time * 1e3, last_ms) +
                   (c.overlap.dp ? "" : "; overlap off: every bucket waits for the last backward"),
       "Megatron DDP buckets in backward order, one bucket per chunk after a rank's first (train/dp_overlap.hpp)"});
  explained_.mechanisms.push_back(
      {"data-parallel parameter all-gather exposed", rb.ag_exposed_s * 1e3,
       fmt("%.1f ms of all-gathers of the updated parameters; ", rb.ag_s * 1e3) +
           (c.overlap.param_gather ? "chunk by chunk behind the forwards (overlap_param_gather)"
                                   : "after the optimizer step, not overlapped"),
       "Megatron distributed optimizer (train/dp_overlap.hpp)"});
}

// What the step's collectives achieve on their groups: a gradient bucket and
// the whole gradient on the data-parallel group, one TP collective.
void TrainRun::explain_network(const RankSummary& rb) {
  const TrainConfig& c = s_.training->config;
  const double grad_b = dtype_bytes(c.optimizer.grad_dtype);
  const std::string intra = comm_->intra() ? comm_->intra()->id : "-";
  const std::string inter = comm_->inter() ? comm_->inter()->id : "-";
  auto line = [&](const std::string& what, CollectiveKind kind, double bytes, const GroupShape& g, const std::string& src) {
    if (g.size <= 1 || bytes <= 0) return;
    const double t = comm_->collective(kind, bytes, g);
    NetworkLine l;
    l.group = what;
    l.collective = collective_name(kind);
    l.gpus = g.size;
    l.gpus_per_node = g.local;
    l.nodes = g.nodes;
    l.message_MiB = bytes / kMiB;
    l.time_ms = t * 1e3;
    l.busbw_GBps = t > 0 ? bytes / t * bus_bandwidth_factor(kind, g.size) / 1e9 : 0.0;
    l.links = g.inter_node() ? (g.local > 1 ? intra + " inside nodes, " + inter + " between" : inter) : intra;
    l.source = src;
    explained_.network.push_back(l);
  };
  const CollectiveKind dp_kind =
      c.parallelism.zero_stage == 0 ? CollectiveKind::AllReduce : CollectiveKind::ReduceScatter;
  const std::string dp_src =
      "the comm model on the group's placement: inside a node on the NVLink calibration, across nodes reduce-scatter "
      "in the node, the network phase on 1/local of the data with each GPU on its own NIC (rail-optimised: every rail "
      "a non-blocking tree), then all-gather in the node. Published for comparison: 4 nodes x 8 H100, 8x400G, ring "
      "all-reduce ~320-330 GB/s busbw (NVIDIA/nccl issue #1221; measurements.md 2c N6 330.93 GB/s), NVLSTree "
      "~370-380 GB/s multi-node and rings degrading at scale (NVIDIA/nccl issue #1649); SHARP is not assumed "
      "unless the network preset says so";
  if (c.parallelism.zero_stage == 3) {
    const ItemCost& layer = mb_->layer(mb_->main_layer_kind(), false);
    line("FSDP all-gather of one layer's parameters", CollectiveKind::AllGather,
         layer.params_dense * dtype_bytes(s_.precision.weights), groups_.dp_dense, dp_src);
  } else {
    line("data-parallel gradient bucket", dp_kind, c.overlap.bucket_MiB * kMiB, groups_.dp_dense, dp_src);
  }
  line("data-parallel whole gradient", dp_kind, rb.n_dense * grad_b, groups_.dp_dense, dp_src);
  line("expert data-parallel whole gradient", dp_kind, rb.n_expert * grad_b, groups_.dp_expert, dp_src);
  const double act = mb_->tokens() * static_cast<double>(s_.model.hidden_size) * dtype_bytes(s_.precision.activations);
  line("tensor-parallel all-gather of one layer input", CollectiveKind::AllGather, act, groups_.tp,
       "the NVLink calibration of the intra-node link (presets/comm_calibrations)");
}

}  // namespace sightline
