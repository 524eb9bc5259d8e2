#pragma once
// The time formula shared by the collective model and its fitter.
#include "comm/comm_calibration.hpp"

namespace sightline {

// Time of one pipelined collective phase (see comm_calibration.hpp).
// `ranks` splits the message into per-rank pieces (1 for NVLS and point to
// point); `group` is the number of GPUs taking part, which selects eta.
inline double pipelined_time_s(const AlgorithmParams& p, double steps, double factor, double bytes, int ranks,
                               double link_bandwidth_Bps, int group) {
  const double per_rank = bytes / (ranks > 0 ? ranks : 1);
  const double chunk = per_rank < p.chunk_bytes ? per_rank : p.chunk_bytes;
  return (p.base_latency_us + steps * p.latency_us) * 1e-6 +
         (steps * chunk + factor * bytes) / (link_bandwidth_Bps * p.eta_for(group));
}

}  // namespace sightline
