#include "perf/graph_buckets.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace sightline {

namespace {
// Largest batch a captured list may name (the scenario bounds on sequences are lower).
constexpr double kMaxCapturedBatch = 1 << 20;
// Tokens per sequence up to which a uniform batch is a (speculative) decode.
constexpr int64_t kGraphDecodeMaxTokensPerSeq = 16;
}  // namespace

json GraphBuckets::to_json() const {
  if (every_size) return "every";
  return json(sizes);
}

GraphBuckets read_graph_buckets(const json& value, const std::string& path) {
  GraphBuckets g;
  if (value.is_string() && value.get<std::string>() == "every") {
    g.every_size = true;
    return g;
  }
  if (!value.is_array())
    fail(error_code::kType, path, "expected \"every\" or an array of captured batch sizes");
  if (value.empty()) fail(error_code::kConstraint, path, "name at least one captured batch size (or \"every\")");
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string at = pointer_append(path, i);
    const double v = value[i].is_number() ? value[i].get<double>() : -1;
    if (!(v >= 1 && v <= kMaxCapturedBatch) || v != static_cast<double>(static_cast<int64_t>(v)))
      fail(error_code::kInvalidValue, at, "a captured batch size is a whole number from 1 to 1048576");
    const int64_t n = static_cast<int64_t>(v);
    if (!g.sizes.empty() && n <= g.sizes.back())
      fail(error_code::kConstraint, at, "captured batch sizes must be strictly increasing");
    g.sizes.push_back(n);
  }
  return g;
}

int64_t graph_bucket(const GraphBuckets& buckets, int64_t batch) {
  if (buckets.every_size) return batch;
  const auto it = std::lower_bound(buckets.sizes.begin(), buckets.sizes.end(), batch);
  return it == buckets.sizes.end() ? 0 : *it;
}

bool is_graph_decode_batch(const BatchShape& batch, const BatchSummary* summary) {
  if (batch.seqs.empty()) return false;
  if (summary && summary->decodes == static_cast<int64_t>(batch.seqs.size())) return true;  // all of 1 new token
  const int64_t q = batch.seqs.front().new_tokens;
  if (q < 1 || q > kGraphDecodeMaxTokensPerSeq) return false;
  for (const SeqChunk& s : batch.seqs)
    if (s.cached_tokens <= 0 || s.new_tokens != q) return false;
  return true;
}

BatchShape graph_padded_batch(const BatchShape& batch, const GraphBuckets& buckets, bool decode_graphs,
                              int64_t* padding) {
  BatchShape padded;
  graph_pad_into(batch, buckets, decode_graphs, padded, padding);
  return padded;
}

int64_t graph_padding(const BatchShape& batch, const GraphBuckets& buckets, bool decode_graphs,
                      const BatchSummary* summary) {
  if (!decode_graphs || buckets.every_size || !is_graph_decode_batch(batch, summary)) return 0;
  const int64_t n = static_cast<int64_t>(batch.seqs.size());
  const int64_t bucket = graph_bucket(buckets, n);
  return bucket > n ? bucket - n : 0;  // 0: captured exactly, or eager above the largest size
}

void graph_pad_into(const BatchShape& batch, const GraphBuckets& buckets, bool decode_graphs, BatchShape& out,
                    int64_t* padding) {
  *padding = graph_padding(batch, buckets, decode_graphs);
  pad_with_dummies(batch, *padding, out);
}

void pad_with_dummies(const BatchShape& batch, int64_t padding, BatchShape& out) {
  out.seqs.assign(batch.seqs.begin(), batch.seqs.end());
  if (padding <= 0) return;
  // Appended one by one into storage the caller's scratch already has (a
  // simulator pads every step): resize's general fill was 0.9% of a 1M run.
  out.seqs.reserve(batch.seqs.size() + static_cast<size_t>(padding));
  const SeqChunk dummy{batch.seqs.front().new_tokens, 1};
  for (int64_t i = 0; i < padding; ++i) out.seqs.push_back(dummy);
}

}  // namespace sightline
