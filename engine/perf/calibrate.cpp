#include "perf/calibrate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "perf/calibrated_cost.hpp"
#include "core/nelder_mead.hpp"

namespace sightline {

namespace {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(std::floor(pos));
  const size_t j = std::min(i + 1, v.size() - 1);
  return v[i] + (pos - static_cast<double>(i)) * (v[j] - v[i]);
}

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

KernelClass sample_class(const KernelSample& s) { return kernel_class_of(s.ops.front()); }

bool is_attention_fwd_only(const KernelSample& s) {
  return s.ops.size() == 1 && !s.ops[0].backward && s.ops[0].attention_impl == AttentionImpl::Flash;
}
bool is_attention_bwd_only(const KernelSample& s) {
  return s.ops.size() == 1 && s.ops[0].backward && s.ops[0].attention_impl == AttentionImpl::Flash;
}
bool is_standard_attention(const KernelSample& s) { return s.ops[0].attention_impl == AttentionImpl::Standard; }

double predict_with(const KernelSample& sample, const CalibratedCostModel& model, const CostContext& ctx) {
  double t = 0;
  for (const Operator& op : sample.ops) t += model.cost(op, ctx).time_s;
  return t;
}

double mean_abs_log_error(const std::vector<const KernelSample*>& samples, const KernelCalibration& cal,
                          const GpuSpec& gpu) {
  const CalibratedCostModel model(cal, "fit");
  CostContext ctx;
  ctx.gpu = &gpu;
  double sum = 0;
  for (const KernelSample* s : samples) sum += std::fabs(std::log(predict_with(*s, model, ctx) / s->time_s));
  return samples.empty() ? 0 : sum / static_cast<double>(samples.size());
}

FitResiduals residuals_of(const std::vector<const KernelSample*>& samples, const KernelCalibration& cal,
                          const GpuSpec& gpu) {
  const CalibratedCostModel model(cal, "fit");
  CostContext ctx;
  ctx.gpu = &gpu;
  std::vector<double> pred, meas;
  for (const KernelSample* s : samples) {
    pred.push_back(predict_with(*s, model, ctx));
    meas.push_back(s->time_s);
  }
  return summarize_errors(pred, meas);
}

// Every sample one plain GEMM the calibration prices memory-bound.
bool all_weight_streaming(const std::vector<const KernelSample*>& samples, const KernelCalibration& cal,
                          const GpuSpec& gpu) {
  const CalibratedCostModel model(cal, "fit");
  CostContext ctx;
  ctx.gpu = &gpu;
  for (const KernelSample* s : samples)
    if (s->ops.size() != 1 || s->ops[0].groups != 1 || model.cost(s->ops[0], ctx).bound != "memory") return false;
  return !samples.empty();
}

// Level-only fit: the scale factor on `param` that minimizes mean |log error|.
double fit_scale(const std::function<void(KernelCalibration&, double)>& apply, KernelCalibration cal,
                 const std::vector<const KernelSample*>& samples, const GpuSpec& gpu) {
  auto objective = [&](const std::vector<double>& x) {
    KernelCalibration c = cal;
    apply(c, std::exp(x[0]));
    return mean_abs_log_error(samples, c, gpu);
  };
  return std::exp(nelder_mead(objective, {0.0}, {0.2}, 400, 1e-12).x[0]);
}

// At most this many samples per dtype enter the shape fit (evenly strided,
// so a 90k-row Vidur sweep fits in seconds and keeps every shape family).
constexpr size_t kMaxGemmFitSamples = 1500;

std::vector<const KernelSample*> strided(const std::vector<const KernelSample*>& v, size_t max_n) {
  if (v.size() <= max_n) return v;
  std::vector<const KernelSample*> out;
  const double step = static_cast<double>(v.size()) / static_cast<double>(max_n);
  for (size_t i = 0; i < max_n; ++i) out.push_back(v[static_cast<size_t>(i * step)]);
  return out;
}

// Best achieved TFLOP/s per dtype over the GEMM samples: the GPU's ceiling.
// Only samples that could be compute-bound count (FLOPs per byte at or past
// the dtype's ridge point, peak over HBM bandwidth): a weight-streaming GEMV's
// TFLOP/s says how fast it streams, not how fast the tensor cores multiply.
void set_gemm_ceilings(KernelCalibration& cal, const std::vector<const KernelSample*>& all, const GpuSpec& gpu) {
  std::map<std::string, double> best;
  std::map<std::string, std::string> where;
  for (const KernelSample* s : all) {
    const Dtype dtype = s->ops[0].compute_dtype;
    const std::string d = dtype_name(dtype);
    double flops = 0, bytes = 0;
    for (const Operator& op : s->ops) {
      flops += op.flops * op.count;
      bytes += op.bytes * op.count;
    }
    const double ridge = gpu.peak_tflops_for(dtype) * 1e12 / (gpu.hbm_bandwidth_GBps * 1e9);
    if (bytes > 0 && ridge > 0 && flops / bytes < ridge) continue;
    const double tflops = flops / s->time_s / 1e12;
    if (tflops > best[d]) {
      best[d] = tflops;
      where[d] = s->source.empty() ? s->model : s->source;
    }
  }
  if (best.empty()) return;
  cal.gemm.ceiling_tflops = best;
  std::string text;
  for (const auto& [d, t] : best) text += (text.empty() ? "" : "; ") + d + ": best of this GPU's measurements (" + where[d] + ")";
  cal.gemm.ceiling_source = text;
}

// A grouped GEMM whose weights a weight-only kernel dequantizes in its main loop.
bool is_weight_only_grouped(const KernelSample& s) {
  const Operator& op = s.ops[0];
  return op.groups > 1 && op.weight_dtype != op.compute_dtype;
}

// Grouped GEMMs whose weights a weight-only kernel dequantizes in its main
// loop (bf16 x MXFP4 on Hopper): their timings all stream the weights, so
// each weight format gets an eta_memory multiplier of its own, after the
// 16-bit fit (gemm.grouped_weight_only_memory_scale). A GPU without such
// rows holds the multipliers of the GPU it shares its compute silicon with:
// the kernel's dequantizing main loop is the same on the same SMs.
void fit_weight_only_grouped(KernelCalibration& cal, const std::vector<const KernelSample*>& samples,
                             const GpuSpec& gpu, const CalibrationFitOptions& opt) {
  std::map<Dtype, std::vector<const KernelSample*>> by_format;
  for (const KernelSample* s : samples) by_format[s->ops[0].weight_dtype].push_back(s);
  for (auto& [format, rows] : by_format) {
    const std::string name = dtype_name(format);
    cal.gemm.grouped_weight_only_memory_scale[name] = 1.0;
    cal.gemm.grouped_weight_only_memory_scale[name] = fit_scale(
        [&](KernelCalibration& c, double f) { c.gemm.grouped_weight_only_memory_scale[name] = f; }, cal, rows, gpu);
  }
  if (opt.shared_compute)
    for (const auto& [name, scale] : opt.shared_compute->grouped_weight_only_memory_scale)
      cal.gemm.grouped_weight_only_memory_scale.emplace(name, scale);
}

// Returns whether this GPU's own 16-bit GEMMs fitted its launch and
// weight-streaming efficiency (the full fit), which other classes may borrow.
bool fit_gemm(KernelCalibration& cal, const std::vector<const KernelSample*>& all, const GpuSpec& gpu,
              const CalibrationFitOptions& opt) {
  std::vector<const KernelSample*> half, other, weight_only_grouped;
  for (const KernelSample* s : all) {
    const Dtype d = s->ops[0].compute_dtype;
    if (is_weight_only_grouped(*s)) weight_only_grouped.push_back(s);
    else (d == Dtype::BF16 || d == Dtype::FP16 ? half : other).push_back(s);
  }
  std::vector<const KernelSample*> plain = half;
  plain.insert(plain.end(), other.begin(), other.end());
  set_gemm_ceilings(cal, plain, gpu);
  const bool full_fit = half.size() >= static_cast<size_t>(opt.min_samples_for_full_fit);
  if (full_fit) {
    const std::vector<const KernelSample*> fit_set = strided(half, kMaxGemmFitSamples);
    // Parameters: log launch_us, eta_compute, eta_memory, log(blend_p - 1), then
    // the relative efficiency of every tile but the largest. The skinny
    // 16-row tile runs the same MMA instructions as the 64-row ones (it only
    // skips padded rows), so it shares the smallest fitted tile's efficiency:
    // the sweeps' few-token GEMMs are memory-bound and cannot identify it.
    const size_t extra = cal.gemm.tiles.size() >= 2 ? cal.gemm.tiles.size() - 2 : 0;
    const GemmParams* shared = opt.shared_compute;
    if (shared) {
      cal.gemm.eta_compute = shared->eta_compute;
      cal.gemm.tiles = shared->tiles;
    }
    auto apply = [extra, shared](KernelCalibration& c, const std::vector<double>& x) {
      c.gemm.launch_us = std::exp(x[0]);
      c.gemm.eta_memory = x[2];
      c.gemm.blend_p = 1.0 + std::exp(x[3]);
      if (shared) return;  // compute efficiency held from the GPU with the same silicon
      c.gemm.eta_compute = x[1];
      // Smaller tiles are never more efficient per FLOP than larger ones.
      double e = 1.0;
      for (size_t i = 0; i < extra; ++i) c.gemm.tiles[i + 1].efficiency = e *= x[4 + i];
      if (c.gemm.tiles.size() >= 2) c.gemm.tiles.back().efficiency = e;
    };
    auto objective = [&](const std::vector<double>& x) {
      // Weight streaming cannot beat the HBM's spec-sheet bandwidth (eta_memory <= 1).
      if (x[1] < 0.05 || x[1] > 1.2 || x[2] < 0.05 || x[2] > 1.0 || x[0] > 5 || x[3] > 4) return 1e9;
      for (size_t i = 0; i < extra; ++i)
        if (x[4 + i] < 0.2 || x[4 + i] > 1.0) return 1e9;
      KernelCalibration c = cal;
      apply(c, x);
      return mean_abs_log_error(fit_set, c, gpu);
    };
    std::vector<double> start = {std::log(4.0), 0.7, 0.75, std::log(3.0)}, step = {0.5, 0.1, 0.1, 0.5};
    for (size_t i = 0; i < extra; ++i) {
      start.push_back(0.9);
      step.push_back(0.05);
    }
    MinimizeResult best = nelder_mead(objective, start, step, 3000);
    // Restart from the optimum once: Nelder–Mead can stall on a ridge.
    std::vector<double> small_step = step;
    for (double& v : small_step) v *= 0.3;
    best = nelder_mead(objective, best.x, small_step, 3000);
    apply(cal, best.x);
    cal.gemm.provenance = "measured (" + std::to_string(half.size()) + " bf16/fp16 GEMMs)";
    if (shared)
      cal.gemm.provenance += "; eta_compute and tile efficiencies held from " + opt.shared_compute_id +
                             " (same compute silicon; report-accuracy same_silicon_gemms)";
  } else if (!half.empty()) {
    const double s = fit_scale([](KernelCalibration& c, double f) { c.gemm.eta_compute *= f; }, cal, half, gpu);
    cal.gemm.eta_compute *= s;
    cal.gemm.provenance = "anchored: eta_compute fitted to " + std::to_string(half.size()) +
                          " measured GEMM(s) of this GPU; launch, eta_memory and shape from " + cal.gemm.provenance;
  }
  // Other dtypes (fp8, int8, fp4): a compute-efficiency multiplier each, from
  // that dtype's own measurements; a dtype whose plain GEMMs all stream their
  // weights (priced memory-bound: few-token GEMVs) cannot identify one, and
  // its multiplier is on eta_memory instead.
  std::map<Dtype, std::vector<const KernelSample*>> by_dtype;
  for (const KernelSample* s : other) by_dtype[s->ops[0].compute_dtype].push_back(s);
  for (auto& [d, samples] : by_dtype) {
    const std::string name = dtype_name(d);
    const std::vector<const KernelSample*> fit_set = strided(samples, kMaxGemmFitSamples);
    if (all_weight_streaming(fit_set, cal, gpu)) {
      const double s = fit_scale([&](KernelCalibration& c, double f) { c.gemm.dtype_memory_scale[name] = f; }, cal,
                                 fit_set, gpu);
      cal.gemm.dtype_memory_scale[name] = s;
      continue;
    }
    cal.gemm.dtype_scale[name] = 1.0;
    const double s = fit_scale([&](KernelCalibration& c, double f) { c.gemm.dtype_scale[name] = f; }, cal,
                               fit_set, gpu);
    cal.gemm.dtype_scale[name] = s;
  }
  fit_weight_only_grouped(cal, weight_only_grouped, gpu, opt);
  // The class's residuals are its plain GEMMs': a weight-only grouped level
  // fitted on its own few rows says nothing of the error elsewhere.
  cal.gemm.residuals = residuals_of(plain, cal, gpu);
  return full_fit;
}

// A memory kernel's fitted line: t = a + b_hbm·(bytes streamed from HBM) +
// b_l2·(bytes of a working set that fits in L2).
struct MemoryLine {
  double a = 0, b_hbm = 0, b_l2 = 0;
  double sse = 0;  // Σ ((pred − t) / t)²
};

// Least squares on relative error over the columns `use` of (1, hbm bytes,
// L2 bytes), the unused ones tied: `tie_l2` gives the L2 bytes the HBM slope,
// `through_origin` fixes a = 0. Normal equations, at most 3×3.
bool fit_memory_line(const std::vector<std::array<double, 3>>& x, const std::vector<double>& t, bool tie_l2,
                     bool through_origin, MemoryLine& out) {
  std::vector<std::vector<double>> cols;  // per sample, the used columns
  for (const auto& xi : x) {
    std::vector<double> row;
    if (!through_origin) row.push_back(1.0);
    if (tie_l2) {
      row.push_back(xi[1] + xi[2]);
    } else {
      row.push_back(xi[1]);
      row.push_back(xi[2]);
    }
    cols.push_back(row);
  }
  const size_t n = cols.empty() ? 0 : cols[0].size();
  std::vector<std::vector<double>> m(n, std::vector<double>(n + 1, 0.0));
  for (size_t s = 0; s < cols.size(); ++s)
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) m[i][j] += cols[s][i] * cols[s][j] / (t[s] * t[s]);
      m[i][n] += cols[s][i] / t[s];
    }
  for (size_t i = 0; i < n; ++i) {  // Gauss–Jordan with partial pivoting
    size_t pivot = i;
    for (size_t r = i + 1; r < n; ++r)
      if (std::fabs(m[r][i]) > std::fabs(m[pivot][i])) pivot = r;
    std::swap(m[i], m[pivot]);
    if (!(std::fabs(m[i][i]) > 0)) return false;
    for (size_t r = 0; r < n; ++r) {
      if (r == i) continue;
      const double f = m[r][i] / m[i][i];
      for (size_t c = i; c <= n; ++c) m[r][c] -= f * m[i][c];
    }
  }
  std::vector<double> c(n);
  for (size_t i = 0; i < n; ++i) c[i] = m[i][n] / m[i][i];
  size_t i = 0;
  out.a = through_origin ? 0.0 : c[i++];
  out.b_hbm = c[i++];
  out.b_l2 = tie_l2 ? out.b_hbm : c[i];
  out.sse = 0;
  for (size_t s = 0; s < x.size(); ++s) {
    const double pred = out.a + out.b_hbm * x[s][1] + out.b_l2 * x[s][2];
    out.sse += (pred - t[s]) * (pred - t[s]) / (t[s] * t[s]);
  }
  return std::isfinite(out.sse);
}

