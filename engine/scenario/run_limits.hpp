#pragma once
// A scenario's top-level "limits" section: the work budget a run may use.
// One reader for every path that reads a scenario document: the run API takes
// the section (jobs/budgeted_job.hpp, take_run_limits, with the caller's
// ceiling) and removes it before read_scenario; any other path that reads a
// whole scenario (a preset listed for the page's parameter schema,
// explain-step's one step, a search's base) checks it here with the widest
// ceiling and leaves the budget to its own command (each has its own
// --max-work-units). Without this, a preset that asks for its budget (I5.5)
// was refused as an unknown key everywhere but `run`.
#include <cstdint>
#include <string>

#include "core/json_reader.hpp"

namespace sightline {

// Bounds on the work of one run, whatever its kind. A unit is, for a serving
// simulation, one event, 16 sequences stepped or 32 prompt tokens arrived
// (serve/sim_state.hpp, RunProgress::units_done: an event's CPU grows with the sequences
// its step walks and prices, an arrival's with its context's KV blocks); one
// priced latency sequence-step; one slice of a training schedule. Counted in
// events, a unit's CPU spread 58x between shipped presets (0.23 us for I3.3,
// 13 us for S.chat-offload at 1,000 sessions), so no budget in events both let
// the 900k-request head-to-head run with its interval and held 60 s at the
// dearest. Counted so, measured 2026-12-01 (docs/limits.md, "What a unit
// costs"): at most 0.65 us a unit on the dearest shipped presets sized to
// this default (S.chat-offload, I5.5, the MLPerf rows: 0.26-0.65 us), so the
// default of 4e7 units is at most about 26 s of CPU natively and the API's
// ceiling, twice the default, about 52 s; the 900k-request head-to-head's
// default run (figured 3.6e7, 3.7e7 with its estimate's error) runs. The
// ceiling is what the page lets a scenario ask for.
// A scenario may ask for more than the default in its own
// limits.max_work_units: I5.5 asks for the ceiling, as its capacity search
// with a compare variant, each answer replicated over a run 20x the
// search's, takes about half the default (2e7-2.4e7 units). The budget is a
// default, not a ceiling for everyone: the page, the fuzzer and the API keep
// kApiCeiling; the native CLI may raise a run's budget (its --max-work-units
// flag, or the scenario's own limit) up to kNativeCeiling. Memory is bounded
// for every caller by an estimate made before the run starts
// (jobs/run_estimate.hpp).
struct RunLimits {
  static constexpr int64_t kDefaultMaxWorkUnits = 40000000;
  static constexpr int64_t kApiCeiling = 2 * kDefaultMaxWorkUnits;
  static constexpr int64_t kNativeCeiling = 10000000000;
  static constexpr int64_t kMaxMaxWorkUnits = kApiCeiling;
  static constexpr int64_t kMaxMemoryBytes = int64_t{3} << 29;  // 1.5 GiB: the 2 GB promise with a margin
  int64_t max_work_units = kDefaultMaxWorkUnits;
  int64_t ceiling = kApiCeiling;  // the most max_work_units may be for this caller
  json to_json() const { return {{"max_work_units", max_work_units}}; }
};

// The budget a "limits" section (at `path`) asks for, `default_units` when it
// names none; a located error when it holds another key or a value outside
// [1, ceiling].
int64_t read_max_work_units(const json& section, const std::string& path, int64_t default_units, int64_t ceiling);

}  // namespace sightline
