#pragma once
// The training estimator as a sliced job: the scenario's configuration, then
// each compare variant, then each point of the scaling curve.
#include <memory>
#include <vector>

#include "run/job.hpp"
#include "train/estimator.hpp"

namespace sightline {

class TrainingJob : public Job {
 public:
  explicit TrainingJob(Scenario scenario);
  bool step(int64_t max_units) override;
  double progress() const override;
  json result() const override;
  int64_t units_done() const override { return done_units_; }
  KeyMetrics key_metrics() const override;
  std::vector<KeyMetrics> variant_key_metrics() const override;
  KeyMetrics headline_figures() const override;

 private:
  TrainingResult typed_result() const;  // valid once step() returned true

  Scenario s_;
  std::vector<std::unique_ptr<TrainRun>> runs_;  // base, compare variants, scaling points
  int64_t total_units_ = 0;
  int64_t done_units_ = 0;
};

}  // namespace sightline
