#include "train/estimator.hpp"

#include <algorithm>
#include <cmath>

#include "train/activations.hpp"
#include "train/dp_overlap.hpp"
#include "train/tp_overlap.hpp"

namespace sightline {

namespace {

constexpr int64_t kPassesPerUnit = 512;

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
  lay_out_chunks();
  const int J = par.pp * par.virtual_stages;
  const RecomputeSpec& rc = c.recompute;
  const LayerActivations la[2] = {layer_activations(s_, c, false, rc), layer_activations(s_, c, true, rc)};
  const double head_act = head_activation_bytes(s_, c);
  const int zero = par.zero_stage;
  const bool fsdp = zero == 3 && (groups_.dp_dense.size > 1 || groups_.dp_expert.size > 1);

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
    const std::vector<const ItemCost*> items = chunk_items(j, la, head_act);
    add_item_totals(j, items);
    Chunk& ch = chunks_[j];
    if (fsdp) {
      compose_with_fsdp(j, items);
    } else {
      for (const ItemCost* it : items) {
        ch.fwd_s += it->fwd_s;
        ch.bwd_s += it->bwd_s;
      }
      if (zero <= 2) in.buckets[j] = gradient_buckets(items, j < par.pp);  // local chunk 0 is bucketed
    }
    ch.fwd_cat[TimeCat::Overhead] += overhead_share * 0.5;
    ch.bwd_cat[TimeCat::Overhead] += overhead_share * 0.5;
    ch.fwd_s += overhead_share * 0.5;
    ch.bwd_s += overhead_share * 0.5;
    in.fwd_s.push_back(ch.fwd_s);
    in.bwd_s.push_back(ch.bwd_s);
    in.act_bytes.push_back(ch.act_bytes);
  }
  add_pipeline_transfers(in);
  sim_ = std::make_unique<PipelineSimulation>(std::move(in));
}

// Process groups, the communication pricer, the priced micro-batch, and which
// layers each model chunk holds.
void TrainRun::lay_out_chunks() {
  const TrainParallelism& par = s_.training->config.parallelism;
  groups_ = make_groups(par, s_.hardware);
  comm_ = std::make_unique<CommPricer>(setup_, s_.hardware);
  mb_ = std::make_unique<MicroBatchModel>(s_, setup_, *comm_, groups_);
  const int J = par.pp * par.virtual_stages;
  chunk_layers_ = chunk_layer_counts(par, s_.model.num_layers);
  chunk_first_layer_.assign(J, 0);
  for (int j = 1; j < J; ++j) chunk_first_layer_[j] = chunk_first_layer_[j - 1] + chunk_layers_[j - 1];
}

// The items of model chunk j in order (the embedding on the first chunk, its
// layers, the LM head on the last), with the activation bytes they store.
std::vector<const ItemCost*> TrainRun::chunk_items(int j, const LayerActivations (&la)[2], double head_act_bytes) {
  const ModelArch& m = s_.model;
  const RecomputeSpec& rc = s_.training->config.recompute;
  const int J = static_cast<int>(chunks_.size());
  Chunk& ch = chunks_[j];
  std::vector<const ItemCost*> items;
  if (j == 0) {
    items.push_back(&mb_->embedding());
    ch.has_embedding = true;
  }
  for (int i = chunk_first_layer_[j]; i < chunk_first_layer_[j] + chunk_layers_[j]; ++i) {
    const LayerKind kind = m.is_moe() && i >= m.moe.first_dense_layers ? LayerKind::Moe : LayerKind::Dense;
    const LayerActivations& acts = la[kind == LayerKind::Moe ? 1 : 0];
    const bool ck = rc.mode == RecomputeMode::Full && i % rc.every_n_layers == 0;  // checkpointed
    items.push_back(&mb_->layer(kind, ck));
    ch.act_bytes += ck ? acts.checkpointed : acts.stored;
    ch.transient_bytes = std::max(ch.transient_bytes, acts.transient);
    ++ch.layers;
  }
  if (j == J - 1) {
    items.push_back(&mb_->head());
    ch.act_bytes += head_act_bytes;
    ch.has_head = true;
  }
  return items;
}

// Per-category times, FLOPs, parameters and communication totals of chunk j's items.
void TrainRun::add_item_totals(int j, const std::vector<const ItemCost*>& items) {
  const double w_b = dtype_bytes(s_.precision.weights);
  const double grad_b = dtype_bytes(s_.training->config.optimizer.grad_dtype);
  Chunk& ch = chunks_[j];
  for (const ItemCost* p : items) {
    const ItemCost& it = *p;
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
    ch.largest_item_params =
        std::max(ch.largest_item_params, (it.params_dense + it.params_expert) * w_b + it.frozen_param_bytes);
    ch.largest_item_grads = std::max(ch.largest_item_grads, (it.params_dense + it.params_expert) * grad_b);
    ch.tp_s += it.tp_fwd_s + it.tp_bwd_s;
    ch.tp_ag_s += it.tp_all_gather_s;
    ch.ep_s += it.ep_s;
    ch.cp_s += it.cp_s;
  }
}

