#pragma once
// The rest of a multi-turn run, projected from a probe of the whole run that
// stopped at its event cap (jobs/run_estimate). A multi-turn run's events
// follow its simulated length, not its turns: a turn comes back a think time
// after the last one ended, so the GPU steps for the few sessions not
// thinking; S.chat-offload's 107 sessions made 188 events a turn, its 359
// sessions 60 (docs/limits.md). A figure per turn from the run's first events
// cannot hold at both sizes; this one replays the turns the probe has not
// finished on the drawn think times, each served at the step time the probe
// measured at its concurrency, and counts the steps those turns share.
#include <cstddef>

namespace sightline::serve {
class Simulation;
}

namespace sightline {

// The events the whole run makes: those `sim` (the run itself, stopped
// before its end) has handled, plus the projection of its unfinished turns.
// 0 when the probe has fewer than `least_turns` turns done to measure a step
// on (then the caller's figure per turn stands).
double project_session_events(const serve::Simulation& sim, size_t least_turns);

}  // namespace sightline
