#include "cli/command_budget.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "cli/cli_common.hpp"
#include "jobs/budgeted_job.hpp"
#include "jobs/run_estimate.hpp"
#include "core/error.hpp"

namespace sightline::cli {

namespace {

std::string units_text(double units) {
  char b[64];
  std::snprintf(b, sizeof b, "%.4g", units);
  return b;
}

}  // namespace

CommandBudget::CommandBudget(std::string command, int64_t default_units, std::string default_why)
    : command_(std::move(command)), default_why_(std::move(default_why)), default_units_(default_units) {}

Flags& CommandBudget::flag(Flags& flags) {
  return flags.integer("--max-work-units", &flag_units_, 1, RunLimits::kNativeCeiling);
}

void CommandBudget::add(double units, const std::string& what) {
  total_units_ += std::max(0.0, units);
  ++parts_;
  if (total_units_ > static_cast<double>(max_work_units())) refuse(what);
}

void CommandBudget::add_files(const std::vector<std::string>& paths, double units_per_byte, const std::string& what) {
  // A file over the reader's cap gets the reader's own error, before the sum's.
  for (const std::string& p : paths)
    if (bytes_of({p}) > static_cast<double>(kMaxInputFileBytes)) fail_input_file_too_big(p);
  const double bytes = bytes_of(paths);
  add(bytes * units_per_byte, what + " (" + units_text(bytes) + " bytes at " + units_text(units_per_byte) + " units each)");
}

void CommandBudget::restart(std::string stage) {
  total_units_ = 0;
  parts_ = 0;
  stage_ = std::move(stage);
}

void CommandBudget::refuse(const std::string& what) const {
  fail(error_code::kLimitExceeded, "",
       command_ + ": the work needs at least " + units_text(total_units_) + " work units (estimated " + stage_ + ", " +
           (parts_ > 1 ? "stopped at " + std::to_string(parts_) + " parts, the last " : std::string("from ")) + what +
           "), over the command's budget of " + std::to_string(max_work_units()) + " (its default, " +
           std::to_string(default_units_) + ", is " + default_why_ +
           "); refused " + stage_ + ". Raise it with --max-work-units N (at most " +
           std::to_string(RunLimits::kNativeCeiling) + ") or make the input smaller.");
}

double run_work_units(const json& scenario, bool central_only) {
  try {
    json doc = scenario;
    const RunLimits limits = take_run_limits(doc, RunLimits::kNativeCeiling, RunLimits::kNativeCeiling);
    const Scenario s = read_scenario(doc);
    if (!s.serving) return kUnitsPerTrainingRun;
    const WorkRange w = estimate_work(s, central_only ? IntervalMode::CentralOnly : IntervalMode::Bounds, limits);
    return std::max(1.0, w.units_low);
  } catch (const SightlineError&) {
    return 1;  // the run reports the scenario's own error, in milliseconds
  }
}

double run_work_figure(const json& scenario, bool central_only) {
  const double least = run_work_units(scenario, central_only);
  try {
    json doc = scenario;
    take_run_limits(doc, RunLimits::kNativeCeiling, RunLimits::kNativeCeiling);
    const Scenario s = read_scenario(doc);
    if (!s.serving || !s.serving->simulation) return least;
    const IntervalMode mode = central_only ? IntervalMode::CentralOnly : IntervalMode::Bounds;
    return std::max(least, probe_work_figure(s, estimate_run(s, mode)).units);
  } catch (const SightlineError&) {
    return least;  // the run reports the scenario's own error
  }
}

double bytes_of(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  double bytes = 0;
  std::error_code ec;
  // A file that cannot be sized counts nothing here: reading it fails with its own io_error.
  const auto size_of = [](const fs::path& f) {
    std::error_code size_ec;
    const std::uintmax_t n = fs::file_size(f, size_ec);
    return size_ec ? 0.0 : static_cast<double>(n);
  };
  for (const std::string& p : paths) {
    if (p == "-") continue;  // standard input: capped as it is read (cli_common's reader)
    if (fs::is_directory(p, ec)) {
      for (fs::recursive_directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec)) bytes += size_of(it->path());
    } else if (fs::is_regular_file(p, ec)) {
      bytes += size_of(p);
    }
  }
  return bytes;
}

}  // namespace sightline::cli
