#pragma once
// A serving-simulation run as a sliced Job: the scenario's simulation, then
// the comparison variants (serving.compare), then the max-QPS search runs
// (serving.max_qps_search), each advanced a bounded number of events per slice.
#include <memory>
#include <vector>

#include "run/job.hpp"
#include "serve/capacity_search.hpp"
#include "serve/simulation.hpp"

namespace sightline::serve {

class ServingJob : public Job {
 public:
  explicit ServingJob(Scenario scenario);
  ~ServingJob() override;
  bool step(int64_t max_units) override;
  double progress() const override;
  json result() const override;
  int64_t units_done() const override { return events_; }  // events of every simulation run so far
  KeyMetrics key_metrics() const override;

 private:
  json quantization_block() const;
  json build_result() const;

  Scenario s_;
  std::unique_ptr<Simulation> main_;
  std::vector<std::unique_ptr<Simulation>> compares_;  // serving.compare variants, run in turn
  std::unique_ptr<CapacitySearch> search_;
  int64_t events_ = 0;
  int phase_ = 0;  // 0 main, 1 compare, 2 search, 3 done
  // The result is written once, when first asked for (the run is finished by then).
  mutable json result_;
  mutable KeyMetrics key_metrics_;
};

}  // namespace sightline::serve