void fit_memory_class(KernelCalibration& cal, KernelClass k, const std::vector<const KernelSample*>& samples,
                      const GpuSpec& gpu) {
  MemoryKernelParams& p = cal.memory[k];
  const double bw = gpu.hbm_bandwidth_GBps * 1e9;
  if (samples.size() >= 3) {
    // Weighted least squares on relative error: t ≈ a + b_hbm·hbm bytes +
    // b_l2·L2-resident bytes. The L2 slope is its own parameter only where
    // the class can be L2-resident and both regimes have samples; every
    // candidate must be physical (a ≥ 0, 0 < b_l2 ≤ b_hbm: L2 never slower).
    std::vector<std::array<double, 3>> x;
    std::vector<double> t;
    int resident = 0, streamed = 0;  // samples with L2 hits / with HBM traffic
    for (const KernelSample* s : samples) {
      const double b = s->ops[0].bytes;
      const double hit = l2_resident_class(k) ? l2_hit_bytes(b, gpu.l2_cache_MiB) : 0.0;
      resident += hit > 0;
      streamed += b - hit > 0;
      x.push_back({1.0, b - hit, hit});
      t.push_back(s->time_s);
    }
    const bool l2_term = resident >= 1 && streamed >= 1;
    MemoryLine best;
    bool found = false;
    for (const bool tie : {false, true})
      for (const bool origin : {false, true}) {
        if (!tie && !l2_term) continue;
        MemoryLine line;
        if (!fit_memory_line(x, t, tie, origin, line)) continue;
        if (line.a < 0 || !(line.b_hbm > 0) || !(line.b_l2 > 0) || line.b_l2 > line.b_hbm) continue;
        if (!found || line.sse < best.sse) best = line;
        found = true;
      }
    if (found) {
      p.launch_us = best.a * 1e6;
      p.eta_memory = std::clamp(1.0 / (best.b_hbm * bw), 0.01, 5.0);
      p.l2_speedup = best.b_hbm / best.b_l2;
    }
    p.provenance = "measured (" + std::to_string(samples.size()) + " kernels" +
                   (l2_term ? ", " + std::to_string(resident) + " of them with L2 hits" : "") + ")";
  } else if (!samples.empty()) {
    const double s = fit_scale([&](KernelCalibration& c, double f) { c.memory[k].eta_memory *= f; }, cal, samples, gpu);
    p.eta_memory *= s;
    p.provenance = "anchored: eta_memory fitted to " + std::to_string(samples.size()) +
                   " measurement(s) of this GPU; launch from " + p.provenance;
  }
  p.residuals = residuals_of(samples, cal, gpu);
}

