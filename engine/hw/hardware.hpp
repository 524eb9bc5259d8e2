#pragma once
// GPU and interconnect specifications, read from presets or custom specs.
#include <optional>
#include <string>

#include "core/json_reader.hpp"
#include "core/dtype.hpp"

namespace sightline {

struct InterconnectSpec;

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
  // GPUs one server of this part holds as its reference systems ship (an
  // HGX/DGX baseboard: 8); 0 when not stated. The node size a tool proposes
  // when a layout needs several GPUs: nothing else assumes one.
  int node_gpus = 0;
  // The node size to propose on `link` (this GPU's node_gpus, no more than the
  // link's domain joins), or 0 when the GPU states none.
  int proposed_node_gpus(const InterconnectSpec* link) const;
  // The measured kernel data of this part (a presets/calibrations id), "" for
  // none. A value like the others: the cost model's target-measured tier uses
  // the calibration this names, never one found by the GPU's own id, so a
  // copy under a new id without it is priced from its spec sheet alone.
  std::string calibration;

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
  // The measured collective data of this link (a presets/comm_calibrations
  // id), "" for none: reached through this value, never by the link's id.
  std::string calibration;
  // Spec-sheet values equal (everything but id, name, source and calibration).
  bool same_values(const InterconnectSpec& o) const {
    return kind == o.kind && scope == o.scope && bandwidth_per_gpu_GBps == o.bandwidth_per_gpu_GBps &&
           latency_us == o.latency_us && sharp == o.sharp && domain_gpus == o.domain_gpus;
  }
  bool full_mesh() const { return (kind == "xgmi" || kind == "nvlink_p2p") && domain_gpus >= 2; }
  json to_json() const;
};

// The plausible range of every spec-sheet figure a GPU or link may be given:
// well beyond today's parts on both sides (T4's 8 TFLOP/s fp32 to GB300's
// 15 PFLOP/s fp4; 300 GB/s of L4's GDDR to 8 TB/s of HBM3e), so a real or
// coming part fits, and a unit slip (TFLOP/s given as FLOP/s, 1e-200) does not.
struct GpuLimits {
  double min_peak_tflops = 0.1, max_peak_tflops = 1e5;
  double min_memory_GiB = 0.25, max_memory_GiB = 1e5;
  double min_memory_bandwidth_GBps = 10, max_memory_bandwidth_GBps = 1e5;
  double max_l2_MiB = 1e5;
  int64_t max_sm_count = 100000;
  double min_clock_MHz = 100, max_clock_MHz = 1e4;
  double min_link_GBps = 0.01, max_link_GBps = 1e5;
  double min_link_latency_us = 0, max_link_latency_us = 1e6;
  double min_power_W = 1, max_power_W = 1e5;
};
inline constexpr GpuLimits kGpuLimits{};

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

// A power or clock limit set on a GPU (nvidia-smi -pl / -lgc, rocm-smi
// --setpoweroverdrive): the sustained SM clock it allows relative to the
// part's own, and the GPU it makes. The limit lowers every tensor and vector
// peak and the clock (the kernels' fixed times run at the clock); HBM
// bandwidth is its own clock domain and stays. A limited part is no longer the
// part that was measured, so its `calibration` is dropped: it is priced by
// transfer from the nearest measured GPU (its own unlimited self when that is
// a measured preset), and says so. A limit at or above the part's own figure
// changes nothing.
struct GpuOperatingLimits {
  double power_limit_W = 0;    // 0: none
  double clock_limit_MHz = 0;  // 0: none
};
// The sustained-clock ratio (<= 1) the limits allow; a power limit at or below
// the idle power is a located error at `path`/power_limit_W.
double limited_clock_ratio(const GpuSpec& g, const GpuOperatingLimits& limits, const std::string& path);
GpuSpec apply_operating_limits(const GpuSpec& g, const GpuOperatingLimits& limits, const std::string& path);

GpuSpec read_gpu(const json& value, const std::string& path);               // preset id or custom object
// A non-empty array of GPU architecture names (GpuSpec::architecture), each
// one a GPU preset names: a misspelt name would never match a GPU.
std::vector<std::string> read_architecture_names(const json& value, const std::string& path);
InterconnectSpec read_interconnect(const json& value, const std::string& path);

}  // namespace sightline
