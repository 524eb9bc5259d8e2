#include "comm/collectives.hpp"

namespace sightline {

CollectiveCost collective_cost(CollectiveKind kind, double message_bytes, int group_size,
                               const InterconnectSpec& link) {
  CollectiveCost c;
  c.algorithm = "ring";
  if (group_size <= 1 || message_bytes <= 0) return c;
  const double n = group_size;
  const double bw = link.bandwidth_per_gpu_GBps * 1e9;
  const double lat = link.latency_us * 1e-6;
  // Bus-bandwidth factor (bytes each rank sends per message byte) and number
  // of latency-bound ring steps, as in nccl-tests' PERFORMANCE.md.
  double factor = 1, steps = 1;
  switch (kind) {
    case CollectiveKind::AllReduce: factor = 2 * (n - 1) / n; steps = 2 * (n - 1); break;
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter: factor = (n - 1) / n; steps = n - 1; break;
    case CollectiveKind::AllToAll: factor = (n - 1) / n; steps = 1; c.algorithm = "pairwise"; break;
    case CollectiveKind::SendRecv: factor = 1; steps = 1; c.algorithm = "p2p"; break;
    case CollectiveKind::Broadcast: factor = 1; steps = n - 1; break;
  }
  c.time_s = steps * lat + factor * message_bytes / bw;
  c.algbw_GBps = message_bytes / c.time_s / 1e9;
  c.busbw_GBps = c.algbw_GBps * factor;
  return c;
}

}  // namespace sightline
