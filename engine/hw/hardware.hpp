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

  // Dense peak for a GEMM whose inputs are `d`; 0 if the hardware lacks it.
  double peak_tflops_for(Dtype d) const;
  json to_json() const;
};

struct InterconnectSpec {
  std::string id, name, source, kind, scope;
  double bandwidth_per_gpu_GBps = 0;  // one direction, per GPU
  double latency_us = 0;
  bool sharp = false;
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

GpuSpec read_gpu(const json& value, const std::string& path);               // preset id or custom object
InterconnectSpec read_interconnect(const json& value, const std::string& path);

}  // namespace sightline
