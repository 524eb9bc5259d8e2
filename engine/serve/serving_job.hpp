#pragma once
// A serving-simulation run as a sliced Job: the scenario's simulation, then
// the comparison variants (serving.compare), then the max-QPS search runs
// (serving.max_qps_search), each advanced a bounded number of events per slice.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "run/job.hpp"
#include "serve/capacity_search.hpp"
#include "serve/headline.hpp"
#include "serve/serving_key_metrics.hpp"
#include "serve/simulation.hpp"
#include "serve/steady_state.hpp"

namespace sightline::serve {

// One serving.compare variant against this run, typed: the variant's own
// figures and the ratios (this / variant) and speedups (variant / this) of
// every figure compared by name.
struct ComparedVariant {
  ServingMetrics metrics;
  SimDetails details;
  CompareFigures figures;
  std::map<std::string, std::string> undefined;  // "ratio/NAME" or "speedup/NAME": why it is null
};

// The finished run's figures, typed, computed once when the job finishes
// (ServingJob::finish). The key metrics, the compare ratios, the searches'
// outcomes and the written result are all read from here, never from the
// result's JSON.
struct ServingOutcome {
  SimDetails details;
  ServingMetrics metrics;
  std::optional<QuantizationFigures> quantization;  // quantized weights only
  std::optional<ServingHeadline> headline;          // none for an offline batch
  std::vector<ComparedVariant> compared;            // serving.compare, in order
  KeyMetrics key_metrics;                           // the scenario's choice, or the catalogue's default set
  std::vector<std::string> headline_ids;            // the result's headline cards
};

class ServingJob : public Job {
 public:
  explicit ServingJob(Scenario scenario);
  ~ServingJob() override;
  bool step(int64_t max_units) override;
  double progress() const override;
  json result() const override;
  // Work units of every simulation run so far (main, steady-state reruns,
  // compare variants, max-QPS search), each counted in its own units: a
  // speculative simulation's event is k + 1 units (it prices the draft's k
  // passes beside the target's), a compare baseline without speculation 1.
  int64_t units_done() const override { return units_ + (search_ ? search_->units_done() : 0); }
  void limit_work(int64_t units) override { work_limit_ = units; }  // the search gets what the runs before it left
  KeyMetrics key_metrics() const override;
  // Serving metric `id` of the catalogue, read from the finished run's typed figures.
  KeyMetric key_metric(const std::string& id) const;
  // The finished run's figures, typed, for the searches (never read back from result()).
  const ServingMetrics& metrics() const { return outcome().metrics; }
  // serving.steady_state: the last (longest) run's verdict and its requests; null without it.
  const SteadyStateReport* steady_state() const { return steady_runs_.empty() ? nullptr : &steady_runs_.back().report; }
  int64_t steady_state_requests() const { return steady_runs_.empty() ? 0 : steady_runs_.back().requests; }
  // What the batch limit and the KV pools decided in every main run so far
  // (the steady-state reruns included): serve/limit_facts.hpp.
  LimitFacts limit_facts() const;
  // serving.max_qps_search; null without it.
  const CapacitySearch* capacity_search() const { return search_.get(); }
  KeyMetrics interval_figures() const override;
  KeyMetrics headline_figures() const override;
  KeyMetric figure(const std::string& id) const override { return key_metric(id); }
  bool overloaded() const override;
  int64_t requests_run() const override;

 private:
  // The finished run's figures; an internal error before the run is finished.
  const ServingOutcome& outcome() const;
  // finish()'s steps: the typed figures, then the result written from them.
  void finish();
  ServingOutcome compute_outcome() const;
  std::optional<QuantizationFigures> quantization() const;
  ComparedVariant compare_variant(size_t ci, const ServingMetrics& metrics, const SimDetails& details) const;
  ServingFigures figures(const ServingOutcome& o) const;  // what the key metrics read
  json write_result(const ServingOutcome& o) const;
  std::string result_tier() const;
  json workload_block() const;
  json limit_exceeded_block(const ServingOutcome& o) const;
  json compare_block(size_t ci, const ComparedVariant& v) const;
  bool extend_steady_state_run();  // judges the finished main run; true when it starts a longer one
  json steady_state_block() const;

  struct SteadyStateRun {
    int64_t requests = 0;
    SteadyStateReport report;
  };
  Scenario s_;
  std::unique_ptr<Simulation> main_;
  std::vector<std::unique_ptr<Simulation>> compares_;  // serving.compare variants, run in turn
  std::unique_ptr<CapacitySearch> search_;
  std::vector<SteadyStateRun> steady_runs_;  // serving.steady_state: the main run and its longer reruns
  LimitFacts earlier_facts_;                 // the steady-state runs before the current main_
  int64_t units_ = 0;  // main, steady-state reruns and compare variants (the search counts its own)
  int phase_ = 0;  // 0 main, 1 compare, 2 search, 3 done
  int64_t work_limit_ = INT64_MAX;  // limit_work()
  // Set once, when the last simulation finishes (finish()): the typed figures
  // first, then the result written from them.
  std::optional<ServingOutcome> outcome_;
  json result_;
};

}  // namespace sightline::serve
