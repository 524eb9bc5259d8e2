#pragma once
// One work budget for every CLI command that simulates, searches, sweeps or
// fits (issue 34, "bounds on every command"). A command estimates its work
// before doing any: from the per-run estimate `run` uses (jobs/run_estimate:
// estimate_work, its low end) summed over the runs, rows or candidates it
// will make, or from the size of the files it will fit. Past its budget it is
// refused with a located limit_exceeded error that gives the estimate, the
// budget and the flag that raises it (--max-work-units, the name `run`,
// `batch` and `fit` use). tests/cli/command_budgets.test.mjs fails when a
// command that runs simulations does not use it.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/flags.hpp"
#include "scenario/run_limits.hpp"

namespace sightline::cli {

using json = nlohmann::json;

class CommandBudget {
 public:
  // A unit is run's (scenario/run_limits.hpp: a serving event, 16 sequences
  // stepped or 32 prompt tokens arrived; a priced latency sequence-step).
  // Twice run's default, as before units counted per sequence (when it was
  // 20M events): 80M units keep a command within about 60 s of CPU natively
  // (docs/cli.md, "Work budgets"), 0.75 us a unit, as `fit`'s 12M replay
  // events do. The commands' units for work that is not a simulation (fits,
  // reports, plans) are figured at that 0.75 us.
  static constexpr int64_t kDefaultWorkUnits = 2 * RunLimits::kDefaultMaxWorkUnits;

  // `command` names the command in the message. A command whose shipped
  // maintainer run needs more than kDefaultWorkUnits has its own default, and
  // `default_why` says what it is sized for.
  explicit CommandBudget(std::string command, int64_t default_units = kDefaultWorkUnits,
                         std::string default_why = "about 60 s of CPU natively");

  // Registers --max-work-units N (1 to RunLimits::kNativeCeiling) on the command's flags.
  Flags& flag(Flags& flags);
  int64_t max_work_units() const { return flag_units_ > 0 ? flag_units_ : default_units_; }
  // Whether --max-work-units was given (`batch` then gives each line that budget too).
  bool given() const { return flag_units_ > 0; }

  // Adds one part's estimate (`what`: "candidate 3", "row E.x"). Throws the
  // located limit_exceeded error as soon as the sum passes the budget, so
  // that estimating many parts stops early and a refusal stays quick.
  void add(double units, const std::string& what);
  // The same for the files a command will read and fit, from their sizes
  // (before any is opened) at the command's measured `units_per_byte`. A file
  // over the reader's 64 MiB cap gets the reader's own error first.
  void add_files(const std::vector<std::string>& paths, double units_per_byte, const std::string& what);
  double total_units() const { return total_units_; }
  // Starts the sum again, for a command that estimates in stages: a later
  // part once earlier work has said what it is (check-capacity's long runs,
  // at the rate its searches answered). `stage` ("after the searches, before
  // any long run") replaces "before starting" in the message.
  void restart(std::string stage);

 private:
  [[noreturn]] void refuse(const std::string& what) const;
  std::string command_, default_why_;
  std::string stage_ = "before starting";
  int64_t default_units_;
  int64_t flag_units_ = 0;  // --max-work-units as given; 0: not given (the flag's least is 1)
  double total_units_ = 0;
  int64_t parts_ = 0;
};

// The per-run estimate `run` uses for a scenario document: the least work
// units its run makes (every simulation: the central run and, unless
// central_only, both bounds; a max-QPS search's fewest runs), at least 1. A
// training run counts kUnitsPerTrainingRun (jobs/run_estimate has no figure
// for it). A scenario that does not read counts 1: its run fails on its own
// located error at once.
double run_work_units(const json& scenario, bool central_only);
// The figure `run` refuses on for a serving simulation (jobs/run_estimate's
// probe_work_figure: its first requests simulated on their own, about 0.1 s;
// within 25% of the units the runs made for the shipped presets), at least
// run_work_units. Other scenarios: run_work_units.
double run_work_figure(const json& scenario, bool central_only);
// A training run (its compare variants and scaling points included): 8,000
// units, about 6 ms of CPU (`report-training`'s 13 runs took 0.08 s of CPU,
// 2026-11-28, at 0.75 us per unit).
inline constexpr double kUnitsPerTrainingRun = 8000;
// Fitting kernel measurements: 10 units per byte of CSV (`calibrate` on
// Vidur's A100 profiles, 6.02 MB, took 43.3 s of CPU, 2026-11-28: 7.2 us a
// byte, at 0.75 us per unit rounded up).
inline constexpr double kFitUnitsPerByte = 10;

// Bytes of the regular files at `paths` (a directory: every regular file
// under it), read with the file system's sizes before any file is opened.
double bytes_of(const std::vector<std::string>& paths);

}  // namespace sightline::cli
