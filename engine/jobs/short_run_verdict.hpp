#pragma once
// Whether an interval job's paired short runs (jobs/interval_job.hpp) will
// fall back to full bound runs, asked of the short runs themselves: the first
// n requests of the workload at their own rate, at each cost bound, simulated
// up to a cap of events and judged as the job judges them (overloaded, or too
// short for a steady window). The work estimate's probe is another run (the
// run's first requests at the run's average rate, of another length): judged
// on it, I2.2 at 2,000 requests (short runs of 400 overloaded, the probe not)
// was figured 55% under the work its full bound runs took, and I2.5 at 20,000
// (the probe overloaded, the short runs not) 177% over.
#include <cstdint>

#include "scenario/scenario.hpp"

namespace sightline {

enum class ShortRunsVerdict {
  Unknown,   // a short run did not finish within the cap
  Paired,    // every short run judged, none overloaded: the paired estimate stands
  FallBack,  // a short run overloaded or too short to judge: both bounds run in full
};

// The verdict on `scenario`'s paired short runs of `short_requests` each, each
// simulated to at most `max_events` events.
ShortRunsVerdict judge_short_runs(const Scenario& scenario, int64_t short_requests, int64_t max_events);

}  // namespace sightline
