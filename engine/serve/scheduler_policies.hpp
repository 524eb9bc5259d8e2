#pragma once
// The batch scheduler's policies, one per file, made by the registry in
// batch_scheduler.cpp (serving.scheduler.policy): iteration-level batching
// (continuous, with or without chunked prefill) in iteration_scheduler.cpp,
// request-level (static) batching in static_scheduler.cpp. Internal to
// serve/: everything else makes a scheduler by name (make_batch_scheduler).
#include <memory>
#include <vector>

#include "serve/batch_scheduler.hpp"

namespace sightline::serve {

std::unique_ptr<BatchScheduler> make_iteration_scheduler(bool chunked, const SimulationSpec& spec,
                                                         std::vector<SimRequest>& requests, KvManager& kv,
                                                         MetricsRecorder& rec, SchedulerHost& host);
std::unique_ptr<BatchScheduler> make_static_scheduler(const SimulationSpec& spec, std::vector<SimRequest>& requests,
                                                      KvManager& kv, MetricsRecorder& rec, SchedulerHost& host);

}  // namespace sightline::serve
