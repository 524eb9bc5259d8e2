#pragma once
// How a probe's first requests stand for the run they start (the work
// estimate, jobs/run_estimate): a probe is the run's first requests simulated
// on their own, and where those differ from the run's average request in a
// way the run's own draws tell, the probe is run or read to match.
//   - probe_rate_qps: a Poisson or gamma run's first arrivals come at their
//     own rate; the probe runs at the run's average one;
//   - offline_length_scale: an offline batch's first requests are a sample of
//     its lengths; the probe's rate is scaled by the run's drawn lengths;
//   - requests_progressed: an offline batch's window counts a request in
//     progress by the share of its output delivered;
//   - prompt_tokens_arrived: a multi-turn probe's arrived turns' prompts,
//     beside the run's drawn ones.
#include <cstdint>
#include <optional>

#include "scenario/scenario.hpp"

namespace sightline {

namespace serve {
class Simulation;
}

// The arrival rate (req/s) at which a probe of the run's first `probed`
// requests runs so that its last arrival comes when the run's would at the
// run's average rate; nullopt to run it as drawn.
std::optional<double> probe_rate_qps(const Scenario& s, int64_t probed, int64_t requests);

// An offline batch's run's mean length weight over its probe's first
// `probed` requests' (1 when either is empty or the probe is the run).
double offline_length_scale(const Scenario& s, int64_t probed, int64_t requests);

// How far a simulation has come, in requests: a request done (or dropped)
// counts one, one in progress the share of its output delivered.
double requests_progressed(const serve::Simulation& sim);

// The prompt tokens of the requests (turns) a simulation has seen arrive:
// those that left Pending, but for a session's turns dropped unsent after an
// earlier turn was (RunProgress counts the same at each arrival).
int64_t prompt_tokens_arrived(const serve::Simulation& sim);

}  // namespace sightline
