// A run's 80% interval widened to the end-to-end error its kind shows on the
// development rows (api/kind_error_band.hpp; issue 38, point 7): the envelope
// of the kernels' interval and the kind's band, central values untouched.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>

#include "api/kind_error_band.hpp"
#include "scenario/metric_catalogue.hpp"

using namespace sightline;
using api::combined_interval;

TEST_CASE("kind band: a time's true value is predicted x (1 + error), a rate's predicted / (1 + error); the wider side wins") {
  // Band of log(1 + error) [-0.1, 0.4]: up to 49% optimistic, 10% pessimistic.
  const IntervalSpan t = combined_interval(100, 95, 105, -0.1, 0.4, true);
  CHECK(t.low == doctest::Approx(100 * std::exp(-0.1)));
  CHECK(t.high == doctest::Approx(100 * std::exp(0.4)));
  const IntervalSpan r = combined_interval(100, 95, 105, -0.1, 0.4, false);
  CHECK(r.low == doctest::Approx(100 * std::exp(-0.4)));
  CHECK(r.high == doctest::Approx(100 * std::exp(0.1)));
  // The kernels' interval stands where it is the wider (a less known GPU or tier).
  const IntervalSpan wide = combined_interval(100, 50, 200, -0.1, 0.4, true);
  CHECK(wide.low == 50);
  CHECK(wide.high == 200);
  // A band that leaves out zero (every row optimistic) still holds the central value.
  const IntervalSpan one_sided = combined_interval(100, 99, 101, 0.1, 0.3, true);
  CHECK(one_sided.low == 99);
  CHECK(one_sided.high == doctest::Approx(100 * std::exp(0.3)));
  CHECK(one_sided.has_interval);
}

TEST_CASE("kind band: each figure it describes is a catalogue figure of that kind, times by their unit") {
  const std::set<std::string> time_units = {"ms", "s", "hours", "days", "GPU·h"};
  const std::pair<const char*, MetricKind> kinds[] = {
      {"serving_latency", MetricKind::kLatency}, {"serving_simulation", MetricKind::kServing}, {"training", MetricKind::kTraining}};
  for (const auto& entry : kinds) {
    const std::string kind = entry.first;  // a plain copy: the doctest macros capture it
    const MetricKind metric_kind = entry.second;
    const std::vector<std::string> ids = api::band_figures(kind);
    CHECK(ids.size() >= 4);
    for (const std::string& id : ids) {
      bool time_like = false;
      REQUIRE(api::band_describes(kind, id, time_like));
      if (id[0] == '/') {  // a headline figure by JSON pointer (serve/serving_job.cpp's interval figures)
        CHECK(id.rfind("/headline/", 0) == 0);
        continue;
      }
      const MetricInfo* m = find_metric(metric_kind, id);
      REQUIRE_MESSAGE(m != nullptr, kind << " " << id);
      CHECK_MESSAGE(time_like == (time_units.count(m->unit) > 0), kind << " " << id << " " << m->unit);
    }
  }
  bool time_like = false;
  // Not the run's speed: a share, a size, figures an SLO decides.
  CHECK_FALSE(api::band_describes("serving_simulation", "slo_attainment", time_like));
  CHECK_FALSE(api::band_describes("serving_simulation", "goodput_requests_per_s", time_like));
  CHECK_FALSE(api::band_describes("serving_simulation", "/max_qps/qps", time_like));
  CHECK_FALSE(api::band_describes("training", "memory_per_gpu_GiB", time_like));
  CHECK_FALSE(api::band_describes("training", "pp_bubble_pct", time_like));
  CHECK_FALSE(api::band_describes("deployment_search", "max_qps", time_like));
}

TEST_CASE("kind band: the shipped bands are found by kind, and widening moves no central value") {
  const api::KindErrorBand* training = api::kind_error_band("training");
  REQUIRE(training != nullptr);
  CHECK(training->rows >= 3);
  CHECK(training->log_low <= training->log_high);
  CHECK(training->level == doctest::Approx(0.8));
  CHECK(api::kind_error_band("serving_latency") != nullptr);
  CHECK(api::kind_error_band("serving_simulation") != nullptr);
  CHECK(api::kind_error_band("deployment_search") == nullptr);
  CHECK(api::kind_error_band_source().find("report-e2e") != std::string::npos);

  KeyMetric step = KeyMetric::number("step_time_ms", "Step time", "ms", 1000);
  step.has_interval = true;
  step.low = 999;
  step.high = 1001;
  KeyMetric memory = KeyMetric::number("memory_per_gpu_GiB", "Memory per GPU", "GiB", 60);  // no interval: a size
  KeyMetric mfu = KeyMetric::number("mfu_pct", "MFU", "%", 40);
  mfu.has_interval = true;
  mfu.low = 39.9;
  mfu.high = 40.1;
  // A throughput the bounds left where it is (set by the arrivals, with a
  // sampling interval of its own) is not the run's speed: it keeps its interval.
  KeyMetric fixed = KeyMetric::number("tokens_per_s", "Throughput", "tokens/s", 500);
  fixed.has_interval = true;
  fixed.low = 490;
  fixed.high = 510;
  KeyMetrics km = {step, memory, mfu, fixed};
  std::vector<api::WidenedFigure> widened;
  api::widen_to_kind_band(km, "training", {"step_time_ms", "mfu_pct"}, &widened);
  CHECK(km[3].low == 490);
  CHECK(km[3].high == 510);
  CHECK(km[0].value == 1000);
  CHECK(km[0].low == doctest::Approx(std::min(999.0, 1000 * std::exp(training->log_low))));
  CHECK(km[0].high == doctest::Approx(std::max(1001.0, 1000 * std::exp(training->log_high))));
  CHECK_FALSE(km[1].has_interval);
  CHECK(km[2].value == 40);
  CHECK(km[2].low == doctest::Approx(std::min(39.9, 40 * std::exp(-training->log_high))));
  REQUIRE(widened.size() == 2);
  CHECK(widened[0].id == "step_time_ms");
  CHECK(widened[0].kernel_low == 999);
  CHECK(widened[0].kernel_high == 1001);
  // The result's block names the kind, its rows and where the band comes from.
  const json block = api::interval_band_json("training", widened);
  CHECK(block["rows"] == training->rows);
  CHECK(block["kernel_intervals"]["step_time_ms"][0] == 999.0);
  CHECK(api::interval_band_json("deployment_search", {})["applied"] == false);
}

TEST_CASE("kind band: a figure the bounds move by under 0.5% is not the run's speed") {
  const double c = 1000, lo = 999, hi = 1002, far = 1030;
  CHECK_FALSE(api::moved_by_bounds(c, &lo, &hi));
  CHECK(api::moved_by_bounds(c, &lo, &far));
  CHECK(api::moved_by_bounds(c, nullptr, &far));
  CHECK_FALSE(api::moved_by_bounds(c, nullptr, nullptr));
}
