#pragma once
// A serving-simulation run as a sliced Job: the scenario's simulation, then
// the comparison variant (serving.compare), then the max-QPS search runs
// (serving.max_qps_search), each advanced a bounded number of events per slice.
#include <memory>
#include <vector>

#include "run/job.hpp"
#include "serve/simulation.hpp"

namespace sightline::serve {

class ServingJob : public Job {
 public:
  explicit ServingJob(Scenario scenario);
  ~ServingJob() override;
  bool step(int64_t max_units) override;
  double progress() const override;
  json result() const override;

 private:
  struct SearchRun {
    double qps = 0;
    double attainment = 0;
    bool completed_all = false;
    bool ok = false;
  };
  void next_search_run();
  json quantization_block() const;

  Scenario s_;
  std::unique_ptr<Simulation> main_;
  std::unique_ptr<Simulation> compare_;
  std::unique_ptr<Simulation> search_;
  int phase_ = 0;  // 0 main, 1 compare, 2 search, 3 done
  // search state
  std::vector<SearchRun> runs_;
  double lo_ = 0, hi_ = 0, rate_ = 0;
  bool have_lo_ = false, have_hi_ = false;
  int bracket_steps_ = 0, bisect_steps_ = 0;
  std::string search_note_;
};

}  // namespace sightline::serve
