#include "jobs/budgeted_job.hpp"

#include <algorithm>
#include <cstdio>

#include "core/error.hpp"
#include "core/json_reader.hpp"

namespace sightline {

RunLimits take_run_limits(json& doc, int64_t default_units, int64_t ceiling) {
  RunLimits limits;
  limits.ceiling = ceiling;
  limits.max_work_units = std::min(default_units, ceiling);
  if (!doc.is_object() || !doc.contains("limits")) return limits;
  limits.max_work_units = read_max_work_units(doc["limits"], "/limits", limits.max_work_units, ceiling);
  doc.erase("limits");
  return limits;
}

BudgetedJob::BudgetedJob(std::unique_ptr<Job> inner, int64_t max_work_units)
    : inner_(std::move(inner)), max_work_units_(max_work_units) {
  inner_->limit_work(max_work_units_);
}

bool BudgetedJob::step(int64_t max_units) {
  if (finished_ || stopped_) return true;
  const int64_t left = max_work_units_ - inner_->units_done();
  if (left > 0) finished_ = inner_->step(std::min(max_units, left));
  if (!finished_ && inner_->units_done() >= max_work_units_) {
    stopped_ = true;
    progress_at_stop_ = inner_->progress();
  }
  return finished_ || stopped_;
}

double BudgetedJob::progress() const { return stopped_ ? 1.0 : inner_->progress(); }

json BudgetedJob::result() const {
  check_within_budget();
  return inner_->result();
}

KeyMetrics BudgetedJob::key_metrics() const {
  check_within_budget();
  return inner_->key_metrics();
}

KeyMetric BudgetedJob::figure(const std::string& id) const {
  check_within_budget();
  return inner_->figure(id);
}

std::vector<KeyMetrics> BudgetedJob::variant_key_metrics() const {
  check_within_budget();
  return inner_->variant_key_metrics();
}

void BudgetedJob::check_within_budget() const {
  if (stopped_) fail_over_budget();
}

void BudgetedJob::fail_over_budget() const {
  // The progress is of the simulations planned when the budget ran out: a
  // later one (a bound's fallback to full length, a search's next rate, a
  // steady-state rerun) is not in it, so it is no share of the work left
  // (I2.3 on 144 replicas read "99.7% of the run" at 3e7 units and needed 3.7-4.0e7).
  char what[320];
  std::snprintf(what, sizeof what,
                "%lld work units done, %.1f%% through the simulations planned so far (the central estimate and, "
                "unless central-only, both interval bounds; a bound run's fallback to full length, a search's next "
                "rate or a steady-state rerun may add more)",
                static_cast<long long>(inner_->units_done()), 100.0 * progress_at_stop_);
  fail(error_code::kLimitExceeded, "/limits/max_work_units",
       "the run reached its work budget (limits.max_work_units = " + std::to_string(max_work_units_) + ") after " +
           what + ". Raise /limits/max_work_units (at most " + std::to_string(RunLimits::kApiCeiling) + " in the page and the API, " +
           std::to_string(RunLimits::kNativeCeiling) + " with the native CLI) or make the scenario smaller (fewer requests, a shorter output, fewer micro-batches).");
}

}  // namespace sightline
