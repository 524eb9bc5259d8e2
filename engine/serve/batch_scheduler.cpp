// The batch scheduler's base and its registry of policies (one per file:
// serve/scheduler_policies.hpp).
#include "serve/batch_scheduler.hpp"

#include "scenario/policy_registry.hpp"
#include "serve/scheduler_policies.hpp"

namespace sightline::serve {

BatchScheduler::BatchScheduler(const SimulationSpec& spec, std::vector<SimRequest>& requests, KvManager& kv,
                               MetricsRecorder& rec, SchedulerHost& host)
    : spec_(spec), reqs_(requests), kv_(kv), rec_(rec), host_(host) {
  spec_k_ = spec.speculative.method != SpecMethod::None ? spec.speculative.k : 0;
}

namespace {

template <bool Chunked>
std::unique_ptr<BatchScheduler> make_iteration(const SimulationSpec& spec, std::vector<SimRequest>& requests,
                                               KvManager& kv, MetricsRecorder& rec, SchedulerHost& host) {
  return make_iteration_scheduler(Chunked, spec, requests, kv, rec, host);
}

}  // namespace

const std::vector<BatchSchedulerFactory>& batch_scheduler_factories() {
  static const std::vector<BatchSchedulerFactory> r = {
      {"continuous", make_iteration<false>},
      {"chunked_prefill", make_iteration<true>},
      {"static", make_static_scheduler},
  };
  return r;
}

std::unique_ptr<BatchScheduler> make_batch_scheduler(const std::string& name, const std::string& path,
                                                     const SimulationSpec& spec, std::vector<SimRequest>& requests,
                                                     KvManager& kv, MetricsRecorder& rec, SchedulerHost& host) {
  return find_by_name(batch_scheduler_factories(), name, path, "scheduler policy").make(spec, requests, kv, rec, host);
}

}  // namespace sightline::serve