// Points (context, eta) of single-pass samples, one median eta per context.
EtaCurve curve_from_points(const std::vector<const KernelSample*>& samples, const GpuSpec& gpu, double launch_us) {
  std::map<double, std::vector<double>> by_x;
  for (const KernelSample* s : samples) {
    const Operator& op = s->ops[0];
    double peak = gpu.peak_tflops_for(op.compute_dtype);
    const double context = static_cast<double>(op.kv_tokens) / static_cast<double>(std::max<int64_t>(op.seqs, 1));
    by_x[std::log2(context)].push_back(op.flops / (peak * 1e12 * std::max(s->time_s - launch_us * 1e-6, 1e-9)));
  }
  EtaCurve c;
  for (auto& [x, etas] : by_x) {
    c.log2_x.push_back(x);
    c.eta.push_back(median(etas));
  }
  return c;
}

void scale_curve(EtaCurve& c, double f) {
  for (double& e : c.eta) e *= f;
}

void fit_attention(KernelCalibration& cal, const std::vector<const KernelSample*>& all, const GpuSpec& gpu) {
  std::vector<const KernelSample*> fwd, bwd, both, standard;
  for (const KernelSample* s : all) {
    if (is_standard_attention(*s)) standard.push_back(s);
    else if (is_attention_fwd_only(*s)) fwd.push_back(s);
    else if (is_attention_bwd_only(*s)) bwd.push_back(s);
    else both.push_back(s);
  }
  std::vector<std::string> notes;
  AttentionParams& a = cal.attention;
  auto distinct_contexts = [](const std::vector<const KernelSample*>& v) {
    std::vector<double> xs;
    for (const KernelSample* s : v) xs.push_back(static_cast<double>(s->ops[0].kv_tokens) / std::max<int64_t>(s->ops[0].seqs, 1));
    std::sort(xs.begin(), xs.end());
    return static_cast<size_t>(std::unique(xs.begin(), xs.end()) - xs.begin());
  };
  // 1. Combined forward+backward measurements set the level of both curves.
  if (!both.empty()) {
    const double s = fit_scale([](KernelCalibration& c, double f) { scale_curve(c.attention.flash_fwd, f); scale_curve(c.attention.flash_bwd, f); },
                               cal, both, gpu);
    scale_curve(a.flash_fwd, s);
    scale_curve(a.flash_bwd, s);
    notes.push_back("fwd and bwd levels fitted to " + std::to_string(both.size()) + " fwd+bwd measurements");
  }
  // 2. Single-pass measurements: a full curve with 3+ contexts, else a level.
  auto fit_pass = [&](const std::vector<const KernelSample*>& v, EtaCurve AttentionParams::*curve, const char* name) {
    if (v.empty()) return;
    if (distinct_contexts(v) >= 3) {
      a.*curve = curve_from_points(v, gpu, a.launch_us);
      notes.push_back(std::string(name) + " curve measured at " + std::to_string((a.*curve).eta.size()) + " contexts");
    } else {
      const double s = fit_scale([&](KernelCalibration& c, double f) { scale_curve(c.attention.*curve, f); }, cal, v, gpu);
      scale_curve(a.*curve, s);
      notes.push_back(std::string(name) + " level anchored to " + std::to_string(v.size()) + " measurement(s)");
    }
  };
  fit_pass(fwd, &AttentionParams::flash_fwd, "fwd");
  fit_pass(bwd, &AttentionParams::flash_bwd, "bwd");
  if (standard.size() >= 3) {
    // Standard attention's fwd and bwd are assumed equally efficient; eta = total FLOPs / (peak · time).
    std::map<double, std::vector<double>> by_x;
    for (const KernelSample* s : standard) {
      double flops = 0;
      for (const Operator& op : s->ops) flops += op.flops;
      const Operator& op = s->ops[0];
      const double context = static_cast<double>(op.kv_tokens) / std::max<int64_t>(op.seqs, 1);
      by_x[std::log2(context)].push_back(flops / (gpu.peak_tflops_for(op.compute_dtype) * 1e12 * s->time_s));
    }
    EtaCurve c;
    for (auto& [x, etas] : by_x) {
      c.log2_x.push_back(x);
      c.eta.push_back(median(etas));
    }
    a.standard = c;
    notes.push_back("standard-attention curve measured at " + std::to_string(c.eta.size()) + " contexts");
  }
  if (!notes.empty()) {
    std::string joined;
    for (const auto& n : notes) joined += (joined.empty() ? "" : "; ") + n;
    a.provenance = joined + (fwd.empty() || bwd.empty() ? "; curve shapes from " + a.provenance : "");
  }
  a.residuals = residuals_of(all, cal, gpu);
}

}  // namespace

