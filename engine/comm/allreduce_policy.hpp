#pragma once
// Which all-reduce a serving stack runs, by message size, and its price.
//
// Serving engines do not send small tensor-parallel all-reduces through NCCL:
// vLLM, SGLang and TensorRT-LLM run their own kernels on buffers every GPU of
// the node maps (CUDA IPC / symmetric memory), one kernel and one or two
// barriers per call instead of NCCL's 2(n-1) ring steps. A stack preset lists
// the implementations its engine may use, each up to the largest message the
// engine gives it, and the engine's choice is priced as the cheapest allowed
// one (the engines' size thresholds are tuned to be the crossovers):
//   one_shot: every GPU reads the whole message from each of its n-1 peers and
//             reduces locally: t = latency + (n-1)·bytes / (B·eta(n))
//   two_shot: reduce-scatter then all-gather through peer memory, two
//             barriers:             t = latency + 2(n-1)/n·bytes / (B·eta(n))
//   multimem: NVLink SHARP multicast loads/stores (NVLS): each GPU's port
//             carries the message once: t = latency + bytes / (B·eta_nvls)
//   nccl:     the calibrated NCCL model (collectives.hpp), always the last
//             entry, for every size and every topology.
// latency is the implementation's fixed cost per call, from published
// small-message measurements (the preset's `source`); B is the link's
// per-GPU bandwidth and eta its calibrated ring (or NVLS) efficiency.
//
// Custom kernels need every GPU of the group to load and store its peers'
// memory over NVLink (an NVSwitch, or a bridge/mesh domain that holds the
// whole group); multimem also needs a switch with multicast (`sharp`). A group
// that spans nodes, or a link without these (PCIe, an xGMI mesh, a network),
// gets NCCL: decided from the link's values, never from its preset id.
#include <limits>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "hw/hardware.hpp"

namespace sightline {

enum class AllReduceAlgorithm { OneShot, TwoShot, Multimem, Nccl };

struct AllReduceImplementation {
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::Nccl;
  double up_to_bytes = std::numeric_limits<double>::infinity();  // the largest message the engine gives it
  double latency_us = 0;                                         // fixed cost per call (not for nccl)
};

struct AllReducePolicy {
  std::string source;
  // In the preset's order; the last one is always nccl (unlimited). Empty: NCCL only.
  std::vector<AllReduceImplementation> implementations;
  json to_json() const;
};

// The stack's "all_reduce" section: {"source", "implementations": [{"algorithm",
// "up_to_KiB", "latency_us"}, ..., {"algorithm": "nccl"}]}.
AllReducePolicy read_all_reduce_policy(const json& value, const std::string& path);

const char* all_reduce_algorithm_name(AllReduceAlgorithm a);

// Whether `a` can run on a group of `gpus` GPUs inside one domain of `link`.
bool all_reduce_algorithm_runs_on(AllReduceAlgorithm a, const InterconnectSpec& link, int gpus);

// Time of one custom (non-NCCL) implementation on a flat group, without the
// fallback checks: the formula above.
double custom_all_reduce_time_s(const AllReduceImplementation& impl, double bytes, int gpus,
                                const InterconnectSpec& link);

}  // namespace sightline
