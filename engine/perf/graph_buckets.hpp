#pragma once
// CUDA-graph batch buckets: serving engines capture their decode graphs at a
// fixed list of batch sizes and pad a decode batch up to the next captured
// size (dummy sequences that cost GPU time); a batch above the largest
// captured size runs eagerly, kernel by kernel. The lists per stack are in
// presets/stacks/*.json ("cuda_graph_batch_sizes", with their sources).
#include <cstdint>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "model/operators.hpp"

namespace sightline {

struct GraphBuckets {
  // true: a graph for every batch size (captured on demand, gpt-fast style, or
  // no host model at all): nothing is padded and no batch runs eagerly.
  bool every_size = false;
  std::vector<int64_t> sizes;  // strictly increasing captured batch sizes
  json to_json() const;
};

// "every" or an array of strictly increasing positive batch sizes.
GraphBuckets read_graph_buckets(const json& value, const std::string& path);

// The captured size a decode batch of `batch` sequences replays: the smallest
// captured size >= batch; 0 when the batch is above every captured size (it
// runs eagerly). every_size: the batch itself.
int64_t graph_bucket(const GraphBuckets& buckets, int64_t batch);

// A uniform decode batch (every sequence has a KV cache and the same 1..16
// new tokens: decode or a speculative verify) is what engines replay as a
// graph; mixed and prefill batches are not padded here.
// `summary`: the batch's (summarize_batch), when the caller has it: a batch
// of one-token decodes only is known from it without a pass.
bool is_graph_decode_batch(const BatchShape& batch, const BatchSummary* summary = nullptr);

// The batch a stack's engine computes: a graph decode batch padded with
// dummy sequences (the same new tokens each over a one-token cache, as the
// engines' padded slots attend to almost nothing) up to its bucket. `padding`
// receives the number of dummies (0 when nothing is padded).
BatchShape graph_padded_batch(const BatchShape& batch, const GraphBuckets& buckets, bool decode_graphs,
                              int64_t* padding);
// The dummies alone (graph_padded_batch's `padding`), nothing copied.
int64_t graph_padding(const BatchShape& batch, const GraphBuckets& buckets, bool decode_graphs,
                      const BatchSummary* summary = nullptr);
// The same into `out` (reusing its storage: a simulator pads every step).
void graph_pad_into(const BatchShape& batch, const GraphBuckets& buckets, bool decode_graphs, BatchShape& out,
                    int64_t* padding);
// `batch` and `padding` dummies into `out` (graph_padding's count).
void pad_with_dummies(const BatchShape& batch, int64_t padding, BatchShape& out);

}  // namespace sightline
