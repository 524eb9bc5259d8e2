#pragma once
// A scenario's top-level "limits" section: the work budget a run may use.
// One reader for every path that reads a scenario document: the run API takes
// the section (api/budgeted_job.hpp, take_run_limits, with the caller's
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

// Bounds on the work of one run, whatever its kind. A unit is one simulated
// serving event, one priced latency sequence-step, or one slice of a training
// schedule. What a unit costs is no single figure: a serving event steps every
// sequence of its batch. Measured 2026-12-01 on this project's shared 2-core
// x86-64 VM (load average 5-11, CPU of the run; docs/speed.md, "Ninth pass"):
// 0.23-2.6 us an event over the shipped scenario presets sized to this default
// (bench_run_estimate --units 10000000), 7.1-7.4 us for S.chat-offload, 0.47 us
// for the 1M-request head-to-head, 3.2-5.0 us for the MLPerf rows of
// presets/validation; an output token 39-55 ns wherever counted. So 1e7 units
// are 2-26 s of CPU on most shipped presets and up to 74 s at the dearest unit
// measured, past the 60 s promised for any command at its defaults
// (docs/limits.md). No budget in events both lets the 900k-request head-to-head
// run with its interval (1.1e7 events, 6 s) and refuses every run over 60 s:
// that needs units that count the work per sequence (not done). The API's
// ceiling, twice the default, is what the page lets a scenario ask for. A
// scenario asks for more than the default in its own
// limits.max_work_units: a capacity search with a compare
// variant, whose answer is replicated over a run 20x the search's (I5.5: about
// 1.65e7 units). The budget is a default, not a ceiling for everyone: the page,
// the fuzzer and the API keep kApiCeiling; the native CLI may raise a run's
// budget (its --max-work-units flag, or the scenario's own limit) up to
// kNativeCeiling. Memory is bounded for every caller by an estimate made
// before the run starts (api/run_estimate.hpp).
struct RunLimits {
  static constexpr int64_t kDefaultMaxWorkUnits = 10000000;
  static constexpr int64_t kApiCeiling = 20000000;
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
