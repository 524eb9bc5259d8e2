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
// serving event, one priced latency step, or one slice of a training schedule.
// The default keeps a run within about 30 s natively; the API's ceiling, twice
// that, within the 60 s of CPU promised for any command at its defaults (about
// 3 us per unit, docs/limits.md, "Limits"). A scenario asks for more than the
// default in its own limits.max_work_units: a capacity search with a compare
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
