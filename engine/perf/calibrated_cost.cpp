#include "perf/calibrated_cost.hpp"

#include "perf/single_pass_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/det_math.hpp"
#include "comm/collectives.hpp"
#include "perf/decode_kernel.hpp"
#include "presets/preset_store.hpp"

namespace sightline {

double wave_quantization(int64_t m, int64_t n, int tile_m, int tile_n, int sm_count) {
  const double tiles = std::ceil(static_cast<double>(m) / tile_m) * std::ceil(static_cast<double>(n) / tile_n);
  if (tiles <= 0 || sm_count <= 0) return 1.0;
  const double waves = std::ceil(tiles / sm_count);
  return waves * sm_count / tiles;
}

IntervalScale interval_scale(const FitResiduals& r) {
  const double floor = det_log(1.0 + kMinIntervalHalfWidth);
  return {det_exp(std::min(-floor, r.log_q10)), det_exp(std::max(floor, r.log_q90))};
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
  a.note = (tier_ == "cross-generation" ? "cross-generation tier (no kernel measurements of this GPU): " : "") +
           std::string("kernels priced from ") + cal_.source + "; expected error: median over the GEMM, attention-prefill and "
           "decode-attention classes of their fit residuals, widened where a class is not measured on this GPU to the "
           "measured cross-GPU transfer error of its class; 80% intervals from the same (at least ±2%). Classes: " +
           classes + ".";
  return a;
}

namespace {

// A class whose shape (or everything) came from another GPU is as uncertain
// as a transfer between GPUs has measured to be, at least.
void widen_by_transfer_error(const std::string& provenance, KernelClass k, FitResiduals& r) {
  if (provenance_kind(provenance) == "measured") return;
  const auto& errors = kernel_transfer_errors();
  auto it = errors.find(k);
  if (it == errors.end()) return;
  r.log_q10 = std::min(r.log_q10, it->second.log_q10);
  r.log_q90 = std::max(r.log_q90, it->second.log_q90);
  r.median_ape = std::max(r.median_ape, it->second.median_ape);
  r.p90_ape = std::max(r.p90_ape, it->second.p90_ape);
}

}  // namespace

CalibratedCostModel::CalibratedCostModel(KernelCalibration calibration, std::string tier)
    : cal_(std::move(calibration)), tier_(std::move(tier)) {
  widen_by_transfer_error(cal_.gemm.provenance, KernelClass::Gemm, cal_.gemm.residuals);
  widen_by_transfer_error(cal_.attention.provenance, KernelClass::AttentionPrefill, cal_.attention.residuals);
  for (auto& [k, p] : cal_.memory) widen_by_transfer_error(p.provenance, k, p.residuals);
  gemm_scale_ = interval_scale(cal_.gemm.residuals);
  attention_scale_ = interval_scale(cal_.attention.residuals);
  for (auto& [k, p] : cal_.memory) {
    const size_t i = static_cast<size_t>(k);
    if (i >= kClasses) continue;
    memory_scale_[i] = interval_scale(p.residuals);
    memory_params_[i] = p;
    has_memory_params_[i] = true;
  }
}

namespace {

void apply_interval(OpCost& c, const IntervalScale& s) {
  c.time_low_s = c.time_s * s.low;
  c.time_high_s = c.time_s * s.high;
}

// A single-pass kernel that launches one program per token row (RoPE,
// RMSNorm) retires its programs at a bounded rate, whatever bytes each moves:
// each holds an SM slot for its index math, its dependent loads (RoPE: the
// position, then its cos/sin row, then q and k) and its stores. A row with
// little work is bound by that rate, not by HBM: the fused RoPE of
// Llama-3-70B at TP 8 (9 heads of 128 per token on each GPU, 4,864 bytes per
// token) ran 16,384 tokens in 26.29 µs on an H200 (presets/calibrations/
// measured/fused_h200_2026-11-28.csv), streaming at 3.0 TB/s where rows of
// 16 KiB and more stream at 4.1: (26.29 − the fused RoPE's fixed time on the
// H200, 1.98 µs, presets/calibrations/h200.json) / 16,384 programs = 1.484 ns
// per program across 132 SMs at 1,980 MHz, i.e. 388 SM-cycles. Cycles, so it
// moves with the clock and the SM count; tests/unit/test_fused_kernels.cpp
// prices that row with it to within 1%.
constexpr double kSmCyclesPerRowProgram = 388;

}  // namespace

double row_programs_s(int64_t row_programs, const GpuSpec& g) {
  if (row_programs <= 0 || g.sm_count <= 0 || g.boost_clock_MHz <= 0) return 0;
  return static_cast<double>(row_programs) * kSmCyclesPerRowProgram / (g.sm_count * g.boost_clock_MHz * 1e6);
}

namespace {

// `c` (a single-pass kernel's price) raised to its program rate where that is slower.
void bound_by_program_rate(OpCost& c, const Operator& op, const GpuSpec& g, double launch_s) {
  const double programs_s = row_programs_s(op.rows, g);
  if (programs_s <= 0 || c.time_s <= 0 || programs_s <= std::max(c.memory_s, c.compute_s)) return;
  const double scale = (launch_s + programs_s) / c.time_s;
  c.time_s *= scale;
  c.time_low_s *= scale;
  c.time_high_s *= scale;
  c.bound = "launch";  // the programs' fixed cost, not their bytes
}

double peak_flops(const GpuSpec& g, Dtype d) {
  double peak = g.peak_tflops_for(d);
  if (peak <= 0) peak = g.peak_tflops.fp16 > 0 ? g.peak_tflops.fp16 : g.peak_tflops.bf16;
  return peak * 1e12;
}

}  // namespace

OpCost CalibratedCostModel::gemm_cost(const Operator& op, const GpuSpec& g) const {
  const GemmParams& p = cal_.gemm;
  const std::string dtype = dtype_name(op.compute_dtype);
  double scale = 1.0;
  auto it = p.dtype_scale.find(dtype);
  if (it != p.dtype_scale.end()) scale = it->second;
  // Weight-only dequantization runs on the CUDA cores while the tensor cores
  // multiply (Marlin-style kernels overlap the two), so the slower one counts.
  const double dequant_s = op.dequant_ops / (std::max(g.peak_tflops.fp32, 1.0) * 1e12);
  double eta_memory = p.eta_memory;
  if (op.groups == 1) {
    auto m = p.dtype_memory_scale.find(dtype);
    if (m != p.dtype_memory_scale.end()) eta_memory *= m->second;
  } else if (op.weight_dtype != op.compute_dtype) {
    // A grouped GEMM whose weights a weight-only kernel dequantizes in its
    // main loop (MXFP4 experts on Hopper: triton_kernels' matmul_ogs) streams
    // them at that kernel's own level (gemm.grouped_weight_only_memory_scale).
    auto m = p.grouped_weight_only_memory_scale.find(dtype_name(op.weight_dtype));
    if (m != p.grouped_weight_only_memory_scale.end()) eta_memory *= m->second;
  }
  const double stream_Bps = g.hbm_bandwidth_GBps * 1e9 * eta_memory;
  const GemmChoice best = best_gemm_tile(op, p, peak_flops(g, op.compute_dtype) * p.eta_compute * scale, stream_Bps,
                                         g.sm_count, dequant_s);
  // Bytes written after the main loop (a block-scaled FP8 GEMM's output
  // tiles) stream on their own, after the blend of math and loads.
  const double serial_s = op.serial_bytes / stream_Bps;
  OpCost c;
  c.compute_s = std::max(best.compute_s, dequant_s);
  c.memory_s = best.memory_s + serial_s;
  c.time_s = p.launch_us * 1e-6 + best.time_s + serial_s;
  // A best-over-shapes figure is a ceiling: no shape runs faster than it.
  auto ceiling = p.ceiling_tflops.find(dtype);
  if (ceiling != p.ceiling_tflops.end()) c.time_s = std::max(c.time_s, op.flops / (ceiling->second * 1e12));
  c.bound = c.compute_s >= c.memory_s ? "compute" : "memory";
  apply_interval(c, gemm_scale_);
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
  apply_interval(c, attention_scale_);
  return c;
}

OpCost CalibratedCostModel::memory_kernel_cost(const Operator& op, const GpuSpec& g, KernelClass k,
                                               const MemoryKernelParams& p, double launch_us) const {
  OpCost c;
  // The part of the traffic L2 serves streams at the class's fitted L2 speed-up.
  const double l2_bytes = l2_resident_class(k) ? l2_hit_bytes(op.bytes, g.l2_cache_MiB) : 0.0;
  c.memory_s = (op.bytes - l2_bytes + l2_bytes / p.l2_speedup) / (g.hbm_bandwidth_GBps * 1e9 * p.eta_memory);
  c.compute_s = op.flops / (std::max(g.peak_tflops.fp32, 1.0) * 1e12);
  if (k == KernelClass::AttentionDecode && op.flops > 0) {
    // Decode attention's two products (q·K, p·V) run on the tensor cores, as
    // in prefill: FlashAttention/FlashInfer decode and the MLA decode kernels
    // (FlashMLA: 580-660 TFLOP/s bf16 on H800 when compute-bound, i.e. 59-67%
    // of the dense bf16 peak, github.com/deepseek-ai/FlashMLA README). Pricing them
    // on the FP32 units made MLA decode (128 query heads sharing one latent
    // KV head, ~240 FLOP per byte of bf16 latent at TP1) compute-bound at
    // 1/15 of the tensor rate. The rate is the 16-bit peak at this GPU's
    // measured FlashAttention forward efficiency for the same keys per
    // sequence (causal prefill at that context: a conservative stand-in), at
    // the operator's compute dtype (16-bit when activations are fp8).
    // GQA decode stays memory-bound either way (a few FLOPs per byte).
    const double context = op.seqs > 0 ? static_cast<double>(op.kv_tokens) / static_cast<double>(op.seqs) : 1.0;
    const double eta = cal_.attention.flash_fwd.at(context);
    if (eta > 0) c.compute_s = op.flops / (peak_flops(g, op.compute_dtype) * eta);
  }
  const double launch = launch_us * 1e-6;
  c.time_s = launch + std::max(c.memory_s, c.compute_s);
  c.bound = launch > std::max(c.memory_s, c.compute_s) ? "launch" : (c.memory_s >= c.compute_s ? "memory" : "compute");
  apply_interval(c, memory_scale_[static_cast<size_t>(k)]);
  return c;
}

OpCost CalibratedCostModel::cost(const Operator& op, const CostContext& ctx) const {
  const GpuSpec& g = *ctx.gpu;
  const KernelClass k = kernel_class_of(op);
  OpCost c;
  switch (k) {
    case KernelClass::Gemm: {
      // Models that price few GEMMs (calibration fits build one per trial)
      // skip the memo: allocating it would cost more than it saves.
      if (gemm_prices_ < kGemmMemoAfterPrices) {
        ++gemm_prices_;
        return with_launch_floor(gemm_cost(op, g));
      }
      // Everything gemm_cost and the launch floor below read of the operator.
      const GemmKey key{op.m,           op.n,  op.k, op.groups, op.group_row_trials, op.group_row_p, op.flops, op.bytes,
                        op.serial_bytes, op.dequant_ops, op.compute_dtype, op.weight_dtype,
                        peak_flops(g, op.compute_dtype), g.peak_tflops.fp32, g.hbm_bandwidth_GBps, g.sm_count};
      if (gemm_memo_.empty()) gemm_memo_.resize(kGemmMemoSlots);
      GemmMemoSlot& slot = gemm_memo_[GemmKeyHash{}(key) & (kGemmMemoSlots - 1)];
      if (slot.used && slot.key == key) return slot.cost;
      slot.used = true;
      slot.key = key;
      slot.cost = with_launch_floor(gemm_cost(op, g));
      return slot.cost;
    }
    case KernelClass::AttentionPrefill: c = attention_prefill_cost(op, g); break;
    case KernelClass::Collective: return collective_op_cost(op, ctx);
    default:
      // A fused kernel (model/operators.hpp KernelFusion) streams its bytes
      // once: it runs at this GPU's measured streaming efficiency (the
      // elementwise/copy class), not at its eager chain's. Checked against
      // single-pass kernels timed on an H200 (presets/calibrations/measured/
      // fused_h200_2026-11-28.csv, tests/unit/test_fused_kernels.cpp).
      // Its fixed time is the kernel's own where this GPU's fused kernels
      // were timed (perf/single_pass_fit.hpp), else the streaming class's launch.
      if (op.single_pass) {
        // The elementwise class's figures read in place, its launch replaced:
        // a copy of its params (two strings and the residuals) allocated per
        // fused operator per step (6% of a wasm serving run's samples).
        const MemoryKernelParams& p = memory_params(KernelClass::Elementwise);
        const double fixed_us = memory_params(k).single_pass_fixed_us;
        const double launch_us = fixed_us > 0 ? fixed_us : p.launch_us;
        c = memory_kernel_cost(op, g, KernelClass::Elementwise, p, launch_us);
        bound_by_program_rate(c, op, g, launch_us * 1e-6);
      } else {
        const MemoryKernelParams& p = memory_params(k);
        c = memory_kernel_cost(op, g, k, p, p.launch_us);
        if (ctx.decode_kernel && op.role == OpRole::HeadDecode && op.seqs > 0) {
          // The stack's engine runs a slower decode kernel than this GPU's
          // fastest (perf/decode_kernel.hpp): its published time ratio at
          // this batch and mean context, on the whole kernel as published.
          const double ratio = ctx.decode_kernel->time_ratio_at(
              static_cast<double>(op.seqs), static_cast<double>(op.kv_tokens) / static_cast<double>(op.seqs));
          c.time_s *= ratio;
          c.time_low_s *= ratio;
          c.time_high_s *= ratio;
        }
      }
  }
  return with_launch_floor(c);
}

OpCost CalibratedCostModel::with_launch_floor(OpCost c) const {
  // No kernel runs shorter than an empty kernel's launch on the device.
  const double floor_s = cal_.kernel_floor_us * 1e-6;
  if (c.time_s < floor_s) {
    c.time_s = floor_s;
    c.bound = "launch";
  }
  c.time_low_s = std::max(c.time_low_s, floor_s);
  c.time_high_s = std::max(c.time_high_s, c.time_s);
  return c;
}

size_t CalibratedCostModel::GemmKeyHash::operator()(const GemmKey& key) const {
  // Word-wise multiply-xorshift over the fields (the doubles by bit pattern,
  // as == compares them except for -0.0/NaN, which no GEMM shape has).
  uint64_t h = 0x9E3779B97F4A7C15ull;
  auto mix = [&h](uint64_t w) {
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  };
  auto bits = [](double d) {
    uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    return u;
  };
  mix(static_cast<uint64_t>(key.m));
  mix(static_cast<uint64_t>(key.n));
  mix(static_cast<uint64_t>(key.k));
  mix(bits(key.groups));
  mix(static_cast<uint64_t>(key.group_row_trials));
  mix(bits(key.group_row_p));
  mix(bits(key.flops));
  mix(bits(key.bytes));
  mix(bits(key.serial_bytes));
  mix(bits(key.dequant_ops));
  mix(static_cast<uint64_t>(key.dtype) ^ (static_cast<uint64_t>(key.weight_dtype) << 4) ^
      (static_cast<uint64_t>(key.sm_count) << 8));
  mix(bits(key.peak_flops));
  mix(bits(key.fp32_tflops));
  mix(bits(key.hbm_GBps));
  return static_cast<size_t>(h);
}

namespace {

// The transfer's efficiencies and provenance; ceilings and fixed times stay the source's.
KernelCalibration transfer_efficiencies(const KernelCalibration& from, const std::string& target_id,
                                        double target_copy_bandwidth_eta) {
  KernelCalibration t = from;
  t.id = target_id;
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

}  // namespace

KernelCalibration transfer_calibration(const KernelCalibration& from, const GpuSpec& from_gpu, const GpuSpec& target,
                                       double target_copy_bandwidth_eta) {
  KernelCalibration t = transfer_efficiencies(from, target.id, target_copy_bandwidth_eta);
  // Ceilings move with the spec sheet: the same fraction of the target's peak.
  for (auto& [dtype, tflops] : t.gemm.ceiling_tflops) {
    const double pa = from_gpu.peak_tflops_for(parse_dtype(dtype)), pb = target.peak_tflops_for(parse_dtype(dtype));
    tflops = pa > 0 && pb > 0 ? tflops * pb / pa : tflops;
  }
  t.gemm.ceiling_source = "transferred from " + from.id + " as the same fraction of peak (" + from.gemm.ceiling_source + ")";
  // A weight-only kernel's streaming level was timed on one architecture's
  // SMs (bf16 x MXFP4 on Hopper): another architecture runs another kernel
  // (or FP4 tensor cores) and keeps the 16-bit level, for want of a figure.
  if (from_gpu.architecture != target.architecture) t.gemm.grouped_weight_only_memory_scale.clear();
  // A kernel's fixed time is cycles of the front end and the prologue: it
  // runs at the clock.
  if (from_gpu.boost_clock_MHz > 0 && target.boost_clock_MHz > 0) {
    const double clock = from_gpu.boost_clock_MHz / target.boost_clock_MHz;
    t.gemm.launch_us *= clock;
    t.attention.launch_us *= clock;
    for (auto& [k, p] : t.memory) {
      p.launch_us *= clock;
      p.single_pass_fixed_us *= clock;  // a launch and dependent loads: fixed time too
    }
    t.kernel_floor_us *= clock;
  }
  return t;
}

KernelCalibration transfer_calibration(const KernelCalibration& from, const std::string& target_gpu_id,
                                       double target_copy_bandwidth_eta) {
  if (find_preset("gpus", from.id) && find_preset("gpus", target_gpu_id))
    return transfer_calibration(from, read_gpu(json(from.id), "/gpu"), read_gpu(json(target_gpu_id), "/gpu"),
                                target_copy_bandwidth_eta);
  return transfer_efficiencies(from, target_gpu_id, target_copy_bandwidth_eta);
}

}  // namespace sightline