namespace {

struct PassDurations {
  double fwd_s = 0, bwd_s = 0;
};

// The communication stream: collectives run one after another, each busy
// over [begin, end).
struct CommStream {
  std::vector<std::pair<double, double>> busy;
  double free_at = 0;
  double issue(double at, double duration) {
    const double begin = std::max(free_at, at);
    free_at = begin + duration;
    if (duration > 0) busy.emplace_back(begin, free_at);
    return free_at;
  }
};

// When compute of `work_s` seconds alone, started at `start`, ends: while a
// collective is in flight its kernels hold `sm_share` of the SMs, so compute
// progresses at (1 − sm_share) of its speed (as TP overlap prices its GEMMs).
// Every collective that overlaps the compute was issued before it started.
double compute_end(const CommStream& comm, double start, double work_s, double sm_share) {
  double t = start, left = work_s;
  for (const auto& [begin, end] : comm.busy) {
    if (left <= 0) break;
    if (end <= t) continue;
    if (begin > t) {  // comm idle until `begin`: full speed
      const double step = std::min(left, begin - t);
      t += step;
      left -= step;
      if (left <= 0) break;
    }
    const double rate = 1.0 - sm_share;
    const double step = std::min(left, (end - t) * rate);
    t += step / rate;
    left -= step;
  }
  return t + left;
}

// FSDP's own kernels on the compute stream, per item (PyTorch FSDP2,
// torch/distributed/_composable/fsdp/_fsdp_collectives.py, as torchtitan runs
// it): after each all-gather, foreach_all_gather_copy_out splits the gathered
// buffer into the unsharded parameters (reads and writes every parameter
// byte); before each reduce-scatter, foreach_reduce's copy-in concatenates the
// unsharded gradients into one buffer in the reduce dtype (reads them in the
// parameter dtype, writes them in the gradient dtype). Both are plain
// memory-bound copies, priced as elementwise kernels.
struct FsdpCopies {
  std::vector<double> out, in;  // seconds, per item
};

// FSDP with prefetch: the all-gather of item i+1 is issued when item i starts
// computing; in the backward (reverse order) item i-1 is re-gathered when item
// i starts and item i's gradients reduce-scattered when it ends.
PassDurations fsdp_prefetch_passes(const std::vector<const ItemCost*>& items, const std::vector<double>& ag,
                                   const std::vector<double>& rs, const FsdpCopies& copies, double sm_share) {
  const size_t n = items.size();
  PassDurations out;
  CommStream fwd;
  std::vector<double> ag_end(n, 0.0);
  ag_end[0] = fwd.issue(0, ag[0]);
  double t = 0;
  for (size_t i = 0; i < n; ++i) {
    const double start = std::max(t, ag_end[i]);
    if (i + 1 < n) ag_end[i + 1] = fwd.issue(start, ag[i + 1]);
    t = compute_end(fwd, start, copies.out[i] + items[i]->fwd_s, sm_share);
  }
  out.fwd_s = t;
  CommStream bwd;
  ag_end[n - 1] = bwd.issue(0, ag[n - 1]);
  t = 0;
  for (size_t r = n; r-- > 0;) {
    const double start = std::max(t, ag_end[r]);
    if (r > 0) ag_end[r - 1] = bwd.issue(start, ag[r - 1]);
    t = compute_end(bwd, start, copies.out[r] + items[r]->bwd_s + copies.in[r], sm_share);
    bwd.issue(t, rs[r]);
  }
  out.bwd_s = std::max(t, bwd.free_at);
  return out;
}

}  // namespace

