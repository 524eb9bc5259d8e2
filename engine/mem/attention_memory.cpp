#include "mem/attention_memory.hpp"

namespace sightline {

double attention_saved_bytes(AttentionImpl impl, int64_t batch, int64_t seq, int heads, int64_t head_dim,
                             double act_bytes) {
  const double tokens = static_cast<double>(batch) * static_cast<double>(seq);
  // Output O (tokens × heads × head_dim) plus one fp32 log-sum-exp per row and head.
  double bytes = tokens * heads * head_dim * act_bytes + tokens * heads * 4.0;
  if (impl == AttentionImpl::Standard) {
    // Scores S and softmax probabilities P, heads × seq × seq per sequence.
    bytes += 2.0 * static_cast<double>(batch) * heads * static_cast<double>(seq) * static_cast<double>(seq) * act_bytes;
  }
  return bytes;
}

}  // namespace sightline
