#include "hw/hardware.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/det_math.hpp"
#include "core/error.hpp"
#include "presets/preset_store.hpp"

namespace sightline {

double GpuSpec::peak_tflops_for(Dtype d) const {
  switch (d) {
    case Dtype::FP32: return peak_tflops.tf32 > 0 ? peak_tflops.tf32 : peak_tflops.fp32;
    case Dtype::BF16: return peak_tflops.bf16;
    case Dtype::FP16: return peak_tflops.fp16;
    case Dtype::FP8: return peak_tflops.fp8;
    case Dtype::INT8: return peak_tflops.int8;
    case Dtype::INT4: return peak_tflops.int4;
    case Dtype::NVFP4:
    case Dtype::MXFP4: return peak_tflops.fp4;
  }
  return 0;
}

namespace {

// A GPU preset's default link of one scope (its own link inside a node, or
// the network between its nodes): an interconnect preset id of that scope.
void read_gpu_default_link(const ObjectReader& r, const char* key, const char* scope, const char* kind_words,
                           const char* wrong_scope_words, std::string& out) {
  const json* link = r.find(key);
  if (!link) return;
  const std::string where = r.child_path(key);
  if (!link->is_string()) fail(error_code::kType, where, std::string("expected ") + kind_words + " interconnect preset id");
  if (read_interconnect(*link, where).scope != scope)
    fail(error_code::kConstraint, where, "'" + link->get<std::string>() + "' " + wrong_scope_words);
  out = link->get<std::string>();
}

GpuSpec read_gpu_object(const json& value, const std::string& path) {
  ObjectReader r(value, path,
                 {"id", "name", "source", "vendor", "architecture", "peak_tflops", "memory_GiB", "hbm_bandwidth_GBps",
                  "l2_cache_MiB", "sm_count", "boost_clock_MHz", "nvlink_bandwidth_GBps", "pcie_gen",
                  "pcie_bandwidth_GBps", "tdp_W", "idle_power_W", "default_intra_node",
                  "default_inter_node", "node_gpus", "calibration", "power_limit_W", "clock_limit_MHz"});
  GpuSpec g;
  g.id = r.string("id", "custom-gpu");
  g.name = r.string("name", g.id);
  g.source = r.string("source", "user-supplied specification");
  g.vendor = r.string("vendor", "unknown");
  g.architecture = r.string("architecture", "unknown");
  ObjectReader p(r.required("peak_tflops"), r.child_path("peak_tflops"),
                 {"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4", "fp4"});
  // Plausible bounds of what silicon does (see kGpuLimits): a figure past
  // them is a typo or a unit slip, and priced as given it would make the GPU
  // faster (or slower) than any real part by orders of magnitude.
  auto peak = [&p](const char* key) {
    const double v = p.number(key, 0, kGpuLimits.max_peak_tflops, 0);
    if (v > 0 && v < kGpuLimits.min_peak_tflops)
      fail(error_code::kRange, p.child_path(key),
           std::string(key) + " peak " + std::to_string(v) + " TFLOP/s is below any real GPU's (" +
               std::to_string(kGpuLimits.min_peak_tflops) + "); give 0 when the GPU lacks the format");
    return v;
  };
  g.peak_tflops.fp32 = peak("fp32");
  g.peak_tflops.tf32 = peak("tf32");
  g.peak_tflops.fp16 = peak("fp16");
  g.peak_tflops.bf16 = peak("bf16");
  g.peak_tflops.fp8 = peak("fp8");
  g.peak_tflops.int8 = peak("int8");
  g.peak_tflops.int4 = peak("int4");
  g.peak_tflops.fp4 = peak("fp4");
  if (g.peak_tflops.fp16 <= 0 && g.peak_tflops.bf16 <= 0)
    fail(error_code::kConstraint, r.child_path("peak_tflops"), "a GPU needs a positive fp16 or bf16 peak");
  g.memory_GiB = r.number("memory_GiB", kGpuLimits.min_memory_GiB, kGpuLimits.max_memory_GiB);
  g.hbm_bandwidth_GBps = r.number("hbm_bandwidth_GBps", kGpuLimits.min_memory_bandwidth_GBps, kGpuLimits.max_memory_bandwidth_GBps);
  g.l2_cache_MiB = r.number("l2_cache_MiB", 0, kGpuLimits.max_l2_MiB, 0);
  g.sm_count = static_cast<int>(r.integer("sm_count", 1, kGpuLimits.max_sm_count));
  g.boost_clock_MHz = r.number("boost_clock_MHz", kGpuLimits.min_clock_MHz, kGpuLimits.max_clock_MHz, 1500);
  g.nvlink_bandwidth_GBps = r.number("nvlink_bandwidth_GBps", 0, kGpuLimits.max_link_GBps, 0);
  g.pcie_gen = static_cast<int>(r.integer("pcie_gen", 1, 10, 4));
  g.pcie_bandwidth_GBps = r.number("pcie_bandwidth_GBps", kGpuLimits.min_link_GBps, kGpuLimits.max_link_GBps, 32);
  g.tdp_W = r.number("tdp_W", kGpuLimits.min_power_W, kGpuLimits.max_power_W);
  g.idle_power_W = r.number("idle_power_W", 0, kGpuLimits.max_power_W, g.tdp_W * 0.1);
  read_gpu_default_link(r, "default_intra_node", "intra_node", "an intra-node", "is an inter-node network, not a GPU's own link",
                        g.default_intra_node);
  read_gpu_default_link(r, "default_inter_node", "inter_node", "an inter-node",
                        "is a link inside a node, not a network between nodes", g.default_inter_node);
  g.node_gpus = static_cast<int>(r.integer("node_gpus", 1, 100000, 0));
  if (const json* cal = r.find("calibration")) {
    const std::string where = r.child_path("calibration");
    if (!cal->is_string()) fail(error_code::kType, where, "expected a kernel calibration id (presets/calibrations)");
    g.calibration = cal->get<std::string>();
    require_preset("calibrations", g.calibration, where);
  }
  GpuOperatingLimits limits;
  limits.power_limit_W = r.number("power_limit_W", kGpuLimits.min_power_W, kGpuLimits.max_power_W, 0);
  limits.clock_limit_MHz = r.number("clock_limit_MHz", kGpuLimits.min_clock_MHz, kGpuLimits.max_clock_MHz, 0);
  return apply_operating_limits(g, limits, path);
}

InterconnectSpec read_interconnect_object(const json& value, const std::string& path) {
  ObjectReader r(value, path, {"id", "name", "source", "kind", "scope", "bandwidth_per_gpu_GBps", "latency_us", "sharp",
                               "domain_gpus", "calibration"});
  InterconnectSpec s;
  s.id = r.string("id", "custom-interconnect");
  s.name = r.string("name", s.id);
  s.source = r.string("source", "user-supplied specification");
  s.kind = r.choice("kind", {"nvswitch", "nvlink_p2p", "xgmi", "pcie", "infiniband", "roce"});
  s.scope = r.choice("scope", {"intra_node", "inter_node"});
  s.bandwidth_per_gpu_GBps = r.number("bandwidth_per_gpu_GBps", kGpuLimits.min_link_GBps, kGpuLimits.max_link_GBps);
  s.latency_us = r.number("latency_us", kGpuLimits.min_link_latency_us, kGpuLimits.max_link_latency_us);
  s.sharp = r.boolean("sharp", false);
  s.domain_gpus = static_cast<int>(r.integer("domain_gpus", 0, 100000, 0));
  // A switch or mesh joins a known number of GPUs; without it, any number of
  // GPUs would be priced as one domain (64 H100s at TP 64 as one NVLink node).
  if ((s.kind == "nvswitch" || s.kind == "nvlink_p2p") && s.scope == "intra_node" && s.domain_gpus < 2)
    fail(error_code::kConstraint, r.child_path("domain_gpus"),
         "an " + s.kind + " link joins a fixed number of GPUs: give its domain_gpus (>= 2; an HGX baseboard: 8)");
  if (s.kind == "xgmi" && s.domain_gpus < 2)
    fail(error_code::kConstraint, r.child_path("domain_gpus"), "an xgmi link is a full mesh: give its domain_gpus (>= 2)");
  if (const json* cal = r.find("calibration")) {
    const std::string where = r.child_path("calibration");
    if (!cal->is_string()) fail(error_code::kType, where, "expected a collective calibration id (presets/comm_calibrations)");
    s.calibration = cal->get<std::string>();
    require_preset("comm_calibrations", s.calibration, where);
  }
  if (s.full_mesh() && s.sharp)
    fail(error_code::kConstraint, r.child_path("sharp"), "a full mesh of direct links has no switch to reduce in");
  return s;
}

std::string format_watts_or_mhz(double v) {
  const double rounded = std::round(v);
  return rounded == v ? std::to_string(static_cast<long long>(rounded)) : std::to_string(v);
}

}  // namespace

double limited_clock_ratio(const GpuSpec& g, const GpuOperatingLimits& limits, const std::string& path) {
  double ratio = 1.0;
  if (limits.clock_limit_MHz > 0 && g.boost_clock_MHz > 0) ratio = std::min(ratio, limits.clock_limit_MHz / g.boost_clock_MHz);
  if (limits.power_limit_W > 0 && limits.power_limit_W < g.tdp_W) {
    if (limits.power_limit_W <= g.idle_power_W)
      fail(error_code::kRange, path + "/power_limit_W",
           "power_limit_W " + format_watts_or_mhz(limits.power_limit_W) + " W is at or below the GPU's idle power (" +
               format_watts_or_mhz(g.idle_power_W) + " W): it could not run a kernel");
    // CMOS dynamic power is C V^2 f, and across the DVFS range the voltage
    // follows the clock, so the power above idle grows as the cube of the
    // clock: a limit P allows the clock ((P - idle) / (TDP - idle))^(1/3) of
    // the one the part sustains at its TDP (where its measured efficiencies
    // were taken). It binds under full tensor load; a memory-bound kernel
    // draws less and is priced from HBM bandwidth, which the limit leaves.
    ratio = std::min(ratio, det_pow((limits.power_limit_W - g.idle_power_W) / (g.tdp_W - g.idle_power_W), 1.0 / 3.0));
  }
  return ratio;
}

GpuSpec apply_operating_limits(const GpuSpec& g, const GpuOperatingLimits& limits, const std::string& path) {
  const double ratio = limited_clock_ratio(g, limits, path);
  if (!(ratio < 1.0)) return g;
  GpuSpec out = g;
  for (double* peak : {&out.peak_tflops.fp32, &out.peak_tflops.tf32, &out.peak_tflops.fp16, &out.peak_tflops.bf16,
                       &out.peak_tflops.fp8, &out.peak_tflops.int8, &out.peak_tflops.int4, &out.peak_tflops.fp4})
    *peak *= ratio;
  out.boost_clock_MHz *= ratio;
  // Full-load power at the lower clock (the energy model's busy power).
  out.tdp_W = g.idle_power_W + (g.tdp_W - g.idle_power_W) * ratio * ratio * ratio;
  std::string what;
  if (limits.power_limit_W > 0 && limits.power_limit_W < g.tdp_W) what = format_watts_or_mhz(limits.power_limit_W) + " W";
  if (limits.clock_limit_MHz > 0 && limits.clock_limit_MHz < g.boost_clock_MHz)
    what += (what.empty() ? "" : ", ") + format_watts_or_mhz(limits.clock_limit_MHz) + " MHz";
  out.id = g.id + " (limited to " + what + ")";
  out.name = g.name + " (limited to " + what + ")";
  out.source = g.source + "; limited to " + what + ": peaks and clock x" + std::to_string(ratio) +
               " (power above idle as the cube of the clock)";
  out.calibration.clear();  // measured at the part's own clock: not this GPU's data
  return out;
}

GpuSpec read_gpu(const json& value, const std::string& path) {
  if (value.is_string()) return read_gpu_object(require_preset("gpus", value.get<std::string>(), path), path);
  return read_gpu_object(value, path);
}

InterconnectSpec read_interconnect(const json& value, const std::string& path) {
  if (value.is_string())
    return read_interconnect_object(require_preset("interconnects", value.get<std::string>(), path), path);
  return read_interconnect_object(value, path);
}

int GpuSpec::proposed_node_gpus(const InterconnectSpec* link) const {
  if (node_gpus <= 0) return 0;
  return link && link->domain_gpus > 0 ? std::min(node_gpus, link->domain_gpus) : node_gpus;
}

void check_link_domain(const HardwareSpec& h, const std::string& path) {
  if (!h.intra_node || h.intra_node->domain_gpus <= 0 || h.gpus_per_node <= h.intra_node->domain_gpus) return;
  fail(error_code::kConstraint, path,
       "gpus_per_node " + std::to_string(h.gpus_per_node) + " exceeds the " + std::to_string(h.intra_node->domain_gpus) +
           " GPUs one '" + h.intra_node->id + "' domain joins; use more nodes of at most that many GPUs");
}

json GpuSpec::to_json() const {
  json g = {{"id", id}, {"name", name}, {"source", source}, {"vendor", vendor}, {"architecture", architecture},
          {"peak_tflops", {{"fp32", peak_tflops.fp32}, {"tf32", peak_tflops.tf32}, {"fp16", peak_tflops.fp16},
                           {"bf16", peak_tflops.bf16}, {"fp8", peak_tflops.fp8}, {"int8", peak_tflops.int8},
                           {"int4", peak_tflops.int4}}},
          {"memory_GiB", memory_GiB}, {"hbm_bandwidth_GBps", hbm_bandwidth_GBps}, {"l2_cache_MiB", l2_cache_MiB},
          {"sm_count", sm_count}, {"boost_clock_MHz", boost_clock_MHz},
          {"nvlink_bandwidth_GBps", nvlink_bandwidth_GBps}, {"pcie_gen", pcie_gen},
          {"pcie_bandwidth_GBps", pcie_bandwidth_GBps}, {"tdp_W", tdp_W}, {"idle_power_W", idle_power_W}};
  if (peak_tflops.fp4 > 0) g["peak_tflops"]["fp4"] = peak_tflops.fp4;
  if (!default_intra_node.empty()) g["default_intra_node"] = default_intra_node;
  if (!default_inter_node.empty()) g["default_inter_node"] = default_inter_node;
  if (node_gpus > 0) g["node_gpus"] = node_gpus;
  if (!calibration.empty()) g["calibration"] = calibration;
  return g;
}

json InterconnectSpec::to_json() const {
  json l = {{"id", id}, {"name", name}, {"source", source}, {"kind", kind}, {"scope", scope},
          {"bandwidth_per_gpu_GBps", bandwidth_per_gpu_GBps}, {"latency_us", latency_us}, {"sharp", sharp}};
  if (domain_gpus > 0) l["domain_gpus"] = domain_gpus;
  if (!calibration.empty()) l["calibration"] = calibration;
  return l;
}

std::vector<std::string> read_architecture_names(const json& value, const std::string& path) {
  if (!value.is_array() || value.empty())
    fail(error_code::kType, path, "expected a non-empty array of GPU architectures");
  std::set<std::string> known;
  for (const json* g : list_presets("gpus"))
    if (g->contains("architecture") && g->at("architecture").is_string()) known.insert(g->at("architecture").get<std::string>());
  std::vector<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string at = pointer_append(path, i);
    if (!value[i].is_string()) fail(error_code::kType, at, "expected an architecture name");
    const std::string a = value[i].get<std::string>();
    if (!known.count(a)) {
      std::string names;
      for (const std::string& n : known) names += (names.empty() ? "" : ", ") + n;
      fail(error_code::kInvalidValue, at, "no GPU preset has architecture '" + a + "'; known: " + names);
    }
    out.push_back(a);
  }
  return out;
}

}  // namespace sightline
