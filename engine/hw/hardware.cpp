#include "hw/hardware.hpp"

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
                  "default_inter_node"});
  GpuSpec g;
  g.id = r.string("id", "custom-gpu");
  g.name = r.string("name", g.id);
  g.source = r.string("source", "user-supplied specification");
  g.vendor = r.string("vendor", "unknown");
  g.architecture = r.string("architecture", "unknown");
  ObjectReader p(r.required("peak_tflops"), r.child_path("peak_tflops"),
                 {"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4", "fp4"});
  constexpr double kMaxTflops = 1e6;
  g.peak_tflops.fp32 = p.number("fp32", 0, kMaxTflops, 0);
  g.peak_tflops.tf32 = p.number("tf32", 0, kMaxTflops, 0);
  g.peak_tflops.fp16 = p.number("fp16", 0, kMaxTflops, 0);
  g.peak_tflops.bf16 = p.number("bf16", 0, kMaxTflops, 0);
  g.peak_tflops.fp8 = p.number("fp8", 0, kMaxTflops, 0);
  g.peak_tflops.int8 = p.number("int8", 0, kMaxTflops, 0);
  g.peak_tflops.int4 = p.number("int4", 0, kMaxTflops, 0);
  g.peak_tflops.fp4 = p.number("fp4", 0, kMaxTflops, 0);
  if (g.peak_tflops.fp16 <= 0 && g.peak_tflops.bf16 <= 0)
    fail(error_code::kConstraint, r.child_path("peak_tflops"), "a GPU needs a positive fp16 or bf16 peak");
  g.memory_GiB = r.number("memory_GiB", 0.25, 1e5);
  g.hbm_bandwidth_GBps = r.number("hbm_bandwidth_GBps", 1, 1e6);
  g.l2_cache_MiB = r.number("l2_cache_MiB", 0, 1e5, 0);
  g.sm_count = static_cast<int>(r.integer("sm_count", 1, 100000));
  g.boost_clock_MHz = r.number("boost_clock_MHz", 1, 1e5, 1500);
  g.nvlink_bandwidth_GBps = r.number("nvlink_bandwidth_GBps", 0, 1e6, 0);
  g.pcie_gen = static_cast<int>(r.integer("pcie_gen", 1, 10, 4));
  g.pcie_bandwidth_GBps = r.number("pcie_bandwidth_GBps", 0.1, 1e5, 32);
  g.tdp_W = r.number("tdp_W", 1, 1e5);
  g.idle_power_W = r.number("idle_power_W", 0, 1e5, g.tdp_W * 0.1);
  read_gpu_default_link(r, "default_intra_node", "intra_node", "an intra-node", "is an inter-node network, not a GPU's own link",
                        g.default_intra_node);
  read_gpu_default_link(r, "default_inter_node", "inter_node", "an inter-node",
                        "is a link inside a node, not a network between nodes", g.default_inter_node);
  return g;
}

InterconnectSpec read_interconnect_object(const json& value, const std::string& path) {
  ObjectReader r(value, path, {"id", "name", "source", "kind", "scope", "bandwidth_per_gpu_GBps", "latency_us", "sharp",
                               "domain_gpus"});
  InterconnectSpec s;
  s.id = r.string("id", "custom-interconnect");
  s.name = r.string("name", s.id);
  s.source = r.string("source", "user-supplied specification");
  s.kind = r.choice("kind", {"nvswitch", "nvlink_p2p", "xgmi", "pcie", "infiniband", "roce"});
  s.scope = r.choice("scope", {"intra_node", "inter_node"});
  s.bandwidth_per_gpu_GBps = r.number("bandwidth_per_gpu_GBps", 0.01, 1e6);
  s.latency_us = r.number("latency_us", 0, 1e6);
  s.sharp = r.boolean("sharp", false);
  s.domain_gpus = static_cast<int>(r.integer("domain_gpus", 0, 100000, 0));
  if (s.kind == "xgmi" && s.domain_gpus < 2)
    fail(error_code::kConstraint, r.child_path("domain_gpus"), "an xgmi link is a full mesh: give its domain_gpus (>= 2)");
  if (s.full_mesh() && s.sharp)
    fail(error_code::kConstraint, r.child_path("sharp"), "a full mesh of direct links has no switch to reduce in");
  return s;
}

}  // namespace

GpuSpec read_gpu(const json& value, const std::string& path) {
  if (value.is_string()) return read_gpu_object(require_preset("gpus", value.get<std::string>(), path), path);
  return read_gpu_object(value, path);
}

InterconnectSpec read_interconnect(const json& value, const std::string& path) {
  if (value.is_string())
    return read_interconnect_object(require_preset("interconnects", value.get<std::string>(), path), path);
  return read_interconnect_object(value, path);
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
  return g;
}

json InterconnectSpec::to_json() const {
  json l = {{"id", id}, {"name", name}, {"source", source}, {"kind", kind}, {"scope", scope},
          {"bandwidth_per_gpu_GBps", bandwidth_per_gpu_GBps}, {"latency_us", latency_us}, {"sharp", sharp}};
  if (domain_gpus > 0) l["domain_gpus"] = domain_gpus;
  return l;
}

}  // namespace sightline
