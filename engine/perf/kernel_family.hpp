#pragma once
// Kernel-efficiency families for GPUs without measurements of their own whose
// architecture the NVIDIA-measured curves do not describe (AMD Instinct).
// A family (presets/kernel_families/) holds cited kernel-level facts of some
// of its GPUs (max-achievable GEMM TFLOP/s, achievable copy bandwidth,
// attention throughput in a harness also run on the shape GPU) and builds a
// GPU's calibration from them: curve shapes from a measured GPU, levels from
// the facts taken as fractions of spec-sheet peaks. Nothing in a family is
// fitted to end-to-end results.
#include <map>
#include <string>
#include <vector>

#include "hw/hardware.hpp"
#include "perf/calibration.hpp"

namespace sightline {

// One kernel throughput measured on a family GPU and, in the same harness, on
// the family's shape GPU.
struct HarnessPair {
  double tflops = 0;
  double shape_from_tflops = 0;
};

struct FamilyGpuFacts {
  std::map<std::string, double> gemm_max_achievable_tflops;  // per dtype name
  double copy_bandwidth_GBps = 0;                            // 0: not known for this GPU
  HarnessPair flash_attention_fwd, standard_attention;       // tflops 0: not known
  // Achieved HBM bandwidth of the stack's paged decode-attention kernel where
  // it streams the KV cache at its plateau (long contexts, many sequences).
  // 0: no figure for this GPU; its decode attention keeps the generic price.
  double decode_attention_bandwidth_GBps = 0;
};

// Where each kind of fact comes from, in a few words (the family's `source`
// has the full citation): shown beside the classes it prices, e.g. by
// explain-step.
struct FamilyCitations {
  std::string gemm, copy, attention;
  std::string decode_attention;  // "" when no GPU of the family has a decode-attention figure
};

struct KernelFamily {
  std::string id, name, source;
  FamilyCitations citations;
  // What the family has no kernel-level figure for, and the generic price it
  // falls back to, by mechanism ("grouped_gemm", "decode_attention",
  // "prefill_attention", "all_to_all", "host"); said beside those lines.
  std::map<std::string, std::string> not_cited;
  std::vector<std::string> architectures;
  std::string shape_from;     // measured calibration whose shapes the family keeps
  std::string reference_gpu;  // whose facts stand for a family GPU without its own
  std::map<std::string, FamilyGpuFacts> gpus;
};

// The mechanisms `not_cited` may name.
const std::vector<std::string>& family_uncited_mechanisms();

// Whether `gpu` has a kernel-level figure of its own for `mechanism` (one of
// family_uncited_mechanisms()): then the family's `not_cited` line for it does
// not describe this GPU. Only decode attention has per-GPU figures so far.
bool family_cites_for(const KernelFamily& family, const GpuSpec& gpu, const std::string& mechanism);

// The family of a GPU architecture (e.g. "cdna3"), or nullptr.
const KernelFamily* find_kernel_family(const std::string& architecture);

// The calibration a family gives `gpu`: `shape_from`'s measured calibration
// with its levels moved to the facts of `gpu` (or, for each fact it lacks,
// of the reference GPU) as fractions of spec-sheet peaks. Every class is
// "anchored"; its 80% band is widened to the measured cross-GPU transfer error.
KernelCalibration family_calibration(const KernelFamily& family, const GpuSpec& gpu);

}  // namespace sightline
