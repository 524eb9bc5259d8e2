#pragma once
// The decode-attention kernel a software stack runs, where it is not the
// fastest one of the GPU: its published time relative to that kernel, by
// batch (sequences) and context (tokens per sequence), on the GPU
// architectures it runs on (presets/decode_kernels). A GPU's own calibrated
// decode-attention level is set by the fastest kernels measured on it
// (tests/unit/test_decode_attention_published.cpp); a stack whose engine runs
// a slower kernel names it, and its GQA decode steps take that kernel's time.
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline {

struct DecodeKernel {
  std::string id, name, source;
  std::vector<std::string> architectures;  // GpuSpec::architecture values it runs on
  std::vector<double> batch, context_tokens;     // grid axes as published, strictly increasing
  std::vector<double> log2_batch, log2_context;  // the same in log2, where the grid interpolates
  std::vector<std::vector<double>> time_ratio;   // [batch][context]: its time over the fastest kernel's

  bool runs_on(const std::string& architecture) const;
  // The ratio at `sequences` and `context_tokens` per sequence, bilinear in
  // log2 of both, held at the grid's edges outside it.
  double time_ratio_at(double sequences, double tokens_per_sequence) const;
  json to_json() const;
};

// A decode_kernels preset id, or an object with the preset's keys. Every
// architecture must be one a GPU preset names (a misspelt one would never apply).
DecodeKernel read_decode_kernel(const json& value, const std::string& path);

}  // namespace sightline
