#include "train/dp_overlap.hpp"

#include <algorithm>

namespace sightline {

std::vector<ReadyBucket> gradient_bucket_schedule(const std::vector<GradProducer>& producers, double bucket_bytes,
                                                  bool one_bucket) {
  std::vector<ReadyBucket> out;
  double total_s = 0, total_bytes = 0;
  for (const GradProducer& p : producers) {
    total_s += p.bwd_s;
    total_bytes += p.bytes;
  }
  if (total_bytes <= 0) return out;
  if (one_bucket || bucket_bytes <= 0 || bucket_bytes >= total_bytes) {
    out.push_back({total_s, total_bytes});
    return out;
  }
  double start = 0, filled = 0;
  for (const GradProducer& p : producers) {
    double done = 0;  // bytes of this producer already in buckets
    while (p.bytes - done >= bucket_bytes - filled) {
      const double take = bucket_bytes - filled;
      done += take;
      const double at = start + (p.bytes > 0 ? p.bwd_s * done / p.bytes : p.bwd_s);
      out.push_back({at, bucket_bytes});
      filled = 0;
    }
    filled += p.bytes - done;
    start += p.bwd_s;
  }
  if (filled > 0) out.push_back({total_s, filled});  // the last, partial bucket: ready when the backward ends
  return out;
}

double exposed_parameter_gather_s(const std::vector<ChunkGather>& chunks) {
  double stream_free = 0, exposed = 0;
  for (size_t c = 0; c < chunks.size(); ++c) {
    const ChunkGather& g = chunks[c];
    if (g.gather_s <= 0) continue;
    const double issue = c == 0 ? 0.0 : std::max(0.0, chunks[c - 1].first_forward_start_s);
    const double begin = std::max(stream_free, issue);
    stream_free = begin + g.gather_s;
    // Bucket k (of nb) arrives at begin + (k+1)·g/nb and is first used at
    // start + forward·k/nb; the forward runs its buckets in order, so it is
    // delayed by the latest of those arrivals relative to its use. That is
    // linear in k: the first or the last bucket sets it.
    const double nb = std::max(1, g.buckets);
    const double piece = g.gather_s / nb;
    const double first_late = begin + piece - g.first_forward_start_s;
    const double last_late = stream_free - (g.first_forward_start_s + g.forward_s * (nb - 1) / nb);
    exposed += std::max({0.0, first_late, last_late});
  }
  return exposed;
}

}  // namespace sightline