bool is_kernel_timing(const KernelSample& s) {
  if (s.ops.empty() || s.label == "launch") return false;
  if (s.mode.empty() || s.mode == "graph") return true;
  // The sweep times attention backward eagerly (it is not graph-capturable);
  // at 0.6 ms and more, the ~12 us launch is under 2% of it.
  return s.mode == "eager" && s.ops[0].family == OpFamily::AttentionPrefill && s.time_s > 300e-6;
}

std::string sample_class_label(const KernelSample& s) {
  const Operator& op = s.ops.front();
  const std::string name = kernel_class_name(kernel_class_of(op));
  if (kernel_class_of(op) == KernelClass::Gemm && op.compute_dtype != Dtype::BF16 && op.compute_dtype != Dtype::FP16)
    return name + " " + dtype_name(op.compute_dtype);
  return name;
}

double predict_sample_s(const KernelSample& sample, const KernelCalibration& calibration, const GpuSpec& gpu) {
  const CalibratedCostModel model(calibration, "fit");
  CostContext ctx;
  ctx.gpu = &gpu;
  return predict_with(sample, model, ctx);
}

FitResiduals summarize_errors(const std::vector<double>& predicted_s, const std::vector<double>& measured_s) {
  FitResiduals r;
  std::vector<double> ape, log_ratio;
  for (size_t i = 0; i < predicted_s.size(); ++i) {
    ape.push_back(std::fabs(predicted_s[i] - measured_s[i]) / measured_s[i]);
    log_ratio.push_back(std::log(measured_s[i] / predicted_s[i]));
  }
  r.samples = static_cast<int>(ape.size());
  r.median_ape = median(ape);
  r.p90_ape = quantile(ape, 0.9);
  r.log_q10 = quantile(log_ratio, 0.1);
  r.log_q90 = quantile(log_ratio, 0.9);
  return r;
}

