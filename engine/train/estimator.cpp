#include "train/estimator.hpp"

#include <algorithm>
#include <cmath>

#include "mem/inference_memory.hpp"
#include "model/param_count.hpp"
#include "perf/power.hpp"
#include "train/activations.hpp"
#include "train/framework_costs.hpp"

namespace sightline {

namespace {

constexpr int64_t kPassesPerUnit = 512;

struct OptimizerCost {
  double gpu_s = 0;     // update on the GPU
  double offload_s = 0; // PCIe transfers + host update
};

}  // namespace

TrainRun::TrainRun(const Scenario& scenario)
    : s_(scenario), setup_(make_cost_setup(scenario.cost_model, scenario.hardware)) {}
TrainRun::~TrainRun() = default;

int64_t TrainRun::total_units() const {
  const TrainConfig& c = s_.training->config;
  const int64_t passes = 2 * static_cast<int64_t>(c.parallelism.pp) * c.parallelism.virtual_stages *
                         c.batch.gradient_accumulation;
  return 2 + (passes + kPassesPerUnit - 1) / kPassesPerUnit;
}

bool TrainRun::advance(int64_t& budget) {
  while (budget > 0 && !finished_) {
    if (!setup_done_) {
      setup();
      setup_done_ = true;
      --budget;
      ++done_units_;
      continue;
    }
    if (!sim_->done()) {
      const int64_t before = sim_->scheduled_passes();
      const int64_t units = std::min<int64_t>(budget, (sim_->total_passes() - before + kPassesPerUnit - 1) / kPassesPerUnit);
      sim_->advance(units * kPassesPerUnit);
      budget -= units;
      done_units_ += units;
      continue;
    }
    finish();
    finished_ = true;
    --budget;
    done_units_ = total_units();
  }
  return finished_;
}

void TrainRun::setup() {
  const TrainConfig& c = s_.training->config;
  const TrainParallelism& par = c.parallelism;
  const ModelArch& m = s_.model;
  groups_ = make_groups(par, s_.hardware);
  comm_ = std::make_unique<CommPricer>(setup_, s_.hardware);
  mb_ = std::make_unique<MicroBatchModel>(s_, setup_, *comm_, groups_);

  const int J = par.pp * par.virtual_stages;
  const std::vector<int> layers_of = chunk_layer_counts(par, m.num_layers);
  std::vector<int> first_layer(J, 0);
  for (int j = 1; j < J; ++j) first_layer[j] = first_layer[j - 1] + layers_of[j - 1];
  chunk_first_layer_ = first_layer;
  chunk_layers_ = layers_of;
  const RecomputeSpec& rc = c.recompute;
  auto kind_of = [&](int i) {
    return m.is_moe() && i >= m.moe.first_dense_layers ? LayerKind::Moe : LayerKind::Dense;
  };
  auto checkpointed = [&](int i) { return rc.mode == RecomputeMode::Full && i % rc.every_n_layers == 0; };
  const LayerActivations la[2] = {layer_activations(s_, c, false, rc), layer_activations(s_, c, true, rc)};
  const double head_act = head_activation_bytes(s_, c);
  const double w_b = dtype_bytes(s_.precision.weights);
  const double grad_b = dtype_bytes(c.optimizer.grad_dtype);
  const double a = dtype_bytes(s_.precision.activations);
  const int zero = par.zero_stage;
  const bool fsdp = zero == 3 && (groups_.dp_dense.size > 1 || groups_.dp_expert.size > 1);
  const double bucket = c.overlap.bucket_MiB * 1024.0 * 1024.0;
  const CollectiveKind sync_kind = zero == 0 ? CollectiveKind::AllReduce : CollectiveKind::ReduceScatter;

  ScheduleInput in;
  in.kind = c.schedule;
  in.pp = par.pp;
  in.virtual_stages = par.virtual_stages;
  in.micro_batches = c.batch.gradient_accumulation;
  in.sync_every_micro_batch = zero == 2;
  in.overlap_grad_sync = c.overlap.dp;
  in.buckets.resize(J);
  chunks_.assign(J, Chunk{});
  const double overhead_share = mb_->unattributed_s() / J;

  for (int j = 0; j < J; ++j) {
    Chunk& ch = chunks_[j];
    std::vector<const ItemCost*> items;
    if (j == 0) {
      items.push_back(&mb_->embedding());
      ch.has_embedding = true;
    }
    for (int i = first_layer[j]; i < first_layer[j] + layers_of[j]; ++i) {
      const LayerKind kind = kind_of(i);
      const LayerActivations& acts = la[kind == LayerKind::Moe ? 1 : 0];
      const bool ck = checkpointed(i);
      items.push_back(&mb_->layer(kind, ck));
      ch.act_bytes += ck ? acts.checkpointed : acts.stored;
      ch.transient_bytes = std::max(ch.transient_bytes, acts.transient);
      ++ch.layers;
    }
    if (j == J - 1) {
      items.push_back(&mb_->head());
      ch.act_bytes += head_act;
      ch.has_head = true;
    }
    std::vector<double> ag(items.size(), 0.0), rs(items.size(), 0.0);
    for (size_t i = 0; i < items.size(); ++i) {
      const ItemCost& it = *items[i];
      for (const TimeCat k : kAllTimeCats) {
        ch.fwd_cat[k] += it.fwd_cat[k];
        ch.bwd_cat[k] += it.bwd_cat[k];
      }
      ch.flops += it.fwd_flops + it.bwd_flops + it.recompute_flops;
      ch.recompute_flops += it.recompute_flops;
      ch.params_dense += it.params_dense;
      ch.params_expert += it.params_expert;
      ch.frozen_bytes += it.frozen_param_bytes;
      ch.fp8_params += it.fp8_gemm_params;
      ch.largest_item_params = std::max(ch.largest_item_params,
                                        (it.params_dense + it.params_expert) * w_b + it.frozen_param_bytes);
      ch.largest_item_grads = std::max(ch.largest_item_grads, (it.params_dense + it.params_expert) * grad_b);
      ch.tp_s += it.tp_fwd_s + it.tp_bwd_s;
      ch.tp_ag_s += it.tp_all_gather_s;
      ch.ep_s += it.ep_s;
      ch.cp_s += it.cp_s;
      if (fsdp) {
        ag[i] = comm_->collective(CollectiveKind::AllGather, it.params_dense * w_b + it.frozen_param_bytes,
                                  groups_.dp_dense) +
                comm_->collective(CollectiveKind::AllGather, it.params_expert * w_b, groups_.dp_expert);
        rs[i] = comm_->collective(CollectiveKind::ReduceScatter, it.params_dense * grad_b, groups_.dp_dense) +
                comm_->collective(CollectiveKind::ReduceScatter, it.params_expert * grad_b, groups_.dp_expert);
      }
    }
    const size_t n = items.size();
    double cf = 0, cb = 0;
    for (const ItemCost* it : items) {
      cf += it->fwd_s;
      cb += it->bwd_s;
    }
    if (fsdp) {
      double fwd_dur = 0, bwd_dur = 0;
      if (c.overlap.fsdp_prefetch) {
        // Forward: all-gather of item i+1 issued when item i starts computing.
        double comm_free = ag[0], t = 0;
        std::vector<double> ag_end(n, 0.0);
        ag_end[0] = ag[0];
        for (size_t i = 0; i < n; ++i) {
          const double start = std::max(t, ag_end[i]);
          if (i + 1 < n) {
            ag_end[i + 1] = std::max(comm_free, start) + ag[i + 1];
            comm_free = ag_end[i + 1];
          }
          t = start + items[i]->fwd_s;
        }
        fwd_dur = t;
        // Backward (reverse): re-gather item i-1 when item i starts; reduce-scatter item i when it ends.
        comm_free = ag[n - 1];
        t = 0;
        ag_end[n - 1] = ag[n - 1];
        for (size_t r = n; r-- > 0;) {
          const double start = std::max(t, ag_end[r]);
          if (r > 0) {
            ag_end[r - 1] = std::max(comm_free, start) + ag[r - 1];
            comm_free = ag_end[r - 1];
          }
          t = start + items[r]->bwd_s;
          comm_free = std::max(comm_free, t) + rs[r];
        }
        bwd_dur = std::max(t, comm_free);
      } else {
        for (size_t i = 0; i < n; ++i) {
          fwd_dur += ag[i] + items[i]->fwd_s;
          bwd_dur += ag[i] + items[i]->bwd_s + rs[i];
        }
      }
      ch.fwd_cat[TimeCat::FsdpComm] += fwd_dur - cf;
      ch.bwd_cat[TimeCat::FsdpComm] += bwd_dur - cb;
      for (size_t i = 0; i < n; ++i) ch.fsdp_s += 2.0 * ag[i] + rs[i];
      ch.fwd_s = fwd_dur;
      ch.bwd_s = bwd_dur;
    } else {
      ch.fwd_s = cf;
      ch.bwd_s = cb;
      if (zero <= 2) {
        double offset = 0;
        for (size_t r = n; r-- > 0;) {
          offset += items[r]->bwd_s;
          const double g_dense = items[r]->params_dense * grad_b;
          const double g_expert = items[r]->params_expert * grad_b;
          double time = 0;
          if (g_dense > 0 && groups_.dp_dense.size > 1) {
            const double nb = std::ceil(g_dense / bucket);
            time += nb * comm_->collective(sync_kind, g_dense / nb, groups_.dp_dense);
          }
          if (g_expert > 0 && groups_.dp_expert.size > 1) {
            const double nb = std::ceil(g_expert / bucket);
            time += nb * comm_->collective(sync_kind, g_expert / nb, groups_.dp_expert);
          }
          if (time > 0) in.buckets[j].push_back(GradBucket{offset, time});
        }
      }
    }
    ch.fwd_cat[TimeCat::Overhead] += overhead_share * 0.5;
    ch.bwd_cat[TimeCat::Overhead] += overhead_share * 0.5;
    ch.fwd_s += overhead_share * 0.5;
    ch.bwd_s += overhead_share * 0.5;
    in.fwd_s.push_back(ch.fwd_s);
    in.bwd_s.push_back(ch.bwd_s);
    in.act_bytes.push_back(ch.act_bytes);
  }
  // Pipeline transfers: one micro-batch's hidden states (split over tp, as Megatron's scatter-gather does).
  const double p2p_bytes = mb_->tokens() * static_cast<double>(m.hidden_size) * a / par.tp;
  for (int j = 0; j + 1 < J; ++j) {
    const int d = j % par.pp;
    const bool inter = d + 1 < par.pp ? groups_.pp_boundary_inter[d] : groups_.pp_wrap_inter;
    const double t = comm_->p2p(p2p_bytes, inter);
    in.p2p_fwd_s.push_back(t);
    in.p2p_bwd_s.push_back(t);
  }
  sim_ = std::make_unique<PipelineSimulation>(std::move(in));
}

void TrainRun::finish() {
  const TrainConfig& c = s_.training->config;
  const TrainParallelism& par = c.parallelism;
  const ModelArch& m = s_.model;
  const HardwareSpec& hw = s_.hardware;
  const GpuSpec& gpu = hw.gpu;
  const int pp = par.pp, v = par.virtual_stages, J = pp * v;
  const int world = par.world();
  const double mb = static_cast<double>(c.batch.gradient_accumulation);
  const double w_b = dtype_bytes(s_.precision.weights);
  const double grad_b = dtype_bytes(c.optimizer.grad_dtype);
  const double a = dtype_bytes(s_.precision.activations);
  const int zero = par.zero_stage;
  const double S_dense = zero >= 1 ? groups_.dp_dense.size : 1;
  const double S_expert = zero >= 1 ? groups_.dp_expert.size : 1;
  const auto& ranks = sim_->ranks();

  // Optimizer update of n parameters held on one GPU.
  const OptimizerSpec& o = c.optimizer;
  const double master = o.master_weights ? 4.0 : w_b;
  const double moments = o.kind == OptimizerKind::AdamW ? 2.0 : o.kind == OptimizerKind::SgdMomentum ? 1.0 : 0.0;
  const double sb = dtype_bytes(o.states_dtype);
  const double flops_pp = o.kind == OptimizerKind::AdamW ? 12.0 : o.kind == OptimizerKind::SgdMomentum ? 4.0 : 10.0;
  auto update_bytes = [&](double grad_bytes) {
    // read+write master (or weights) and moments, read the gradient twice
    // (norm for clipping, then the update), write the low-precision copy.
    double b = 2.0 * master + 2.0 * moments * sb + 2.0 * grad_bytes + (o.master_weights ? w_b : 0.0);
    if (o.kind == OptimizerKind::Adafactor) b += grad_bytes;  // row/column statistics pass
    return b;
  };
  auto price_memory_op = [&](const std::string& name, double bytes, double flops) {
    if (bytes <= 0) return 0.0;
    Operator op;
    op.name = name;
    op.family = OpFamily::Elementwise;
    op.count = 1;
    op.bytes = bytes;
    op.flops = flops;
    op.compute_dtype = Dtype::FP32;
    return setup_.model->cost(op, setup_.ctx).time_s;
  };
  auto optimizer_cost = [&](double n) {
    OptimizerCost oc;
    if (n <= 0) return oc;
    if (o.cpu_offload) {
      const double pcie = gpu.pcie_bandwidth_GBps * 1e9;
      const double host_bw = o.host_memory_bandwidth_GBps * 1e9 / std::max(1, hw.gpus_per_node);
      oc.offload_s = n * grad_b / pcie + n * update_bytes(4.0) / host_bw + n * w_b / pcie;
    } else {
      oc.gpu_s = price_memory_op("optimizer_step", n * update_bytes(grad_b), n * flops_pp);
    }
    return oc;
  };
  const double state_bytes_pp = (o.master_weights ? 4.0 : 0.0) + moments * sb +
                                (o.kind == OptimizerKind::Adafactor ? 8.0 / std::max<int64_t>(1, m.hidden_size) : 0.0);

  // Per rank: step end, optimizer, memory.
  struct RankSummary {
    double n_dense = 0, n_expert = 0, frozen = 0, fp8 = 0;
    double opt_s = 0, cast_s = 0, offload_s = 0, ag_s = 0, ag_exposed_s = 0, end_s = 0;
    FrameworkCosts framework;  // gradient-norm and FP8 amax all-reduces, input copies
    CatTimes cats{};
    double flops = 0, recompute_flops = 0;
    double tp_s = 0, tp_ag_s = 0, ep_s = 0, cp_s = 0, fsdp_s = 0;
    // memory (bytes)
    double params = 0, grads = 0, states = 0, host_states = 0, acts = 0, transient = 0, logits = 0, temp = 0;
    double total = 0;
    bool head = false;
    double largest_params = 0, largest_grads = 0, fwd_first = 0;
  };
  std::vector<RankSummary> rs(pp);
  double step = 0;
  for (int d = 0; d < pp; ++d) {
    RankSummary& r = rs[d];
    for (int k = 0; k < v; ++k) {
      const Chunk& ch = chunks_[k * pp + d];
      r.n_dense += ch.params_dense;
      r.n_expert += ch.params_expert;
      r.frozen += ch.frozen_bytes;
      r.fp8 += ch.fp8_params;
      for (const TimeCat q : kAllTimeCats) r.cats[q] += mb * (ch.fwd_cat[q] + ch.bwd_cat[q]);
      r.flops += mb * ch.flops;
      r.recompute_flops += mb * ch.recompute_flops;
      r.tp_s += mb * ch.tp_s;
      r.tp_ag_s += mb * ch.tp_ag_s;
      r.ep_s += mb * ch.ep_s;
      r.cp_s += mb * ch.cp_s;
      r.fsdp_s += mb * ch.fsdp_s;
      r.transient = std::max(r.transient, ch.transient_bytes);
      r.head = r.head || ch.has_head;
      r.largest_params = std::max(r.largest_params, ch.largest_item_params);
      r.largest_grads = std::max(r.largest_grads, ch.largest_item_grads);
      if (k == 0) r.fwd_first = ch.fwd_s;
    }
    const double n_local = r.n_dense / S_dense + r.n_expert / S_expert;
    const OptimizerCost oc = optimizer_cost(n_local);
    r.opt_s = oc.gpu_s;
    r.offload_s = oc.offload_s;
    r.cast_s = price_memory_op("fp8_weight_cast", r.fp8 * 4.0, r.fp8 * 2.0);
    if ((zero == 1 || zero == 2) && (groups_.dp_dense.size > 1 || groups_.dp_expert.size > 1)) {
      r.ag_s = comm_->collective(CollectiveKind::AllGather, r.n_dense * w_b, groups_.dp_dense) +
               comm_->collective(CollectiveKind::AllGather, r.n_expert * w_b, groups_.dp_expert);
      r.ag_exposed_s = c.overlap.param_gather ? std::max(0.0, r.ag_s - r.fwd_first) : r.ag_s;
    }
    FrameworkCostInputs fw;
    fw.world_gpus = world;
    fw.gpus_per_node = hw.gpus_per_node;
    fw.amax_group = world_group(groups_.dp_dense.size * groups_.tp.size,
                                std::min(hw.gpus_per_node, groups_.dp_dense.local * groups_.tp.local));
    fw.micro_batches = mb;
    if (c.fp8 != Fp8Gemms::None) {
      // Transformer Engine linear modules: QKV, attention output, MLP in and
      // out per layer (the MLP pair only for the "mlp" recipe), and the head for "all".
      int layers = 0;
      for (int k = 0; k < v; ++k) layers += chunks_[k * pp + d].layers;
      fw.fp8_modules = layers * (c.fp8 == Fp8Gemms::Mlp ? 2.0 : 4.0) + (c.fp8 == Fp8Gemms::All && r.head ? 1.0 : 0.0);
    }
    fw.tokens_per_micro_batch = mb_->tokens();
    fw.pcie_GBps = gpu.pcie_bandwidth_GBps;
    r.framework = framework_step_costs(fw, *comm_);
    const RankTimeline& t = ranks[d];
    r.end_s = std::max(t.end_s, t.comm_end_s) + r.opt_s + r.cast_s + r.offload_s + r.ag_exposed_s + r.framework.total_s();
    step = std::max(step, r.end_s);

    // Memory.
    r.params = zero == 3 ? (r.n_dense * w_b + r.frozen) / groups_.dp_dense.size + r.n_expert * w_b / groups_.dp_expert.size
                         : r.n_dense * w_b + r.n_expert * w_b + r.frozen;
    const double S2d = zero >= 2 ? groups_.dp_dense.size : 1, S2e = zero >= 2 ? groups_.dp_expert.size : 1;
    r.grads = (r.n_dense / S2d + r.n_expert / S2e) * grad_b;
    const double states = n_local * state_bytes_pp;
    if (o.cpu_offload) r.host_states = states;
    else r.states = states;
    r.acts = t.peak_act_bytes;
    r.logits = r.head ? logits_buffer_bytes(s_, c) : 0.0;
    double temp = r.logits;
    if (zero == 3 && groups_.dp_dense.size > 1) temp += 2.0 * r.largest_params + r.largest_grads;  // gather buffers
    else if (groups_.dp_dense.size > 1 || groups_.dp_expert.size > 1) temp += c.overlap.bucket_MiB * 1024.0 * 1024.0;
    if (c.fp8 != Fp8Gemms::None) temp += zero == 3 ? 2.0 * r.largest_params / w_b : 2.0 * r.fp8;  // fp8 copies + transposes
    if (c.lora.enabled && c.lora.base_dtype != Dtype::BF16 && c.lora.base_dtype != Dtype::FP16) {
      double largest = 0;
      for (const LayerKind kind : {LayerKind::Dense, LayerKind::Moe})
        for (const bool rc : {false, true}) largest = std::max(largest, mb_->layer(kind, rc).largest_matrix_params);
      temp += largest * a;  // one dequantized weight matrix
    }
    r.temp = temp;
    r.total = r.params + r.grads + r.states + r.acts + r.transient + r.temp +
              c.runtime_overhead_GiB * kBytesPerGiB;
  }

  // Bottleneck rank for the time breakdown; most loaded rank for memory.
  int b = 0, mem_rank = 0;
  for (int d = 1; d < pp; ++d) {
    if (ranks[d].busy_s > ranks[b].busy_s) b = d;
    if (rs[d].total > rs[mem_rank].total) mem_rank = d;
  }
  const RankSummary& rb = rs[b];
  const RankTimeline& tb = ranks[b];
  const double dp_exposed = std::max(0.0, tb.comm_end_s - tb.end_s);
  const double bubble = (tb.end_s - tb.busy_s) + (step - rb.end_s);

  // Throughput, FLOPs.
  const double seq = static_cast<double>(c.batch.seq_len);
  const double tokens_step = static_cast<double>(c.batch.global_batch_size) * seq;
  const double tokens_s = tokens_step / step;
  const ParamCounts pcnt = count_params(m);
  // Active parameters leave out the embedding lookup and count the LM head
  // (the tied embedding matrix when tied): the matmul parameters of a token.
  const double n_model = static_cast<double>(pcnt.active);
  const double attn_term = 12.0 * m.num_layers * m.num_heads * static_cast<double>(m.qk_head_dim()) * seq;
  double trainable_total = 0;
  if (c.lora.enabled) trainable_total = mb_->trainable_params_per_layer_total() * m.num_layers;
  else trainable_total = static_cast<double>(pcnt.total);
  const double model_flops_per_token =
      c.lora.enabled ? 4.0 * n_model + 6.0 * trainable_total + attn_term : 6.0 * n_model + attn_term;
  const double peak = gpu.peak_tflops_for(s_.precision.activations) * 1e12;
  double exec_flops = 0, exec_recompute = 0;
  for (int d = 0; d < pp; ++d) {
    exec_flops += rs[d].flops;
    exec_recompute += rs[d].recompute_flops;
  }
  exec_flops *= static_cast<double>(par.dp) * par.cp * par.tp;
  exec_recompute *= static_cast<double>(par.dp) * par.cp * par.tp;
  // HFU counts the same FLOPs as MFU plus what recomputation runs again, in
  // MFU's convention: the kernels' own count differs from it (causal
  // attention executes half the non-causal FLOPs the PaLM formula counts), so
  // HFU from raw kernel FLOPs fell below MFU for long sequences. The
  // recomputed share of the executed FLOPs scales the model count, so
  // HFU = MFU · executed / (executed − recomputed) ≥ MFU always.
  const double model_flops_step = model_flops_per_token * tokens_step;
  const double recompute_share = exec_flops > exec_recompute && exec_flops > 0
                                     ? exec_recompute / (exec_flops - exec_recompute) : 0.0;
  const double recompute_flops_step = model_flops_step * recompute_share;
  const double hardware_flops_step = model_flops_step + recompute_flops_step;
  const double mfu = model_flops_per_token * tokens_s / (world * peak);
  const double hfu = hardware_flops_step / step / (world * peak);

  const RankSummary& rm = rs[mem_rank];
  const double cap = gpu.memory_GiB * kBytesPerGiB;
  const double act_linear = rm.acts + rm.transient + rm.logits;  // scales with the micro-batch size
  const double static_bytes = rm.total - act_linear;
  auto max_mbs_for = [&](double per_sequence) -> int64_t {
    if (static_bytes > cap) return 0;
    if (per_sequence <= 0) return int64_t{1} << 20;
    return std::min<int64_t>(int64_t{1} << 20, static_cast<int64_t>(std::floor((cap - static_bytes) / per_sequence)));
  };
  const double mbs = static_cast<double>(c.batch.micro_batch_size);
  // The same rank's activations under other recomputation policies: the
  // schedule's in-flight count is kept, the per-chunk bytes change.
  auto act_for = [&](const RecomputeSpec& rc) {
    const LayerActivations la[2] = {layer_activations(s_, c, false, rc), layer_activations(s_, c, true, rc)};
    const Chunk& ch0 = chunks_[mem_rank];
    double chunk = 0, transient = 0;
    for (int i = chunk_first_layer_[mem_rank]; i < chunk_first_layer_[mem_rank] + chunk_layers_[mem_rank]; ++i) {
      const int k = m.is_moe() && i >= m.moe.first_dense_layers ? 1 : 0;
      const bool ck = rc.mode == RecomputeMode::Full && i % rc.every_n_layers == 0;
      chunk += ck ? la[k].checkpointed : la[k].stored;
      transient = std::max(transient, la[k].transient);
    }
    if (ch0.has_head) chunk += head_activation_bytes(s_, c);
    const double scale = ch0.act_bytes > 0 ? chunk / ch0.act_bytes : 1.0;
    return rm.acts * scale + transient + rm.logits;
  };
  int64_t by_recompute_none = 0, by_recompute_selective = 0, by_recompute_full = 0;
  {
    RecomputeSpec none, sel, full;
    sel.mode = RecomputeMode::Selective;
    sel.core_attn = sel.layernorm = sel.mlp_act = true;
    full.mode = RecomputeMode::Full;
    by_recompute_none = max_mbs_for(act_for(none) / mbs);
    by_recompute_selective = max_mbs_for(act_for(sel) / mbs);
    by_recompute_full = max_mbs_for(act_for(full) / mbs);
  }
  const bool fits = rm.total <= cap;

  // Communication summary (bottleneck rank, per step).
  const double grads_rank = (rb.n_dense + rb.n_expert) * grad_b;
  const double one_shot = comm_->collective(CollectiveKind::AllReduce, rb.n_dense * grad_b, groups_.dp_dense) +
                          comm_->collective(CollectiveKind::AllReduce, rb.n_expert * grad_b, groups_.dp_expert);
  const double one_shot_intra =
      comm_->collective_intra(CollectiveKind::AllReduce, rb.n_dense * grad_b, groups_.dp_dense.size) +
      comm_->collective_intra(CollectiveKind::AllReduce, rb.n_expert * grad_b, groups_.dp_expert.size);
  const double dp_sync = zero == 3 ? rb.fsdp_s : tb.comm_total_s + rb.ag_s;
  const double dp_exp = zero == 3 ? rb.cats[TimeCat::FsdpComm] : dp_exposed + rb.ag_exposed_s;
  double compute_s = 0;
  for (const TimeCat k : kAllTimeCats)
    if (is_compute_time_cat(k)) compute_s += rb.cats[k];
  compute_s += rb.cats[TimeCat::Recompute];

  // Per-layer figures.
  const LayerTimes& lt = mb_->layer_times();
  double layer_params = 0;
  {
    const ItemCost& it = mb_->layer(mb_->main_layer_kind(), false);
    layer_params = it.params_dense / S_dense + it.params_expert / S_expert;
  }
  const OptimizerCost layer_opt = optimizer_cost(layer_params);

  // ---- Result (typed; train/training_result.cpp writes it) ----
  TrainRunResult& x = result_;
  x.header = make_result_header(s_, "training", setup_.model->tier());
  x.trainable_params_M = trainable_total / 1e6;
  x.trainable_pct = 100.0 * trainable_total / static_cast<double>(pcnt.total);
  TrainRunResult::Deployment& dep = x.deployment;
  auto place = [&](const char* axis, const GroupShape& g) {
    dep.placement.push_back({axis, g.size, g.local, g.nodes,
                             g.size <= 1 ? "none"
                             : g.inter_node() ? (comm_->inter() ? comm_->inter()->id : "?")
                                              : (comm_->intra() ? comm_->intra()->id : "?")});
  };
  place("tp", groups_.tp);
  place("cp", groups_.cp);
  place("ep", groups_.ep);
  place("dp", groups_.dp_dense);
  place("dp_expert", groups_.dp_expert);
  place("pp", groups_.pp);
  dep.gpu = gpu.id;
  dep.gpus = world;
  dep.gpus_per_node = hw.gpus_per_node;
  dep.nodes = hw.nodes;
  dep.dp = par.dp;
  dep.tp = par.tp;
  dep.pp = par.pp;
  dep.cp = par.cp;
  dep.ep = par.ep;
  dep.sequence_parallel = par.sequence_parallel;
  dep.virtual_stages = par.virtual_stages;
  dep.zero_stage = zero;
  dep.schedule = schedule_name(c.schedule);
  dep.recompute = recompute_name(c.recompute.mode);
  dep.fp8 = fp8_name(c.fp8);
  dep.optimizer = optimizer_name(o.kind);
  dep.cpu_offload = o.cpu_offload;
  if (c.lora.enabled) dep.lora = TrainRunResult::Lora{c.lora.rank, c.lora.targets, dtype_name(c.lora.base_dtype)};
  x.batch = {c.batch.seq_len, c.batch.micro_batch_size, c.batch.gradient_accumulation, c.batch.global_batch_size,
             tokens_step};
  x.flop_convention =
      "MFU counts model FLOPs per token as 6·N + 12·L·H·d_head·S (PaLM; N = parameters without the input "
      "embedding, active experts only; attention counted non-causal), LoRA: 4·N_frozen + 6·N_adapters + attention; "
      "HFU counts the same FLOPs plus those recomputation runs again (in the same convention, so HFU >= MFU). Both are relative to "
      "the dense " + dtype_name(s_.precision.activations) + " peak of the GPU, FP8 runs included.";
  TrainRunResult::Metrics& met = x.metrics;
  met.step_time_ms = step * 1e3;
  met.tokens_per_s = tokens_s;
  met.tokens_per_s_per_gpu = tokens_s / world;
  met.samples_per_s = static_cast<double>(c.batch.global_batch_size) / step;
  met.mfu_pct = 100.0 * mfu;
  met.hfu_pct = 100.0 * hfu;
  met.model_tflops_per_gpu = model_flops_per_token * tokens_s / world / 1e12;
  met.hardware_tflops_per_gpu = hardware_flops_step / step / world / 1e12;
  met.hardware_flops_per_step = hardware_flops_step;
  met.recompute_flops_per_step = recompute_flops_step;
  met.model_flops_per_token = model_flops_per_token;
  TrainRunResult::StepBreakdown& sb_ms = x.step_breakdown_ms;
  for (const TimeCat k : kAllTimeCats) sb_ms.cats_ms[k] = rb.cats[k] * 1e3;
  sb_ms.exposed_dp_ms = (dp_exposed + rb.ag_exposed_s) * 1e3;
  sb_ms.pipeline_bubble_ms = bubble * 1e3;
  sb_ms.optimizer_ms = (rb.opt_s + rb.cast_s) * 1e3;
  sb_ms.cpu_offload_ms = rb.offload_s * 1e3;
  sb_ms.framework_ms = rb.framework.total_s() * 1e3;
  sb_ms.framework_parts_ms = {rb.framework.grad_norm_allreduce_s * 1e3, rb.framework.fp8_amax_allreduce_s * 1e3,
                              rb.framework.input_copy_s * 1e3};
  sb_ms.rank = b;

  double bubble_mean = 0;
  const double span = sim_->makespan_s();
  TrainRunResult::Pipeline& pl = x.pipeline;
  for (int d = 0; d < pp; ++d) {
    const RankTimeline& t = ranks[d];
    bubble_mean += span > 0 ? (span - t.busy_s) / span : 0.0;
    double f = 0, bw = 0;
    for (int k = 0; k < v; ++k) {
      f += chunks_[k * pp + d].fwd_s;
      bw += chunks_[k * pp + d].bwd_s;
    }
    pl.per_rank.push_back({d, f * 1e3, bw * 1e3, t.busy_s * 1e3, (span - t.busy_s) * 1e3, t.peak_in_flight,
                           t.comm_total_s * 1e3, rs[d].end_s * 1e3, t.passes});
  }
  bubble_mean /= pp;
  const auto& pin = sim_->input();
  pl.schedule = schedule_name(c.schedule);
  pl.stages = pp;
  pl.virtual_stages = v;
  pl.micro_batches = c.batch.gradient_accumulation;
  pl.layers_per_chunk = chunk_layers_;
  pl.bubble_pct = span > 0 ? 100.0 * (span - tb.busy_s) / span : 0.0;
  pl.mean_idle_pct = 100.0 * bubble_mean;
  pl.bubble_formula_pct = 100.0 * bubble_formula(pp, v, c.batch.gradient_accumulation);
  pl.makespan_ms = span * 1e3;
  pl.p2p_transfer_us = pin.p2p_fwd_s.empty() ? 0.0 : pin.p2p_fwd_s.front() * 1e6;

  TrainRunResult::Communication& cm = x.communication;
  cm.tp_group = par.tp;
  cm.tp_total_ms = rb.tp_s * 1e3;
  cm.tp_all_gather_ms = rb.tp_ag_s * 1e3;
  cm.tp_all_gather_call_us = [&] {
    const ItemCost& it = mb_->layer(mb_->main_layer_kind(), false);
    return it.tp_all_gather_calls > 0 ? it.tp_all_gather_s / it.tp_all_gather_calls * 1e6 : 0.0;
  }();
  cm.tp_exposed_ms = rb.cats[TimeCat::TpComm] * 1e3;
  cm.tp_exposed_pct = 100.0 * rb.cats[TimeCat::TpComm] / step;
  cm.ep_group = par.ep;
  cm.ep_all_to_all_ms = rb.ep_s * 1e3;
  cm.ep_all_to_all_call_us = [&] {
    const ItemCost& it = mb_->layer(LayerKind::Moe, false);
    return it.ep_calls > 0 ? it.ep_s / it.ep_calls * 1e6 : 0.0;
  }();
  cm.ep_load_imbalance = c.moe_load_imbalance;
  cm.ep_exposed_ms = rb.cats[TimeCat::EpComm] * 1e3;
  cm.cp_group = par.cp;
  cm.cp_total_ms = rb.cp_s * 1e3;
  cm.cp_exposed_ms = rb.cats[TimeCat::CpComm] * 1e3;
  cm.pp_stages = pp;
  cm.pp_transfer_us = pin.p2p_fwd_s.empty() ? 0.0 : pin.p2p_fwd_s.front() * 1e6;
  cm.pp_transfers_per_step = pp > 1 ? 2.0 * mb * (J - 1) : 0.0;
  cm.dp_group = groups_.dp_dense.size;
  cm.dp_expert_group = groups_.dp_expert.size;
  cm.dp_gradient_bytes_per_gpu = grads_rank;
  cm.dp_mode = zero == 3 ? "fsdp all-gather + reduce-scatter"
               : zero == 0 ? "all-reduce"
                           : "reduce-scatter + parameter all-gather";
  cm.dp_allreduce_one_shot_ms = one_shot * 1e3;
  cm.dp_allreduce_one_shot_intra_node_ms = one_shot_intra * 1e3;
  cm.dp_inter_over_intra = one_shot_intra > 0 ? one_shot / one_shot_intra : 1.0;
  cm.dp_sync_ms = dp_sync * 1e3;
  cm.dp_exposed_ms = dp_exp * 1e3;
  cm.dp_overlap_pct = dp_sync > 0 ? 100.0 * (1.0 - dp_exp / dp_sync) : 0.0;
  cm.dp_comm_to_compute_ratio = compute_s > 0 ? dp_sync / compute_s : 0.0;

  const double attn_compute = rb.cats[TimeCat::Attention];
  TrainRunResult::PerLayer& pl_ms = x.per_layer;
  pl_ms.attention_core_fwd_ms = lt.attn_core_fwd_s * 1e3;
  pl_ms.attention_core_bwd_ms = lt.attn_core_bwd_s * 1e3;
  pl_ms.attention_core_fwd_bwd_ms = (lt.attn_core_fwd_s + lt.attn_core_bwd_s) * 1e3;
  pl_ms.attention_block_fwd_bwd_ms = lt.attn_block_s * 1e3;
  pl_ms.mlp_block_fwd_bwd_ms = lt.mlp_block_s * 1e3;
  pl_ms.mlp_flops = lt.mlp_block_flops;
  pl_ms.mlp_achieved_tflops = lt.mlp_block_s > 0 ? lt.mlp_block_flops / lt.mlp_block_s / 1e12 : 0.0;
  pl_ms.layer_fwd_bwd_ms = lt.layer_fwd_bwd_s * 1e3;
  pl_ms.layer_iteration_ms = (lt.layer_fwd_bwd_s + layer_opt.gpu_s + layer_opt.offload_s) * 1e3;
  pl_ms.attention_share_of_compute_pct = compute_s > 0 ? 100.0 * attn_compute / compute_s : 0.0;

  const double GiB = kBytesPerGiB;
  TrainRunResult::Memory& mem = x.memory_per_gpu;
  mem.rank = mem_rank;
  mem.capacity_GiB = gpu.memory_GiB;
  mem.params_GiB = rm.params / GiB;
  mem.grads_GiB = rm.grads / GiB;
  mem.optimizer_states_GiB = rm.states / GiB;
  mem.activations_GiB = (rm.acts + rm.transient) / GiB;
  mem.activations_stored_GiB = rm.acts / GiB;
  mem.activations_working_GiB = rm.transient / GiB;
  mem.temporary_GiB = rm.temp / GiB;
  mem.logits_GiB = rm.logits / GiB;
  mem.runtime_overhead_GiB = c.runtime_overhead_GiB;
  mem.total_GiB = rm.total / GiB;
  mem.free_GiB = (cap - rm.total) / GiB;
  mem.fits = fits;
  mem.overflow_GiB = std::max(0.0, rm.total - cap) / GiB;
  mem.max_micro_batch = max_mbs_for(act_linear / mbs);
  mem.max_micro_batch_none = by_recompute_none;
  mem.max_micro_batch_selective = by_recompute_selective;
  mem.max_micro_batch_full = by_recompute_full;
  mem.host_optimizer_states_GiB = rm.host_states / GiB;
  mem.peak_micro_batches_in_flight = ranks[mem_rank].peak_in_flight;

  // Time, energy and cost to train.
  if (c.tokens_to_train > 0) {
    TrainRunResult::Run run;
    const double time_s = c.tokens_to_train / tokens_s;
    const double util = step > 0 ? std::min(1.0, compute_s / step) : 0.0;
    const double power_W = gpu_power_W(gpu, util);
    const double gpu_hours = time_s / 3600.0 * world;
    run.tokens_to_train = c.tokens_to_train;
    run.time_s = time_s;
    run.time_hours = time_s / 3600.0;
    run.time_days = time_s / 86400.0;
    run.gpu_hours = gpu_hours;
    run.average_power_W_per_gpu = power_W;
    run.energy_MWh = world * power_W * time_s * c.pue / 3.6e9;
    run.pue = c.pue;
    run.gpu_hour_usd = s_.cost_model.gpu_hour_usd;
    if (run.gpu_hour_usd > 0) run.cost_usd = gpu_hours * run.gpu_hour_usd;
    x.training_run = run;
  }

  // Operator breakdown of one micro-batch (whole model, one GPU's shard).
  const OpBreakdown& ob = mb_->breakdown();
  x.forward.add(ob.forward);
  x.backward.add(ob.backward);
  x.recompute.add(ob.recompute);
  x.communication_parts = mb_->comm_parts();

  // The schedule's per-pass arrays are no longer needed.
  sim_.reset();
}


}  // namespace sightline
