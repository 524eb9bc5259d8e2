#include "jobs/short_run_verdict.hpp"

#include <memory>

#include "jobs/interval_job.hpp"
#include "scenario/simulation_spec.hpp"
#include "serve/headline.hpp"
#include "serve/simulation.hpp"

namespace sightline {

ShortRunsVerdict judge_short_runs(const Scenario& scenario, int64_t short_requests, int64_t max_events) {
  // The high bound first: its slower steps put its run nearest its service
  // rate, the likeliest to be overloaded (and to end the question at once).
  for (const CostBound bound : {CostBound::High, CostBound::Central, CostBound::Low}) {
    const std::unique_ptr<Scenario> run = short_bound_scenario(scenario, bound, short_requests);
    serve::Simulation sim(*run, serve::WorkloadOverride{}, false);
    while (!sim.finished() && sim.events_processed() < max_events) sim.run(max_events - sim.events_processed());
    if (!sim.finished()) return ShortRunsVerdict::Unknown;
    // The job's judge (serve/serving_job: the main run's headline). A bound
    // run without a steady window lacks the headline figures the full run
    // has (IntervalJob::judge_paired_runs; the full run, at least three short
    // runs long, is taken to have them); the central one's figures are not read.
    const serve::SimulationSpec& sp = *run->serving->simulation;
    const serve::ServingHeadline h = serve::serving_headline(sim.outcome_view(), sp.slo, sp.workload);
    if (h.overloaded || (bound != CostBound::Central && !h.judged)) return ShortRunsVerdict::FallBack;
  }
  return ShortRunsVerdict::Paired;
}

}  // namespace sightline
