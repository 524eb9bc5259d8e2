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

json FitResiduals::to_json() const {
  return {{"samples", samples}, {"median_ape", median_ape}, {"p90_ape", p90_ape},
          {"log_q10", log_q10}, {"log_q90", log_q90}};
}

FitResiduals FitResiduals::from_json(const json& j, const std::string& path) {
  ObjectReader r(j, path, {"samples", "median_ape", "p90_ape", "log_q10", "log_q90"});
  FitResiduals f;
  f.samples = static_cast<int>(r.integer("samples", 0, 1 << 30));
  f.median_ape = r.number("median_ape", 0, 1e6);
  f.p90_ape = r.number("p90_ape", 0, 1e6);
  f.log_q10 = r.number("log_q10", -50, 50);
  f.log_q90 = r.number("log_q90", -50, 50);
  return f;
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

json EtaCurve::to_json() const { return {{"log2_x", log2_x}, {"eta", eta}}; }

EtaCurve EtaCurve::from_json(const json& j, const std::string& path) {
  ObjectReader r(j, path, {"log2_x", "eta"});
  EtaCurve c;
  const json& xs = r.required("log2_x");
  const json& es = r.required("eta");
  if (!xs.is_array() || !es.is_array() || xs.size() != es.size())
    fail(error_code::kConstraint, path, "log2_x and eta must be arrays of equal length");
  for (size_t i = 0; i < xs.size(); ++i) {
    c.log2_x.push_back(read_number(xs[i], pointer_append(r.child_path("log2_x"), i), -64, 64));
    c.eta.push_back(read_number(es[i], pointer_append(r.child_path("eta"), i), 1e-4, 2));
    if (i > 0 && c.log2_x[i] <= c.log2_x[i - 1])
      fail(error_code::kConstraint, pointer_append(r.child_path("log2_x"), i), "log2_x must increase");
  }
  return c;
}

json KernelCalibration::to_json() const {
  json tiles = json::array();
  for (const GemmTile& t : gemm.tiles) tiles.push_back({{"m", t.m}, {"n", t.n}, {"efficiency", t.efficiency}});
  json g = {{"provenance", gemm.provenance}, {"launch_us", gemm.launch_us}, {"eta_compute", gemm.eta_compute},
            {"eta_memory", gemm.eta_memory}, {"blend_p", gemm.blend_p}, {"tiles", tiles},
            {"dtype_scale", gemm.dtype_scale}, {"ceiling_tflops", gemm.ceiling_tflops},
            {"ceiling_source", gemm.ceiling_source}, {"residuals", gemm.residuals.to_json()}};
  // Only where fitted: the other shipped calibrations' files stay as they were.
  if (!gemm.dtype_memory_scale.empty()) g["dtype_memory_scale"] = gemm.dtype_memory_scale;
  if (!gemm.grouped_weight_only_memory_scale.empty())
    g["grouped_weight_only_memory_scale"] = gemm.grouped_weight_only_memory_scale;
  json a = {{"provenance", attention.provenance},   {"launch_us", attention.launch_us},
            {"flash_fwd", attention.flash_fwd.to_json()}, {"flash_bwd", attention.flash_bwd.to_json()},
            {"standard", attention.standard.to_json()}, {"residuals", attention.residuals.to_json()}};
  json mem = json::object();
  for (const auto& [k, p] : memory) {
    json& j = mem[kernel_class_name(k)];
    j = {{"provenance", p.provenance}, {"launch_us", p.launch_us},
         {"eta_memory", p.eta_memory}, {"l2_speedup", p.l2_speedup}, {"residuals", p.residuals.to_json()}};
    if (p.single_pass_fixed_us > 0) j["single_pass"] = {{"fixed_us", p.single_pass_fixed_us}, {"source", p.single_pass_source}};
  }
  return {{"id", id},     {"name", "Kernel calibration for " + id}, {"source", source}, {"notes", notes},
          {"copy_bandwidth_eta", copy_bandwidth_eta}, {"kernel_floor_us", kernel_floor_us}, {"gemm", g}, {"attention", a}, {"memory_kernels", mem}};
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

KernelCalibration KernelCalibration::from_json(const json& j, const std::string& path) {
  ObjectReader r(j, path,
                 {"id", "name", "source", "notes", "copy_bandwidth_eta", "kernel_floor_us", "gemm", "attention",
                  "memory_kernels"});
  KernelCalibration c;
  c.id = r.string("id");
  c.source = r.string("source");
  c.notes = r.string("notes", "");
  c.copy_bandwidth_eta = r.number("copy_bandwidth_eta", 0, 2, 0);
  c.kernel_floor_us = r.number("kernel_floor_us", 0, 1000, 0);
  {
    ObjectReader g(r.required("gemm"), r.child_path("gemm"),
                   {"provenance", "launch_us", "eta_compute", "eta_memory", "blend_p", "tiles", "dtype_scale",
                    "dtype_memory_scale", "grouped_weight_only_memory_scale", "ceiling_tflops", "ceiling_source",
                    "residuals"});
    c.gemm.provenance = g.string("provenance");
    c.gemm.launch_us = g.number("launch_us", 0, 1e4);
    c.gemm.eta_compute = g.number("eta_compute", 1e-3, 2);
    c.gemm.eta_memory = g.number("eta_memory", 1e-3, 2);
    c.gemm.blend_p = g.number("blend_p", 1, 100);
    const json& tiles = g.required("tiles");
    if (!tiles.is_array() || tiles.empty()) fail(error_code::kType, g.child_path("tiles"), "tiles must be a non-empty array");
    c.gemm.tiles.clear();
    for (size_t i = 0; i < tiles.size(); ++i) {
      ObjectReader t(tiles[i], pointer_append(g.child_path("tiles"), i), {"m", "n", "efficiency"});
      c.gemm.tiles.push_back({static_cast<int>(t.integer("m", 1, 4096)), static_cast<int>(t.integer("n", 1, 4096)),
                              t.number("efficiency", 0.01, 1.5)});
    }
    auto read_map = [&](const char* key, double lo, double hi, std::map<std::string, double>& out) {
      if (const json* ds = g.find(key)) {
        require_object(*ds, g.child_path(key));
        for (auto it = ds->begin(); it != ds->end(); ++it)
          out[it.key()] = read_number(it.value(), pointer_append(g.child_path(key), it.key()), lo, hi);
      }
    };
    // A multiplier map keyed by dtype name: every key must name one.
    auto read_dtype_map = [&](const char* key, std::map<std::string, double>& out) {
      read_map(key, 1e-3, 10, out);
      for (const auto& [name, scale] : out)
        if (!is_dtype_name(name))
          fail(error_code::kConstraint, pointer_append(g.child_path(key), name), "unknown dtype '" + name + "'");
    };
    read_map("dtype_scale", 1e-3, 10, c.gemm.dtype_scale);
    read_dtype_map("dtype_memory_scale", c.gemm.dtype_memory_scale);
    read_dtype_map("grouped_weight_only_memory_scale", c.gemm.grouped_weight_only_memory_scale);
    read_map("ceiling_tflops", 1, 1e6, c.gemm.ceiling_tflops);
    c.gemm.ceiling_source = g.string("ceiling_source", "");
    c.gemm.residuals = FitResiduals::from_json(g.required("residuals"), g.child_path("residuals"));
  }
  {
    ObjectReader a(r.required("attention"), r.child_path("attention"),
                   {"provenance", "launch_us", "flash_fwd", "flash_bwd", "standard", "residuals"});
    c.attention.provenance = a.string("provenance");
    c.attention.launch_us = a.number("launch_us", 0, 1e4);
    c.attention.flash_fwd = EtaCurve::from_json(a.required("flash_fwd"), a.child_path("flash_fwd"));
    c.attention.flash_bwd = EtaCurve::from_json(a.required("flash_bwd"), a.child_path("flash_bwd"));
    c.attention.standard = EtaCurve::from_json(a.required("standard"), a.child_path("standard"));
    c.attention.residuals = FitResiduals::from_json(a.required("residuals"), a.child_path("residuals"));
  }
  std::vector<std::string> names;
  for (KernelClass k : memory_bound_classes()) names.push_back(kernel_class_name(k));
  ObjectReader m(r.required("memory_kernels"), r.child_path("memory_kernels"), names);
  for (KernelClass k : memory_bound_classes()) {
    const std::string name = kernel_class_name(k);
    ObjectReader p(m.required(name), m.child_path(name),
                   {"provenance", "launch_us", "eta_memory", "l2_speedup", "residuals", "single_pass"});
    MemoryKernelParams mp;
    mp.provenance = p.string("provenance");
    mp.launch_us = p.number("launch_us", 0, 1e4);
    mp.eta_memory = p.number("eta_memory", 1e-3, 5);
    mp.l2_speedup = p.number("l2_speedup", 1, 100, 1);
    mp.residuals = FitResiduals::from_json(p.required("residuals"), p.child_path("residuals"));
    if (p.has("single_pass")) {
      ObjectReader f(p.required("single_pass"), p.child_path("single_pass"), {"fixed_us", "source"});
      mp.single_pass_fixed_us = f.number("fixed_us", 1e-3, 1e4);
      mp.single_pass_source = f.string("source");
    }
    c.memory[k] = mp;
  }
  return c;
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