namespace {

FitResiduals* class_residuals(KernelCalibration& cal, KernelClass k) {
  if (k == KernelClass::Gemm) return &cal.gemm.residuals;
  if (k == KernelClass::AttentionPrefill) return &cal.attention.residuals;
  auto it = cal.memory.find(k);
  return it == cal.memory.end() ? nullptr : &it->second.residuals;
}

// Replaces each class's in-sample residuals by leave-one-group-out residuals:
// refit without one workload (model, or shape group of a sweep), predict it.
void set_held_out_residuals(KernelCalibration& cal, const GpuSpec& gpu, const std::vector<KernelSample>& samples,
                            const KernelCalibration& base, CalibrationFitOptions options) {
  options.held_out_residuals = false;
  std::map<std::string, std::vector<KernelSample>> by_group;
  for (const KernelSample& s : samples)
    if (is_kernel_timing(s) && s.time_s > 0 && !is_weight_only_grouped(s)) by_group[s.model].push_back(s);
  if (by_group.size() < 2) return;
  std::map<KernelClass, std::pair<std::vector<double>, std::vector<double>>> held;  // predicted, measured
  for (const auto& [group, rows] : by_group) {
    std::vector<KernelSample> rest;
    for (const auto& [g, r] : by_group)
      if (g != group) rest.insert(rest.end(), r.begin(), r.end());
    const KernelCalibration fitted = fit_kernel_calibration(gpu, rest, base, options);
    for (const KernelSample& s : rows) {
      auto& [pred, meas] = held[sample_class(s)];
      pred.push_back(predict_sample_s(s, fitted, gpu));
      meas.push_back(s.time_s);
    }
  }
  for (auto& [k, pm] : held)
    if (FitResiduals* r = class_residuals(cal, k); r && pm.first.size() >= 3) *r = summarize_errors(pm.first, pm.second);
}

}  // namespace

