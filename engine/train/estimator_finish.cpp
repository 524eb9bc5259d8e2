// TrainRun's last work unit: once the pipeline schedule has run, each rank's
// step (optimizer, parameter gathers, framework costs) and memory, the step's
// figures (throughput, MFU/HFU, headroom, communication), then the typed
// result written section by section.
#include <algorithm>
#include <cmath>

#include "mem/inference_memory.hpp"
#include "model/param_count.hpp"
#include "perf/power.hpp"
#include "train/dp_overlap.hpp"
#include "train/estimator.hpp"
#include "train/estimator_figures.hpp"

namespace sightline {

void TrainRun::finish() {
  const int pp = s_.training->config.parallelism.pp;
  const OptimizerPricer opt(s_, setup_);
  std::vector<RankSummary> rs(pp);
  double step = 0;
  for (int d = 0; d < pp; ++d) {
    rs[d] = summarize_rank(d, opt);
    step = std::max(step, rs[d].end_s);
  }
  const StepFigures f = step_figures(rs, step, opt);

  // ---- Result (typed; train/training_result.cpp writes it) ----
  TrainRunResult& x = result_;
  x.header = make_result_header(s_, "training", setup_.model->tier());
  x.trainable_params_M = f.trainable_total / 1e6;
  x.trainable_pct = 100.0 * f.trainable_total / f.total_params;
  write_deployment();
  const TrainConfig& c = s_.training->config;
  x.batch = {c.batch.seq_len, c.batch.micro_batch_size, c.batch.gradient_accumulation, c.batch.global_batch_size,
             f.tokens_step};
  x.flop_convention =
      "MFU counts model FLOPs per token as 6·N + 12·L·H·d_head·S (PaLM; N = parameters without the input "
      "embedding, active experts only; attention counted non-causal), LoRA: 4·N_frozen + 6·N_adapters + attention; "
      "HFU counts the same FLOPs plus those recomputation runs again (in the same convention, so HFU >= MFU). Both are relative to "
      "the dense " + dtype_name(s_.precision.activations) + " peak of the GPU, FP8 runs included.";
  write_metrics_and_breakdown(f, rs[f.b]);
  write_pipeline(f, rs);
  write_communication(f, rs[f.b]);
  write_per_layer(f, rs[f.b]);
  write_memory(f, rs[f.mem_rank]);
  write_training_run(f);

  // Operator breakdown of one micro-batch (whole model, one GPU's shard).
  const OpBreakdown& ob = mb_->breakdown();
  x.forward.add(ob.forward);
  x.backward.add(ob.backward);
  x.recompute.add(ob.recompute);
  x.communication_parts = mb_->comm_parts();

  explain_step(f, rs[f.b]);
  // The schedule's per-pass arrays are no longer needed.
  sim_.reset();
}

TrainRun::RankSummary TrainRun::summarize_rank(int d, const OptimizerPricer& opt) const {
  const TrainConfig& c = s_.training->config;
  const int pp = c.parallelism.pp, v = c.parallelism.virtual_stages;
  const int zero = c.parallelism.zero_stage;
  const double mb = static_cast<double>(c.batch.gradient_accumulation);
  RankSummary r;
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
  }
  const double S_dense = zero >= 1 ? groups_.dp_dense.size : 1;
  const double S_expert = zero >= 1 ? groups_.dp_expert.size : 1;
  const double n_local = r.n_dense / S_dense + r.n_expert / S_expert;
  price_rank_step(r, d, n_local, opt);
  add_rank_memory(r, d, n_local, opt);
  return r;
}

