#pragma once
// DeepSeek sparse attention's lightning indexer in one step: its projections,
// its key-cache write, the scoring of every cached key and the top-k selection
// (model/architecture.hpp SparseIndexSpec). The attention that follows reads
// only the selected keys (operators.cpp, add_attention_core).
#include <string>
#include <vector>

#include "model/operators.hpp"

namespace sightline {

struct IndexerGemm {
  std::string name;
  int64_t m = 0, n = 0, k = 0;
};

struct IndexerStep {
  std::vector<IndexerGemm> gemms;  // priced by the step builder, in the checkpoint's weight format
  std::vector<Operator> ops;       // rope + Hadamard + FP8 quantization, key-cache write, scoring, top-k
};

// The indexer of `layers` indexed layers. It runs whole on every
// tensor-parallel rank (its projections are replicated: vLLM's DeepSeek-V3.2
// Indexer uses ReplicatedLinear; the reference inference/model.py builds wq_b,
// wk and weights_proj as plain, unsharded Linear), so `tp` does not divide it.
IndexerStep indexer_step(const ModelArch& m, const BatchShape& batch, double layers, Dtype activations, bool training);

// Keys one query attends to in a DSA layer: the indexer's top-k of the
// `visible` keys it could see.
inline double dsa_attended_keys(double visible, int64_t topk) {
  return topk > 0 && visible > static_cast<double>(topk) ? static_cast<double>(topk) : visible;
}

}  // namespace sightline
