#pragma once
// TrainRun's figures after the schedule, shared by the files that finish the
// run (estimator_finish.cpp) and take its step apart (estimator_explain.cpp).
#include <string>

#include "perf/cost_setup.hpp"
#include "train/estimator.hpp"
#include "train/framework_costs.hpp"

namespace sightline {

// The optimizer update of n parameters held on one GPU, and its state bytes.
struct TrainRun::OptimizerPricer {
  const OptimizerSpec& o;
  const HardwareSpec& hw;
  const CostSetup& setup;
  struct Cost {
    double gpu_s = 0;     // update on the GPU
    double offload_s = 0; // PCIe transfers + host update
  };
  double w_b, grad_b, master, moments, sb, flops_pp, state_bytes_pp;

  OptimizerPricer(const Scenario& s, const CostSetup& cost_setup)
      : o(s.training->config.optimizer), hw(s.hardware), setup(cost_setup) {
    w_b = dtype_bytes(s.precision.weights);
    grad_b = dtype_bytes(o.grad_dtype);
    master = o.master_weights ? 4.0 : w_b;
    moments = o.kind == OptimizerKind::AdamW ? 2.0 : o.kind == OptimizerKind::SgdMomentum ? 1.0 : 0.0;
    sb = dtype_bytes(o.states_dtype);
    flops_pp = o.kind == OptimizerKind::AdamW ? 12.0 : o.kind == OptimizerKind::SgdMomentum ? 4.0 : 10.0;
    state_bytes_pp = (o.master_weights ? 4.0 : 0.0) + moments * sb +
                     (o.kind == OptimizerKind::Adafactor ? 8.0 / std::max<int64_t>(1, s.model.hidden_size) : 0.0);
  }
  double update_bytes(double grad_bytes) const {
    // read+write master (or weights) and moments, read the gradient twice
    // (norm for clipping, then the update), write the low-precision copy.
    double b = 2.0 * master + 2.0 * moments * sb + 2.0 * grad_bytes + (o.master_weights ? w_b : 0.0);
    if (o.kind == OptimizerKind::Adafactor) b += grad_bytes;  // row/column statistics pass
    return b;
  }
  double price_memory_op(const std::string& name, double bytes, double flops) const {
    if (bytes <= 0) return 0.0;
    Operator op;
    op.name = name;
    op.family = OpFamily::Elementwise;
    op.count = 1;
    op.bytes = bytes;
    op.flops = flops;
    op.compute_dtype = Dtype::FP32;
    return setup.model->cost(op, setup.ctx).time_s;
  }
  Cost cost(double n) const {
    Cost oc;
    if (n <= 0) return oc;
    if (o.cpu_offload) {
      const double pcie = hw.gpu.pcie_bandwidth_GBps * 1e9;
      const double host_bw = o.host_memory_bandwidth_GBps * 1e9 / std::max(1, hw.gpus_per_node);
      oc.offload_s = n * grad_b / pcie + n * update_bytes(4.0) / host_bw + n * w_b / pcie;
    } else {
      oc.gpu_s = price_memory_op("optimizer_step", n * update_bytes(grad_b), n * flops_pp);
    }
    return oc;
  }
};

// One pipeline rank: its chunks summed over a step, its step end, its memory.
struct TrainRun::RankSummary {
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
  double largest_params = 0, largest_grads = 0;
};

// The step's figures, computed before anything is written.
struct TrainRun::StepFigures {
  double step = 0;
  int b = 0, mem_rank = 0;  // bottleneck rank (time breakdown), most loaded rank (memory)
  double dp_exposed = 0, bubble = 0;
  // throughput and FLOPs
  double tokens_step = 0, tokens_s = 0, total_params = 0, trainable_total = 0, model_flops_per_token = 0;
  double recompute_flops_step = 0, hardware_flops_step = 0, mfu = 0, hfu = 0;
  // memory headroom
  double cap = 0, act_linear = 0;
  int64_t max_mbs = 0, by_recompute_none = 0, by_recompute_selective = 0, by_recompute_full = 0;
  bool fits = false;
  // communication
  double grads_rank = 0, one_shot = 0, one_shot_intra = 0, dp_sync = 0, dp_exp = 0, compute_s = 0;
  OptimizerPricer::Cost layer_opt;  // one layer's optimizer step
};

}  // namespace sightline