// FSDP (ZeRO-3 over more than one GPU): each item's parameters are gathered
// before it runs and its gradients reduce-scattered after its backward.
void TrainRun::compose_with_fsdp(int j, const std::vector<const ItemCost*>& items) {
  const double w_b = dtype_bytes(s_.precision.weights);
  const double grad_b = dtype_bytes(s_.training->config.optimizer.grad_dtype);
  Chunk& ch = chunks_[j];
  const size_t n = items.size();
  std::vector<double> ag(n, 0.0), rs(n, 0.0);
  FsdpCopies copies{std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)};
  const Dtype w_dt = s_.precision.weights;
  for (size_t i = 0; i < n; ++i) {
    const ItemCost& it = *items[i];
    const double params = it.params_dense + it.params_expert;
    const double gathered = params * w_b + it.frozen_param_bytes;
    if (gathered > 0)
      copies.out[i] = setup_.price_kernels(StepOperators{{make_memory_operator("fsdp_copy_out", OpFamily::Elementwise, 1,
                                                                               2.0 * gathered, 0, w_dt)}})
                          .gpu_time_s;
    if (params > 0)
      copies.in[i] = setup_.price_kernels(StepOperators{{make_memory_operator("fsdp_reduce_copy_in", OpFamily::Elementwise,
                                                                              1, params * (w_b + grad_b), 0, w_dt)}})
                         .gpu_time_s;
    ag[i] = comm_->collective(CollectiveKind::AllGather, it.params_dense * w_b + it.frozen_param_bytes,
                              groups_.dp_dense) +
            comm_->collective(CollectiveKind::AllGather, it.params_expert * w_b, groups_.dp_expert);
    rs[i] = comm_->collective(CollectiveKind::ReduceScatter, it.params_dense * grad_b, groups_.dp_dense) +
            comm_->collective(CollectiveKind::ReduceScatter, it.params_expert * grad_b, groups_.dp_expert);
  }
  double cf = 0, cb = 0;
  for (const ItemCost* it : items) {
    cf += it->fwd_s;
    cb += it->bwd_s;
  }
  PassDurations d;
  if (s_.training->config.overlap.fsdp_prefetch) {
    d = fsdp_prefetch_passes(items, ag, rs, copies, nccl_overlap_sm_share(s_.hardware.gpu.sm_count));
  } else {
    for (size_t i = 0; i < n; ++i) {
      d.fwd_s += ag[i] + copies.out[i] + items[i]->fwd_s;
      d.bwd_s += ag[i] + copies.out[i] + items[i]->bwd_s + copies.in[i] + rs[i];
    }
  }
  // The copies are compute-stream kernels (elementwise); what the pass takes
  // beyond them and the items' own work is FSDP's exposed communication,
  // including the compute it slows while it runs.
  double copies_f = 0, copies_b = 0;
  for (size_t i = 0; i < n; ++i) {
    copies_f += copies.out[i];
    copies_b += copies.out[i] + copies.in[i];
  }
  ch.fwd_cat[TimeCat::Elementwise] += copies_f;
  ch.bwd_cat[TimeCat::Elementwise] += copies_b;
  ch.fwd_cat[TimeCat::FsdpComm] += d.fwd_s - cf - copies_f;
  ch.bwd_cat[TimeCat::FsdpComm] += d.bwd_s - cb - copies_b;
  for (size_t i = 0; i < n; ++i) ch.fsdp_s += 2.0 * ag[i] + rs[i];
  ch.fwd_s = d.fwd_s;
  ch.bwd_s = d.bwd_s;
}

// Data-parallel gradient buckets of one chunk (ZeRO 0-2), in the order its
// backward produces them, each with its offset from the backward's start
// (train/dp_overlap.hpp: Megatron's buckets; chunks after a rank's first hold
// one bucket). Dense and expert gradients fill buckets of their own groups.
std::vector<GradBucket> TrainRun::gradient_buckets(const std::vector<const ItemCost*>& items, bool bucketed) const {
  const TrainConfig& c = s_.training->config;
  const double grad_b = dtype_bytes(c.optimizer.grad_dtype);
  const double bucket = c.overlap.bucket_MiB * 1024.0 * 1024.0;
  const CollectiveKind sync_kind =
      c.parallelism.zero_stage == 0 ? CollectiveKind::AllReduce : CollectiveKind::ReduceScatter;
  std::vector<GradBucket> out;
  for (const bool expert : {false, true}) {
    const GroupShape& group = expert ? groups_.dp_expert : groups_.dp_dense;
    if (group.size <= 1) continue;
    std::vector<GradProducer> producers;
    for (size_t r = items.size(); r-- > 0;)
      producers.push_back({items[r]->bwd_s, (expert ? items[r]->params_expert : items[r]->params_dense) * grad_b});
    for (const ReadyBucket& b : gradient_bucket_schedule(producers, bucket, !bucketed))
      out.push_back(GradBucket{b.ready_offset_s, comm_->collective(sync_kind, b.bytes, group), b.bytes});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const GradBucket& a, const GradBucket& b) { return a.ready_offset_s < b.ready_offset_s; });
  return out;
}

// Pipeline transfers: one micro-batch's hidden states (split over tp, as Megatron's scatter-gather does).
void TrainRun::add_pipeline_transfers(ScheduleInput& in) const {
  const TrainParallelism& par = s_.training->config.parallelism;
  const int J = par.pp * par.virtual_stages;
  const double a = dtype_bytes(s_.precision.activations);
  const double p2p_bytes = mb_->tokens() * static_cast<double>(s_.model.hidden_size) * a / par.tp;
  for (int j = 0; j + 1 < J; ++j) {
    const int d = j % par.pp;
    const bool inter = d + 1 < par.pp ? groups_.pp_boundary_inter[d] : groups_.pp_wrap_inter;
    const double t = comm_->p2p(p2p_bytes, inter);
    in.p2p_fwd_s.push_back(t);
    in.p2p_bwd_s.push_back(t);
  }
}

}  // namespace sightline
