// A kernel calibration read from and written to JSON (presets/calibrations,
// `sightline calibrate`'s output): once per run, apart from the calibration's
// use per operator (calibration.cpp), so that the page's module can compile it
// for size (engine/CMakeLists.txt SIGHTLINE_SIZE_SOURCES).
#include "perf/calibration.hpp"

#include "core/error.hpp"

namespace sightline {

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

}  // namespace sightline
