#pragma once
// Collective communication time on an interconnect: a ring model of
// latency + volume / bandwidth. The cost-model issue replaces this with
// calibrated curves and more algorithms.
#include "hw/hardware.hpp"
#include "model/operators.hpp"

namespace sightline {

struct CollectiveCost {
  double time_s = 0;
  double algbw_GBps = 0;   // message bytes / time
  double busbw_GBps = 0;   // nccl-tests convention
  std::string algorithm;
};

CollectiveCost collective_cost(CollectiveKind kind, double message_bytes, int group_size,
                               const InterconnectSpec& link);

}  // namespace sightline
