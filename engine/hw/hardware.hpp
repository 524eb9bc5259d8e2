#pragma once
// GPU and interconnect specifications, read from presets or custom specs.
#include <optional>
#include <string>

#include "core/json_reader.hpp"
#include "core/dtype.hpp"

namespace sightline {

struct PeakTflops {
  double fp32 = 0, tf32 = 0, fp16 = 0, bf16 = 0, fp8 = 0, int8 = 0, int4 = 0;
  double fp4 = 0;  // block-scaled FP4 tensor cores (NVFP4/MXFP4, Blackwell); 0: none
};

struct GpuSpec {
  std::string id, name, source, vendor, architecture;
  PeakTflops peak_tflops;
  double memory_GiB = 0;
  double hbm_bandwidth_GBps = 0;
  double l2_cache_MiB = 0;
  int sm_count = 0;
  double boost_clock_MHz = 0;
  double nvlink_bandwidth_GBps = 0;  // bidirectional total per GPU
  int pcie_gen = 0;
  double pcie_bandwidth_GBps = 0;    // one direction, x16
  double tdp_W = 0;
  double idle_power_W = 0;
  // The link between this GPU and its neighbours as the part ships (an
  // intra-node interconnect preset id; "" for a custom GPU that names none).
  // The one place a tool looks up "the GPU's own link": nothing else guesses it.
  std::string default_intra_node;
  // The network between this GPU's servers as its reference systems ship it
  // (an inter-node interconnect preset id: the NICs of a DGX/HGX or a rack);
  // the one place a tool looks up "the network of this GPU's nodes".
  std::string default_inter_node;

  // Dense peak for a GEMM whose inputs are `d`; 0 if the hardware lacks it.
  double peak_tflops_for(Dtype d) const;
  json to_json() const;
};

struct InterconnectSpec {
  std::string id, name, source, kind, scope;
  double bandwidth_per_gpu_GBps = 0;  // one direction, per GPU
  double latency_us = 0;
  bool sharp = false;
  // GPUs one domain of this link joins (NVL72: 72, an xGMI mesh: 8, an NVLink
  // bridge: 2 or 4); 0 = as many as a node holds. Groups inside a domain use
  // this link; beyond it, the inter-node network.
  int domain_gpus = 0;
  // Direct GPU-to-GPU links, every pair wired (AMD xGMI, NVLink bridges): a group of n uses
  // n-1 of the domain_gpus-1 links, so its bandwidth grows with n, and
  // collectives run one direct step instead of a ring.
  bool full_mesh() const { return (kind == "xgmi" || kind == "nvlink_p2p") && domain_gpus >= 2; }
  json to_json() const;
};

// The deployment's GPUs and the links between them (the scenario's "hardware").
struct HardwareSpec {
  GpuSpec gpu;
  int gpus_per_node = 1;
  int nodes = 1;
  std::optional<InterconnectSpec> intra_node;
  std::optional<InterconnectSpec> inter_node;
  int total_gpus() const { return gpus_per_node * nodes; }
};

// A node is one domain of its intra-node link at most: gpus_per_node beyond
// the link's domain_gpus (an NVLink bridge pair, an 8-GPU xGMI mesh) is a
// located error at `path` (the nodes' GPUs would need a link the node lacks).
void check_link_domain(const HardwareSpec& h, const std::string& path);

GpuSpec read_gpu(const json& value, const std::string& path);               // preset id or custom object
InterconnectSpec read_interconnect(const json& value, const std::string& path);

}  // namespace sightline
