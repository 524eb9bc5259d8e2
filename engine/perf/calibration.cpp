#include "perf/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "core/det_math.hpp"
#include "core/error.hpp"
#include "presets/preset_store.hpp"

namespace sightline {

KernelClass kernel_class_of(const Operator& op) {
  switch (op.family) {
    case OpFamily::Gemm: return KernelClass::Gemm;
    case OpFamily::AttentionPrefill: return KernelClass::AttentionPrefill;
    case OpFamily::AttentionDecode: return KernelClass::AttentionDecode;
    case OpFamily::Norm: return KernelClass::Norm;
    case OpFamily::Rope: return KernelClass::Rope;
    case OpFamily::Embedding: return KernelClass::Embedding;
    case OpFamily::Collective: return KernelClass::Collective;
    case OpFamily::MoeRouter: return KernelClass::Gemm;
    case OpFamily::Elementwise: {
      // Backward kernels share their forward kernel's class. A view, not a
      // copy: this runs for every operator priced, millions of times in a fit.
      std::string_view base = op.name;
      constexpr std::string_view bwd = "_bwd";
      if (base.size() > bwd.size() && base.substr(base.size() - bwd.size()) == bwd)
        base.remove_suffix(bwd.size());
      if (base == "add") return KernelClass::ResidualAdd;
      if (base.size() >= 3 && base.substr(base.size() - 3) == "act") return KernelClass::Activation;
      return KernelClass::Elementwise;
    }
    case OpFamily::KvCacheWrite:
    case OpFamily::Sampling:
    case OpFamily::Host: return KernelClass::Elementwise;
  }
  return KernelClass::Elementwise;
}

std::string kernel_class_name(KernelClass k) {
  switch (k) {
    case KernelClass::Gemm: return "gemm";
    case KernelClass::AttentionPrefill: return "attention_prefill";
    case KernelClass::AttentionDecode: return "attention_decode";
    case KernelClass::Norm: return "norm";
    case KernelClass::Rope: return "rope";
    case KernelClass::Activation: return "activation";
    case KernelClass::ResidualAdd: return "residual_add";
    case KernelClass::Embedding: return "embedding";
    case KernelClass::Elementwise: return "elementwise";
    case KernelClass::Collective: return "collective";
  }
  return "?";
}

const std::vector<KernelClass>& memory_bound_classes() {
  static const std::vector<KernelClass> classes = {
      KernelClass::AttentionDecode, KernelClass::Norm,      KernelClass::Rope,       KernelClass::Activation,
      KernelClass::ResidualAdd,     KernelClass::Embedding, KernelClass::Elementwise};
  return classes;
}

double EtaCurve::at(double x) const {
  if (eta.empty()) return 0;
  const double lx = det_log2(std::max(x, 1.0));
  if (lx <= log2_x.front()) return eta.front();
  if (lx >= log2_x.back()) return eta.back();
  const size_t i = static_cast<size_t>(std::upper_bound(log2_x.begin(), log2_x.end(), lx) - log2_x.begin());
  const double t = (lx - log2_x[i - 1]) / (log2_x[i] - log2_x[i - 1]);
  return eta[i - 1] + t * (eta[i] - eta[i - 1]);
}

bool l2_resident_class(KernelClass k) {
  return k == KernelClass::Norm || k == KernelClass::Rope || k == KernelClass::Activation ||
         k == KernelClass::ResidualAdd || k == KernelClass::Elementwise;
}

double l2_hit_bytes(double bytes, double l2_cache_MiB) {
  const double capacity = l2_cache_MiB * 1048576.0;
  if (bytes <= 0.5 * capacity) return bytes;
  if (bytes >= capacity) return 0.0;
  return bytes * 2.0 * (1.0 - bytes / capacity);  // the hit share falls from 1 at half to 0 at full
}

namespace {

const std::map<std::string, KernelCalibration>& calibration_index() {
  static const std::map<std::string, KernelCalibration> index = [] {
    std::map<std::string, KernelCalibration> out;
    for (const json* p : list_presets("calibrations")) {
      KernelCalibration c = KernelCalibration::from_json(*p, "/calibrations/" + p->at("id").get<std::string>());
      out.emplace(c.id, std::move(c));
    }
    return out;
  }();
  return index;
}

}  // namespace

const std::map<KernelClass, FitResiduals>& kernel_transfer_errors() {
  static const std::map<KernelClass, FitResiduals> errors = [] {
    std::map<KernelClass, FitResiduals> out;
    const json* p = find_preset("transfer_errors", "kernels");
    if (!p) return out;
    ObjectReader r(*p, "/transfer_errors/kernels", {"id", "name", "source", "classes"});
    const json& classes = r.required("classes");
    require_object(classes, r.child_path("classes"));
    std::vector<KernelClass> all = memory_bound_classes();
    all.push_back(KernelClass::Gemm);
    all.push_back(KernelClass::AttentionPrefill);
    for (KernelClass k : all)
      if (classes.contains(kernel_class_name(k)))
        out[k] = FitResiduals::from_json(classes.at(kernel_class_name(k)),
                                         pointer_append(r.child_path("classes"), kernel_class_name(k)));
    return out;
  }();
  return errors;
}

const KernelCalibration* find_calibration(const std::string& calibration_id) {
  const auto& index = calibration_index();
  auto it = index.find(calibration_id);
  return it == index.end() ? nullptr : &it->second;
}

const KernelCalibration* own_calibration(const GpuSpec& gpu) {
  return gpu.calibration.empty() ? nullptr : find_calibration(gpu.calibration);
}

const KernelCalibration& default_calibration() {
  static const KernelCalibration defaults = [] {
    KernelCalibration c;
    c.id = "defaults";
    c.source = "built-in starting values, no measurement";
    c.gemm.provenance = "default";
    c.attention.provenance = "default";
    c.attention.flash_fwd = {{9, 14}, {0.4, 0.5}};
    c.attention.flash_bwd = {{9, 14}, {0.3, 0.5}};
    c.attention.standard = {{9, 14}, {0.2, 0.2}};
    for (KernelClass k : memory_bound_classes()) c.memory[k] = MemoryKernelParams{"default", 3, 0.7, 1, {}, 0, {}};
    return c;
  }();
  return defaults;
}

const std::vector<MeasuredGpu>& measured_gpus() {
  static const std::vector<MeasuredGpu> gpus = [] {
    std::vector<MeasuredGpu> out;
    // A calibration file is named after the GPU preset it was measured on:
    // that preset's values are the spec sheet its efficiencies are fractions of.
    for (const auto& [id, cal] : calibration_index())
      if (find_preset("gpus", id)) out.push_back({&cal, read_gpu(json(id), "/calibrations/" + id)});
    return out;
  }();
  return gpus;
}

namespace {

double bf16_or_fp16_peak(const GpuSpec& g) { return g.peak_tflops.bf16 > 0 ? g.peak_tflops.bf16 : g.peak_tflops.fp16; }

double log_ratio(double a, double b) { return a > 0 && b > 0 ? std::fabs(det_log(a / b)) : (a == b ? 0.0 : 1.0); }

}  // namespace

double spec_distance(const GpuSpec& a, const GpuSpec& b) {
  double d = log_ratio(bf16_or_fp16_peak(a), bf16_or_fp16_peak(b)) + log_ratio(a.hbm_bandwidth_GBps, b.hbm_bandwidth_GBps) +
             log_ratio(a.l2_cache_MiB, b.l2_cache_MiB) + log_ratio(a.sm_count, b.sm_count) +
             log_ratio(a.boost_clock_MHz, b.boost_clock_MHz);
  if (a.vendor != b.vendor) d += 1;
  if (a.architecture != b.architecture) d += 1;
  return d;
}

std::size_t nearest_by_spec(const GpuSpec& gpu, const std::vector<SpecCandidate>& candidates) {
  std::size_t best = SIZE_MAX;
  double best_d = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const double d = spec_distance(gpu, *candidates[i].gpu);
    if (best == SIZE_MAX || d < best_d || (d == best_d && candidates[i].sweep_samples > candidates[best].sweep_samples)) {
      best = i;
      best_d = d;
    }
  }
  return best;
}

const MeasuredGpu* nearest_measured_gpu(const GpuSpec& gpu) {
  std::vector<const MeasuredGpu*> eligible;
  std::vector<SpecCandidate> candidates;
  for (const MeasuredGpu& m : measured_gpus()) {
    if (!gpu.calibration.empty() && m.calibration->id == gpu.calibration) continue;  // no data of the target itself
    eligible.push_back(&m);
    candidates.push_back({&m.gpu, m.calibration->gemm.residuals.samples});
  }
  const std::size_t i = nearest_by_spec(gpu, candidates);
  return i == SIZE_MAX ? nullptr : eligible[i];
}

// The largest per-operator GEMM sweep in the shipped data (Vidur's A100-80G
// profiling today): the most complete measured efficiencies.
const KernelCalibration& reference_calibration() {
  const KernelCalibration* best = nullptr;
  for (const MeasuredGpu& m : measured_gpus())
    if (!best || m.calibration->gemm.residuals.samples > best->gemm.residuals.samples) best = m.calibration;
  return best ? *best : default_calibration();
}

}  // namespace sightline