// The rank's optimizer, FP8 weight cast, ZeRO-1/2 parameter all-gather and
// framework costs, and so its step end.
void TrainRun::price_rank_step(RankSummary& r, int d, double n_local, const OptimizerPricer& opt) const {
  const TrainConfig& c = s_.training->config;
  const TrainParallelism& par = c.parallelism;
  const HardwareSpec& hw = s_.hardware;
  const int pp = par.pp, v = par.virtual_stages, zero = par.zero_stage;
  const double w_b = dtype_bytes(s_.precision.weights);
  const OptimizerPricer::Cost oc = opt.cost(n_local);
  r.opt_s = oc.gpu_s;
  r.offload_s = oc.offload_s;
  r.cast_s = opt.price_memory_op("fp8_weight_cast", r.fp8 * 4.0, r.fp8 * 2.0);
  const RankTimeline& t = sim_->ranks()[d];
  if ((zero == 1 || zero == 2) && (groups_.dp_dense.size > 1 || groups_.dp_expert.size > 1)) {
    // The distributed optimizer gathers the updated parameters chunk by chunk
    // in the buckets of the gradients (train/dp_overlap.hpp); without
    // overlap_param_gather they all go out after the optimizer step.
    const double grad_b = dtype_bytes(c.optimizer.grad_dtype);
    const double bucket = c.overlap.bucket_MiB * 1024.0 * 1024.0;
    std::vector<ChunkGather> gathers;
    for (int k = 0; k < v; ++k) {
      const Chunk& ch = chunks_[k * pp + d];
      const double grads = (ch.params_dense + ch.params_expert) * grad_b;
      const int nb = k == 0 ? std::max(1, static_cast<int>(std::ceil(grads / bucket))) : 1;
      const double g = nb * (comm_->collective(CollectiveKind::AllGather, ch.params_dense * w_b / nb, groups_.dp_dense) +
                             comm_->collective(CollectiveKind::AllGather, ch.params_expert * w_b / nb, groups_.dp_expert));
      r.ag_s += g;
      gathers.push_back({g, nb, t.first_forward_start_s[k], ch.fwd_s});
    }
    r.ag_exposed_s = c.overlap.param_gather ? exposed_parameter_gather_s(gathers) : r.ag_s;
  }
  FrameworkCostInputs fw;
  fw.world_gpus = par.world();
  fw.gpus_per_node = hw.gpus_per_node;
  fw.amax_group = world_group(groups_.dp_dense.size * groups_.tp.size,
                              std::min(hw.gpus_per_node, groups_.dp_dense.local * groups_.tp.local));
  fw.micro_batches = static_cast<double>(c.batch.gradient_accumulation);
  if (c.fp8 != Fp8Gemms::None && c.fp8_recipe == Fp8Recipe::Delayed) {
    // Transformer Engine linear modules: QKV, attention output, MLP in and
    // out per layer (the MLP pair only for the "mlp" recipe), and the head for
    // "all". Current scaling keeps no amax history: nothing to reduce per pass.
    int layers = 0;
    for (int k = 0; k < v; ++k) layers += chunks_[k * pp + d].layers;
    fw.fp8_modules = layers * (c.fp8 == Fp8Gemms::Mlp ? 2.0 : 4.0) + (c.fp8 == Fp8Gemms::All && r.head ? 1.0 : 0.0);
  }
  fw.tokens_per_micro_batch = mb_->tokens();
  fw.pcie_GBps = hw.gpu.pcie_bandwidth_GBps;
  r.framework = framework_step_costs(fw, *comm_);
  r.end_s = std::max(t.end_s, t.comm_end_s) + r.opt_s + r.cast_s + r.offload_s + r.ag_exposed_s + r.framework.total_s();
}

// The rank's memory by category (bytes).
void TrainRun::add_rank_memory(RankSummary& r, int d, double n_local, const OptimizerPricer& opt) const {
  const TrainConfig& c = s_.training->config;
  const int zero = c.parallelism.zero_stage;
  const double w_b = dtype_bytes(s_.precision.weights);
  const double grad_b = dtype_bytes(c.optimizer.grad_dtype);
  const double a = dtype_bytes(s_.precision.activations);
  r.params = zero == 3 ? (r.n_dense * w_b + r.frozen) / groups_.dp_dense.size + r.n_expert * w_b / groups_.dp_expert.size
                       : r.n_dense * w_b + r.n_expert * w_b + r.frozen;
  const double S2d = zero >= 2 ? groups_.dp_dense.size : 1, S2e = zero >= 2 ? groups_.dp_expert.size : 1;
  r.grads = (r.n_dense / S2d + r.n_expert / S2e) * grad_b;
  const double states = n_local * opt.state_bytes_pp;
  if (c.optimizer.cpu_offload) r.host_states = states;
  else r.states = states;
  r.acts = sim_->ranks()[d].peak_act_bytes;
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
  r.total = r.params + r.grads + r.states + r.acts + r.transient + r.temp + c.runtime_overhead_GiB * kBytesPerGiB;
}

