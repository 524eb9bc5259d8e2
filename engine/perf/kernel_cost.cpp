#include "perf/kernel_cost.hpp"

#include <algorithm>
#include <cmath>

#include "core/det_math.hpp"
#include "perf/calibrated_cost.hpp"
#include "perf/calibration.hpp"

namespace sightline {

OpCost collective_op_cost(const Operator& op, const CostContext& ctx) {
  OpCost c;
  c.bound = "communication";
  CommGroup g;
  g.size = op.group_size;
  if (op.collective == CollectiveKind::SendRecv) {
    g.gpus_per_node = op.group_size;
    g.intra = ctx.pp_link;
  } else {
    g.gpus_per_node = ctx.gpus_per_node > 0 ? ctx.gpus_per_node : op.group_size;
    g.intra = ctx.tp_link;
    g.inter = ctx.inter_link;
    g.all_reduce = ctx.all_reduce;
  }
  if (!g.intra && !g.inter) return c;
  const CollectiveCost cc = collective_cost(op.collective, op.message_bytes, g);
  c.time_s = cc.time_s;
  // The comm model's measured band, never narrower than the kernels' floor.
  const double floor = det_log(1.0 + kMinIntervalHalfWidth);
  c.time_low_s = c.time_s * det_exp(std::min(-floor, cc.log_q10));
  c.time_high_s = c.time_s * det_exp(std::max(floor, cc.log_q90));
  return c;
}

OpCost RooflineCostModel::cost(const Operator& op, const CostContext& ctx) const {
  OpCost c;
  if (op.family == OpFamily::Collective) return collective_op_cost(op, ctx);
  const GpuSpec& g = *ctx.gpu;
  // Non-tensor-core work (norms, softmax, sampling) runs on the FP32 units.
  const bool tensor_core = op.family == OpFamily::Gemm || op.family == OpFamily::AttentionPrefill ||
                           op.family == OpFamily::AttentionDecode || op.family == OpFamily::MoeRouter;
  double peak = tensor_core ? g.peak_tflops_for(op.compute_dtype) : g.peak_tflops.fp32;
  if (peak <= 0) peak = g.peak_tflops.fp16 > 0 ? g.peak_tflops.fp16 : g.peak_tflops.bf16;
  c.compute_s = op.flops / (peak * 1e12) + op.dequant_ops / (std::max(g.peak_tflops.fp32, 1.0) * 1e12);
  c.memory_s = op.bytes / (g.hbm_bandwidth_GBps * 1e9);
  c.time_s = c.time_low_s = c.time_high_s = std::max(c.compute_s, c.memory_s);
  c.bound = c.compute_s >= c.memory_s ? "compute" : "memory";
  // Nothing runs faster than the bound; real kernels reach the reference GPU's
  // measured fraction of it.
  const KernelCalibration& ref = reference_calibration();
  const KernelClass k = kernel_class_of(op);
  double eta = ref.gemm.eta_compute;
  if (c.bound == "memory") eta = ref.memory.count(k) ? ref.memory.at(k).eta_memory : ref.gemm.eta_memory;
  c.time_high_s = c.time_s / std::clamp(eta, 0.05, 1.0);
  return c;
}

AccuracySummary RooflineCostModel::accuracy() const {
  AccuracySummary a;
  a.tier = "roofline";
  a.expected_error_pct = 100.0 * (1.0 - std::min(1.0, reference_calibration().gemm.eta_compute));
  a.note = "spec-sheet peaks with no efficiency: a lower bound on time; the interval reaches up to the reference "
           "GPU's measured efficiencies";
  return a;
}

json AccuracySummary::to_json() const {
  return {{"tier", tier}, {"expected_error_pct", expected_error_pct}, {"interval", interval}, {"note", note}};
}

}  // namespace sightline