KernelCalibration fit_kernel_calibration(const GpuSpec& gpu, const std::vector<KernelSample>& samples,
                                         const KernelCalibration& base, const CalibrationFitOptions& options) {
  KernelCalibration cal = transfer_calibration(base, gpu.id, options.copy_bandwidth_eta);
  cal.source = options.source;
  std::map<KernelClass, std::vector<const KernelSample*>> by_class;
  for (const KernelSample& s : samples)
    if (is_kernel_timing(s) && s.time_s > 0) by_class[sample_class(s)].push_back(&s);

  const bool gemm_fitted = fit_gemm(cal, by_class[KernelClass::Gemm], gpu, options);
  for (KernelClass k : memory_bound_classes()) fit_memory_class(cal, k, by_class[k], gpu);
  // Classes without their own measurements borrow from a measured class of
  // this GPU rather than from another GPU where that is the closer kernel.
  if (by_class[KernelClass::AttentionDecode].empty() && gemm_fitted) {
    auto& d = cal.memory[KernelClass::AttentionDecode];
    d.launch_us = cal.gemm.launch_us;
    d.eta_memory = cal.gemm.eta_memory;
    d.residuals = cal.gemm.residuals;
    d.provenance = "derived from this GPU's GEMM weight-streaming efficiency (no decode-attention measurements)";
  }
  if (by_class[KernelClass::Elementwise].empty() && by_class[KernelClass::ResidualAdd].size() >= 3) {
    cal.memory[KernelClass::Elementwise] = cal.memory[KernelClass::ResidualAdd];
    cal.memory[KernelClass::Elementwise].provenance = "derived from this GPU's residual-add kernels";
  }
  if (gemm_fitted) cal.attention.launch_us = cal.gemm.launch_us;
  fit_attention(cal, by_class[KernelClass::AttentionPrefill], gpu);
  // Launch floor: device time per node of the longest graph of empty kernels.
  int64_t most_nodes = 0;
  for (const KernelSample& s : samples)
    if (s.label == "launch" && s.mode == "graph" && s.ops[0].m > most_nodes) {
      most_nodes = s.ops[0].m;
      cal.kernel_floor_us = s.time_s * 1e6;
    }
  if (options.held_out_residuals) set_held_out_residuals(cal, gpu, samples, base, options);
  return cal;
}

}  // namespace sightline