TrainRun::StepFigures TrainRun::step_figures(const std::vector<RankSummary>& rs, double step,
                                             const OptimizerPricer& opt) const {
  const TrainParallelism& par = s_.training->config.parallelism;
  const auto& ranks = sim_->ranks();
  StepFigures f;
  f.step = step;
  for (int d = 1; d < par.pp; ++d) {
    if (ranks[d].busy_s > ranks[f.b].busy_s) f.b = d;
    if (rs[d].total > rs[f.mem_rank].total) f.mem_rank = d;
  }
  const RankTimeline& tb = ranks[f.b];
  f.dp_exposed = std::max(0.0, tb.comm_end_s - tb.end_s);
  f.bubble = (tb.end_s - tb.busy_s) + (step - rs[f.b].end_s);
  add_throughput(f, rs);
  add_memory_headroom(f, rs[f.mem_rank]);
  add_comm_summary(f, rs[f.b]);
  // Per-layer optimizer step.
  const int zero = par.zero_stage;
  const double S_dense = zero >= 1 ? groups_.dp_dense.size : 1;
  const double S_expert = zero >= 1 ? groups_.dp_expert.size : 1;
  const ItemCost& it = mb_->layer(mb_->main_layer_kind(), false);
  f.layer_opt = opt.cost(it.params_dense / S_dense + it.params_expert / S_expert);
  return f;
}

