#include "perf/calibrated_cost.hpp"

#include <algorithm>
#include <cmath>

#include "comm/collectives.hpp"

namespace sightline {

double wave_quantization(int64_t m, int64_t n, int tile_m, int tile_n, int sm_count) {
  const double tiles = std::ceil(static_cast<double>(m) / tile_m) * std::ceil(static_cast<double>(n) / tile_n);
  if (tiles <= 0 || sm_count <= 0) return 1.0;
  const double waves = std::ceil(tiles / sm_count);
  return waves * sm_count / tiles;
}

IntervalScale interval_scale(const FitResiduals& r) {
  const double floor = std::log1p(kMinIntervalHalfWidth);
  return {std::exp(std::min(-floor, r.log_q10)), std::exp(std::max(floor, r.log_q90))};
}

std::string provenance_kind(const std::string& provenance) {
  if (provenance.rfind("measured", 0) == 0 || provenance.find("curve measured") != std::string::npos) return "measured";
  // Levels fitted to, or curves derived from, this GPU's own measurements.
  if (provenance.rfind("anchored", 0) == 0 || provenance.rfind("derived", 0) == 0 ||
      provenance.find("fitted to") != std::string::npos)
    return "anchored";
  return "transferred";
}

AccuracySummary CalibratedCostModel::accuracy() const {
  // The classes that dominate LLM step time decide the headline tier.
  struct Part {
    const char* name;
    const std::string* provenance;
    const FitResiduals* residuals;
  };
  const std::vector<Part> parts = {
      {"gemm", &cal_.gemm.provenance, &cal_.gemm.residuals},
      {"attention_prefill", &cal_.attention.provenance, &cal_.attention.residuals},
      {"attention_decode", &cal_.memory.at(KernelClass::AttentionDecode).provenance,
       &cal_.memory.at(KernelClass::AttentionDecode).residuals}};
  AccuracySummary a;
  a.tier = tier_;
  std::vector<double> apes;
  std::string classes;
  bool any_measured = false, any_other = false;
  for (const Part& p : parts) {
    apes.push_back(p.residuals->median_ape);
    const std::string kind = provenance_kind(*p.provenance);
    (kind == "measured" ? any_measured : any_other) = true;
    classes += (classes.empty() ? "" : ", ") + std::string(p.name) + " " + kind;
  }
  if (tier_ == "target-measured" && any_measured && any_other) a.tier = "mixed";
  std::sort(apes.begin(), apes.end());
  a.expected_error_pct = 100.0 * std::max(apes[1], kMinIntervalHalfWidth);
  a.note = "kernels priced from " + cal_.source + "; expected error: median over the GEMM, attention-prefill and "
           "decode-attention classes of their fit residuals; 80% intervals from each class's residuals (at least "
           "±2%). Classes: " + classes + ".";
  return a;
}

CalibratedCostModel::CalibratedCostModel(KernelCalibration calibration, std::string tier)
    : cal_(std::move(calibration)), tier_(std::move(tier)) {}

namespace {

void apply_interval(OpCost& c, const FitResiduals& r) {
  const IntervalScale s = interval_scale(r);
  c.time_low_s = c.time_s * s.low;
  c.time_high_s = c.time_s * s.high;
}

double peak_flops(const GpuSpec& g, Dtype d) {
  double peak = g.peak_tflops_for(d);
  if (peak <= 0) peak = g.peak_tflops.fp16 > 0 ? g.peak_tflops.fp16 : g.peak_tflops.bf16;
  return peak * 1e12;
}

}  // namespace

OpCost CalibratedCostModel::gemm_cost(const Operator& op, const GpuSpec& g) const {
  const GemmParams& p = cal_.gemm;
  double scale = 1.0;
  auto it = p.dtype_scale.find(dtype_name(op.compute_dtype));
  if (it != p.dtype_scale.end()) scale = it->second;
  OpCost c;
  c.compute_s = op.flops / (peak_flops(g, op.compute_dtype) * p.eta_compute * scale) *
                wave_quantization(op.m, op.n, p.tile_m, p.tile_n, g.sm_count) +
                op.dequant_ops / (std::max(g.peak_tflops.fp32, 1.0) * 1e12);
  c.memory_s = op.bytes / (g.hbm_bandwidth_GBps * 1e9 * p.eta_memory);
  const double blended =
      std::pow(std::pow(c.compute_s, p.blend_p) + std::pow(c.memory_s, p.blend_p), 1.0 / p.blend_p);
  c.time_s = p.launch_us * 1e-6 + blended;
  c.bound = c.compute_s >= c.memory_s ? "compute" : "memory";
  apply_interval(c, p.residuals);
  return c;
}

OpCost CalibratedCostModel::attention_prefill_cost(const Operator& op, const GpuSpec& g) const {
  const AttentionParams& p = cal_.attention;
  const double context = op.seqs > 0 ? static_cast<double>(op.kv_tokens) / static_cast<double>(op.seqs) : 1.0;
  const EtaCurve& curve = op.attention_impl == AttentionImpl::Standard ? p.standard
                          : op.backward                                ? p.flash_bwd
                                                                       : p.flash_fwd;
  OpCost c;
  c.compute_s = op.flops / (peak_flops(g, op.compute_dtype) * curve.at(context));
  c.memory_s = op.bytes / (g.hbm_bandwidth_GBps * 1e9 * cal_.gemm.eta_memory);
  c.time_s = p.launch_us * 1e-6 + std::max(c.compute_s, c.memory_s);
  c.bound = c.compute_s >= c.memory_s ? "compute" : "memory";
  apply_interval(c, p.residuals);
  return c;
}

OpCost CalibratedCostModel::memory_kernel_cost(const Operator& op, const GpuSpec& g,
                                               const MemoryKernelParams& p) const {
  OpCost c;
  c.memory_s = op.bytes / (g.hbm_bandwidth_GBps * 1e9 * p.eta_memory);
  c.compute_s = op.flops / (std::max(g.peak_tflops.fp32, 1.0) * 1e12);
  const double launch = p.launch_us * 1e-6;
  c.time_s = launch + std::max(c.memory_s, c.compute_s);
  c.bound = launch > std::max(c.memory_s, c.compute_s) ? "launch" : (c.memory_s >= c.compute_s ? "memory" : "compute");
  apply_interval(c, p.residuals);
  return c;
}

OpCost CalibratedCostModel::cost(const Operator& op, const CostContext& ctx) const {
  const GpuSpec& g = *ctx.gpu;
  const KernelClass k = kernel_class_of(op);
  switch (k) {
    case KernelClass::Gemm: return gemm_cost(op, g);
    case KernelClass::AttentionPrefill: return attention_prefill_cost(op, g);
    case KernelClass::Collective: return collective_op_cost(op, ctx);
    default: return memory_kernel_cost(op, g, cal_.memory.at(k));
  }
}

KernelCalibration transfer_calibration(const KernelCalibration& from, const std::string& target_gpu_id,
                                       double target_copy_bandwidth_eta) {
  KernelCalibration t = from;
  t.id = target_gpu_id;
  t.source = "cross-generation transfer from " + from.id + " (" + from.source + ")";
  const std::string transferred = "transferred from " + from.id;
  t.gemm.provenance = transferred;
  t.attention.provenance = transferred;
  double memory_scale = 1.0;
  if (target_copy_bandwidth_eta > 0 && from.copy_bandwidth_eta > 0)
    memory_scale = target_copy_bandwidth_eta / from.copy_bandwidth_eta;
  t.gemm.eta_memory *= memory_scale;
  for (auto& [k, p] : t.memory) {
    p.provenance = transferred;
    p.eta_memory *= memory_scale;
  }
  t.copy_bandwidth_eta = target_copy_bandwidth_eta > 0 ? target_copy_bandwidth_eta : from.copy_bandwidth_eta;
  return t;
}

}  // namespace sightline