// Tokens per second, model and hardware FLOPs, MFU and HFU.
void TrainRun::add_throughput(StepFigures& f, const std::vector<RankSummary>& rs) const {
  const TrainConfig& c = s_.training->config;
  const TrainParallelism& par = c.parallelism;
  const ModelArch& m = s_.model;
  const int world = par.world();
  const double seq = static_cast<double>(c.batch.seq_len);
  f.tokens_step = static_cast<double>(c.batch.global_batch_size) * seq;
  f.tokens_s = f.tokens_step / f.step;
  const ParamCounts pcnt = count_params(m);
  f.total_params = static_cast<double>(pcnt.total);
  // Active parameters leave out the embedding lookup and count the LM head
  // (the tied embedding matrix when tied): the matmul parameters of a token.
  const double n_model = static_cast<double>(pcnt.active);
  const double attn_term = 12.0 * m.num_layers * m.num_heads * static_cast<double>(m.qk_head_dim()) * seq;
  if (c.lora.enabled) f.trainable_total = mb_->trainable_params_per_layer_total() * m.num_layers;
  else f.trainable_total = static_cast<double>(pcnt.total);
  f.model_flops_per_token =
      c.lora.enabled ? 4.0 * n_model + 6.0 * f.trainable_total + attn_term : 6.0 * n_model + attn_term;
  const double peak = s_.hardware.gpu.peak_tflops_for(s_.precision.activations) * 1e12;
  double exec_flops = 0, exec_recompute = 0;
  for (int d = 0; d < par.pp; ++d) {
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
  const double model_flops_step = f.model_flops_per_token * f.tokens_step;
  const double recompute_share = exec_flops > exec_recompute && exec_flops > 0
                                     ? exec_recompute / (exec_flops - exec_recompute) : 0.0;
  f.recompute_flops_step = model_flops_step * recompute_share;
  f.hardware_flops_step = model_flops_step + f.recompute_flops_step;
  f.mfu = f.model_flops_per_token * f.tokens_s / (world * peak);
  f.hfu = f.hardware_flops_step / f.step / (world * peak);
}

// Whether the most loaded rank fits, and the largest micro-batch that would,
// under the configured recomputation and under each other policy.
void TrainRun::add_memory_headroom(StepFigures& f, const RankSummary& rm) const {
  const TrainConfig& c = s_.training->config;
  const ModelArch& m = s_.model;
  const int mem_rank = f.mem_rank;
  const double cap = s_.hardware.gpu.memory_GiB * kBytesPerGiB;
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
  RecomputeSpec none, sel, full;
  sel.mode = RecomputeMode::Selective;
  sel.core_attn = sel.layernorm = sel.mlp_act = true;
  full.mode = RecomputeMode::Full;
  f.by_recompute_none = max_mbs_for(act_for(none) / mbs);
  f.by_recompute_selective = max_mbs_for(act_for(sel) / mbs);
  f.by_recompute_full = max_mbs_for(act_for(full) / mbs);
  f.max_mbs = max_mbs_for(act_linear / mbs);
  f.cap = cap;
  f.act_linear = act_linear;
  f.fits = rm.total <= cap;
}

// Communication summary (bottleneck rank, per step).
void TrainRun::add_comm_summary(StepFigures& f, const RankSummary& rb) const {
  const TrainConfig& c = s_.training->config;
  const int zero = c.parallelism.zero_stage;
  const double grad_b = dtype_bytes(c.optimizer.grad_dtype);
  const RankTimeline& tb = sim_->ranks()[f.b];
  f.grads_rank = (rb.n_dense + rb.n_expert) * grad_b;
  f.one_shot = comm_->collective(CollectiveKind::AllReduce, rb.n_dense * grad_b, groups_.dp_dense) +
               comm_->collective(CollectiveKind::AllReduce, rb.n_expert * grad_b, groups_.dp_expert);
  f.one_shot_intra =
      comm_->collective_intra(CollectiveKind::AllReduce, rb.n_dense * grad_b, groups_.dp_dense.size) +
      comm_->collective_intra(CollectiveKind::AllReduce, rb.n_expert * grad_b, groups_.dp_expert.size);
  f.dp_sync = zero == 3 ? rb.fsdp_s : tb.comm_total_s + rb.ag_s;
  f.dp_exp = zero == 3 ? rb.cats[TimeCat::FsdpComm] : f.dp_exposed + rb.ag_exposed_s;
  double compute_s = 0;
  for (const TimeCat k : kAllTimeCats)
    if (is_compute_time_cat(k)) compute_s += rb.cats[k];
  compute_s += rb.cats[TimeCat::Recompute];
  f.compute_s = compute_s;
}

void TrainRun::write_deployment() {
  const TrainConfig& c = s_.training->config;
  const TrainParallelism& par = c.parallelism;
  const HardwareSpec& hw = s_.hardware;
  TrainRunResult::Deployment& dep = result_.deployment;
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
  dep.gpu = hw.gpu.id;
  dep.gpus = par.world();
  dep.gpus_per_node = hw.gpus_per_node;
  dep.nodes = hw.nodes;
  dep.dp = par.dp;
  dep.tp = par.tp;
  dep.pp = par.pp;
  dep.cp = par.cp;
  dep.ep = par.ep;
  dep.sequence_parallel = par.sequence_parallel;
  dep.virtual_stages = par.virtual_stages;
  dep.zero_stage = par.zero_stage;
  dep.schedule = schedule_name(c.schedule);
  dep.recompute = recompute_name(c.recompute.mode);
  dep.fp8 = fp8_name(c.fp8);
  dep.optimizer = optimizer_name(c.optimizer.kind);
  dep.cpu_offload = c.optimizer.cpu_offload;
  if (c.lora.enabled) dep.lora = TrainRunResult::Lora{c.lora.rank, c.lora.targets, dtype_name(c.lora.base_dtype)};
}

void TrainRun::write_metrics_and_breakdown(const StepFigures& f, const RankSummary& rb) {
  const TrainConfig& c = s_.training->config;
  const int world = c.parallelism.world();
  const double step = f.step;
  TrainRunResult::Metrics& met = result_.metrics;
  met.step_time_ms = step * 1e3;
  met.tokens_per_s = f.tokens_s;
  met.tokens_per_s_per_gpu = f.tokens_s / world;
  met.samples_per_s = static_cast<double>(c.batch.global_batch_size) / step;
  met.mfu_pct = 100.0 * f.mfu;
  met.hfu_pct = 100.0 * f.hfu;
  met.model_tflops_per_gpu = f.model_flops_per_token * f.tokens_s / world / 1e12;
  met.hardware_tflops_per_gpu = f.hardware_flops_step / step / world / 1e12;
  met.hardware_flops_per_step = f.hardware_flops_step;
  met.recompute_flops_per_step = f.recompute_flops_step;
  met.model_flops_per_token = f.model_flops_per_token;
  TrainRunResult::StepBreakdown& sb_ms = result_.step_breakdown_ms;
  for (const TimeCat k : kAllTimeCats) sb_ms.cats_ms[k] = rb.cats[k] * 1e3;
  sb_ms.exposed_dp_ms = (f.dp_exposed + rb.ag_exposed_s) * 1e3;
  sb_ms.pipeline_bubble_ms = f.bubble * 1e3;
  sb_ms.optimizer_ms = (rb.opt_s + rb.cast_s) * 1e3;
  sb_ms.cpu_offload_ms = rb.offload_s * 1e3;
  sb_ms.framework_ms = rb.framework.total_s() * 1e3;
  sb_ms.framework_parts_ms = {rb.framework.grad_norm_allreduce_s * 1e3, rb.framework.fp8_amax_allreduce_s * 1e3,
                              rb.framework.input_copy_s * 1e3};
  sb_ms.rank = f.b;
}

void TrainRun::write_pipeline(const StepFigures& f, const std::vector<RankSummary>& rs) {
  const TrainConfig& c = s_.training->config;
  const int pp = c.parallelism.pp, v = c.parallelism.virtual_stages;
  const auto& ranks = sim_->ranks();
  double bubble_mean = 0;
  const double span = sim_->makespan_s();
  TrainRunResult::Pipeline& pl = result_.pipeline;
  for (int d = 0; d < pp; ++d) {
    const RankTimeline& t = ranks[d];
    bubble_mean += span > 0 ? (span - t.busy_s) / span : 0.0;
    double fwd = 0, bw = 0;
    for (int k = 0; k < v; ++k) {
      fwd += chunks_[k * pp + d].fwd_s;
      bw += chunks_[k * pp + d].bwd_s;
    }
    pl.per_rank.push_back({d, fwd * 1e3, bw * 1e3, t.busy_s * 1e3, (span - t.busy_s) * 1e3, t.peak_in_flight,
                           t.comm_total_s * 1e3, rs[d].end_s * 1e3, t.passes});
  }
  bubble_mean /= pp;
  const auto& pin = sim_->input();
  pl.schedule = schedule_name(c.schedule);
  pl.stages = pp;
  pl.virtual_stages = v;
  pl.micro_batches = c.batch.gradient_accumulation;
  pl.layers_per_chunk = chunk_layers_;
  pl.bubble_pct = span > 0 ? 100.0 * (span - ranks[f.b].busy_s) / span : 0.0;
  pl.mean_idle_pct = 100.0 * bubble_mean;
  pl.bubble_formula_pct = 100.0 * bubble_formula(pp, v, c.batch.gradient_accumulation);
  pl.makespan_ms = span * 1e3;
  pl.p2p_transfer_us = pin.p2p_fwd_s.empty() ? 0.0 : pin.p2p_fwd_s.front() * 1e6;
}

void TrainRun::write_communication(const StepFigures& f, const RankSummary& rb) {
  const TrainConfig& c = s_.training->config;
  const TrainParallelism& par = c.parallelism;
  const int pp = par.pp, J = par.pp * par.virtual_stages, zero = par.zero_stage;
  const double mb = static_cast<double>(c.batch.gradient_accumulation);
  const auto& pin = sim_->input();
  TrainRunResult::Communication& cm = result_.communication;
  cm.tp_group = par.tp;
  cm.tp_total_ms = rb.tp_s * 1e3;
  cm.tp_all_gather_ms = rb.tp_ag_s * 1e3;
  cm.tp_all_gather_call_us = [&] {
    const ItemCost& it = mb_->layer(mb_->main_layer_kind(), false);
    return it.tp_all_gather_calls > 0 ? it.tp_all_gather_s / it.tp_all_gather_calls * 1e6 : 0.0;
  }();
  cm.tp_exposed_ms = rb.cats[TimeCat::TpComm] * 1e3;
  cm.tp_exposed_pct = 100.0 * rb.cats[TimeCat::TpComm] / f.step;
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
  cm.dp_gradient_bytes_per_gpu = f.grads_rank;
  cm.dp_mode = zero == 3 ? "fsdp all-gather + reduce-scatter"
               : zero == 0 ? "all-reduce"
                           : "reduce-scatter + parameter all-gather";
  cm.dp_allreduce_one_shot_ms = f.one_shot * 1e3;
  cm.dp_allreduce_one_shot_intra_node_ms = f.one_shot_intra * 1e3;
  cm.dp_inter_over_intra = f.one_shot_intra > 0 ? f.one_shot / f.one_shot_intra : 1.0;
  cm.dp_sync_ms = f.dp_sync * 1e3;
  cm.dp_exposed_ms = f.dp_exp * 1e3;
  cm.dp_overlap_pct = f.dp_sync > 0 ? 100.0 * (1.0 - f.dp_exp / f.dp_sync) : 0.0;
  cm.dp_comm_to_compute_ratio = f.compute_s > 0 ? f.dp_sync / f.compute_s : 0.0;
}

void TrainRun::write_per_layer(const StepFigures& f, const RankSummary& rb) {
  const LayerTimes& lt = mb_->layer_times();
  const double attn_compute = rb.cats[TimeCat::Attention];
  TrainRunResult::PerLayer& pl_ms = result_.per_layer;
  pl_ms.attention_core_fwd_ms = lt.attn_core_fwd_s * 1e3;
  pl_ms.attention_core_bwd_ms = lt.attn_core_bwd_s * 1e3;
  pl_ms.attention_core_fwd_bwd_ms = (lt.attn_core_fwd_s + lt.attn_core_bwd_s) * 1e3;
  pl_ms.attention_block_fwd_bwd_ms = lt.attn_block_s * 1e3;
  pl_ms.mlp_block_fwd_bwd_ms = lt.mlp_block_s * 1e3;
  pl_ms.mlp_flops = lt.mlp_block_flops;
  pl_ms.mlp_achieved_tflops = lt.mlp_block_s > 0 ? lt.mlp_block_flops / lt.mlp_block_s / 1e12 : 0.0;
  pl_ms.layer_fwd_bwd_ms = lt.layer_fwd_bwd_s * 1e3;
  pl_ms.layer_iteration_ms = (lt.layer_fwd_bwd_s + f.layer_opt.gpu_s + f.layer_opt.offload_s) * 1e3;
  pl_ms.attention_share_of_compute_pct = f.compute_s > 0 ? 100.0 * attn_compute / f.compute_s : 0.0;
}

void TrainRun::write_memory(const StepFigures& f, const RankSummary& rm) {
  const TrainConfig& c = s_.training->config;
  const double GiB = kBytesPerGiB;
  const double cap = f.cap;
  TrainRunResult::Memory& mem = result_.memory_per_gpu;
  mem.rank = f.mem_rank;
  mem.capacity_GiB = s_.hardware.gpu.memory_GiB;
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
  mem.fits = f.fits;
  mem.overflow_GiB = std::max(0.0, rm.total - cap) / GiB;
  mem.max_micro_batch = f.max_mbs;
  mem.max_micro_batch_none = f.by_recompute_none;
  mem.max_micro_batch_selective = f.by_recompute_selective;
  mem.max_micro_batch_full = f.by_recompute_full;
  mem.host_optimizer_states_GiB = rm.host_states / GiB;
  mem.peak_micro_batches_in_flight = sim_->ranks()[f.mem_rank].peak_in_flight;
}

// Time, energy and cost to train.
void TrainRun::write_training_run(const StepFigures& f) {
  const TrainConfig& c = s_.training->config;
  if (!(c.tokens_to_train > 0)) return;
  const int world = c.parallelism.world();
  const double step = f.step;
  TrainRunResult::Run run;
  const double time_s = c.tokens_to_train / f.tokens_s;
  const double util = step > 0 ? std::min(1.0, f.compute_s / step) : 0.0;
  const double power_W = gpu_power_W(s_.hardware.gpu, util);
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
  result_.training_run = run;
}

}  // namespace sightline
