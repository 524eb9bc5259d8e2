// A run's 80% interval widened to the end-to-end error its kind shows on the
// development rows (jobs/kind_error_band.hpp; issue 38, point 7): the envelope
// of the kernels' interval and the kind's band, central values untouched.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "jobs/kind_error_band.hpp"
#include "scenario/metric_catalogue.hpp"

using namespace sightline;
using jobs::combined_interval;

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

// The speed column of the metric tables (MetricInfo::speed) decides which
// figures the band widens. A time or a rate the column leaves out must be
// named here with the reason the run's end-to-end speed does not set it, so a
// new speed figure without its flag fails (and a new time must be judged).
TEST_CASE("speed column: every time and rate of a banded kind is flagged, or named here as not the run's speed") {
  // Units as the catalogue spells them: a new unit of time or rate belongs here too.
  const std::set<std::string> time_units = {"ms", "us", "s", "hours", "days", "GPU·h"};
  const std::set<std::string> rate_units = {"tokens/s", "tokens/s/GPU", "req/s", "seq/s", "TFLOP/s"};
  const std::set<std::string> not_speed = {
      // Floors, spreads and worst cases: not proportional to the run's speed.
      "latency/prefill_compute_ms", "latency/decode_weight_read_ms", "serving/ttft_stddev_ms",
      "serving/itl_stddev_ms", "serving/tpot_stddev_ms", "serving/itl_max_ms",
      // Waits and spans the arrivals, sessions, transfers or a side run set.
      "serving/queueing_p99_ms", "serving/session_ttft_first_mean_ms", "serving/session_ttft_returning_mean_ms",
      "serving/session_ttft_returning_p99_ms", "serving/session_duration_mean_s", "serving/offload_exposed_reload_s",
      "serving/kv_transfer_mean_ms", "serving/kv_transfer_p99_ms", "serving/duration_s",
      "serving/quant_decode_step_ms", "serving/quant_decode_step_unquantized_ms",
      // Figures an SLO decides (the bound runs carry the kernels' error through the SLO).
      "serving/goodput_requests_per_s", "serving/steady_goodput_requests_per_s", "serving/max_qps",
      // Parts of a training step, and one kernel family's speed.
      "training/attention_fwd_bwd_ms", "training/attention_block_fwd_bwd_ms", "training/mlp_fwd_bwd_ms",
      "training/layer_fwd_bwd_ms", "training/layer_iteration_ms", "training/dp_allreduce_one_shot_ms",
      "training/dp_allreduce_intra_node_ms", "training/dp_grad_sync_ms", "training/dp_grad_sync_exposed_ms",
      "training/tp_all_gather_ms", "training/tp_all_gather_call_us", "training/tp_comm_ms",
      "training/ep_all_to_all_ms", "training/ep_all_to_all_call_us", "training/cp_ring_ms",
      "training/tp_comm_exposed_ms", "training/cp_ring_exposed_ms", "training/pp_makespan_ms",
      "training/pp_p2p_transfer_us", "training/mlp_achieved_tflops"};
  std::map<std::string, int> flagged;
  for (const MetricInfo& m : metric_catalogue()) {
    const std::string key = std::string(metric_kind_name(m.kind)) + "/" + m.id, unit = m.unit;
    const bool time = time_units.count(unit) > 0, rate = rate_units.count(unit) > 0;
    const bool searched = m.kind == MetricKind::kDeploymentSearch || m.kind == MetricKind::kTrainingSearch;
    if (m.speed == EndToEndSpeed::kNone) {
      CHECK_MESSAGE((searched || !(time || rate) || not_speed.count(key) > 0),
                    key << " (" << unit << ") has no speed flag: speed_time or speed_rate in its table, or name it here");
      continue;
    }
    ++flagged[metric_kind_name(m.kind)];
    CHECK_MESSAGE(not_speed.count(key) == 0, key);
    CHECK_MESSAGE((m.speed == EndToEndSpeed::kTime) == time, key << " " << unit);  // a time grows when the run is slower
  }
  // The searches have no measured band (their rankings keep the kernels'
  // intervals); each banded kind flags its speed figures.
  CHECK(flagged.count("deployment_search") == 0);
  CHECK(flagged.count("training_search") == 0);
  CHECK(flagged["latency"] >= 4);
  CHECK(flagged["serving"] >= 4);
  CHECK(flagged["training"] >= 4);
}

TEST_CASE("kind band: a figure is described by its catalogue row, by id or by the pointer the result writes it at") {
  bool time_like = false;
  CHECK(jobs::band_describes("serving_latency", "ttft_ms", time_like));
  CHECK(time_like);
  CHECK(jobs::band_describes("training", "tokens_per_s_per_gpu", time_like));
  CHECK_FALSE(time_like);
  // The steady window's throughput, an interval figure by its JSON pointer (serve/serving_job.cpp).
  CHECK(jobs::band_describes("serving_simulation", "/headline/throughput_qps", time_like));
  CHECK_FALSE(time_like);
  // Not the run's speed: a share, a size, figures an SLO decides.
  CHECK_FALSE(jobs::band_describes("serving_simulation", "slo_attainment", time_like));
  CHECK_FALSE(jobs::band_describes("serving_simulation", "goodput_requests_per_s", time_like));
  CHECK_FALSE(jobs::band_describes("serving_simulation", "/headline/goodput_qps", time_like));
  CHECK_FALSE(jobs::band_describes("serving_simulation", "/max_qps/qps", time_like));
  CHECK_FALSE(jobs::band_describes("training", "memory_per_gpu_GiB", time_like));
  CHECK_FALSE(jobs::band_describes("training", "pp_bubble_pct", time_like));
  CHECK_FALSE(jobs::band_describes("deployment_search", "max_qps", time_like));
  CHECK_FALSE(jobs::band_describes("serving_simulation", "no_such_figure", time_like));
}

TEST_CASE("kind band: the shipped bands are found by kind, and widening moves no central value") {
  const jobs::KindErrorBand* training = jobs::kind_error_band("training");
  REQUIRE(training != nullptr);
  CHECK(training->rows >= 3);
  CHECK(training->log_low <= training->log_high);
  CHECK(training->level == doctest::Approx(0.8));
  CHECK(jobs::kind_error_band("serving_latency") != nullptr);
  CHECK(jobs::kind_error_band("serving_simulation") != nullptr);
  CHECK(jobs::kind_error_band("deployment_search") == nullptr);
  CHECK(jobs::kind_error_band_source().find("report-e2e") != std::string::npos);

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
  std::vector<jobs::WidenedFigure> widened;
  jobs::widen_to_kind_band(km, "training", {"step_time_ms", "mfu_pct"}, &widened);
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
  const json block = jobs::interval_band_json("training", widened);
  CHECK(block["rows"] == training->rows);
  CHECK(block["kernel_intervals"]["step_time_ms"][0] == 999.0);
  // Its note is the one sentence the CLI's table and the page's tooltips show.
  const std::string note = block["note"];
  CHECK(note.find("on " + std::to_string(training->rows) + " published training runs, ") != std::string::npos);
  CHECK(note.find(" optimistic: sightline report-e2e") != std::string::npos);
  CHECK(jobs::interval_band_json("deployment_search", {})["applied"] == false);
}

TEST_CASE("kind band: a figure the bounds move by under 0.5% is not the run's speed") {
  const double c = 1000, lo = 999, hi = 1002, far = 1030;
  CHECK_FALSE(jobs::moved_by_bounds(c, &lo, &hi));
  CHECK(jobs::moved_by_bounds(c, &lo, &far));
  CHECK(jobs::moved_by_bounds(c, nullptr, &far));
  CHECK_FALSE(jobs::moved_by_bounds(c, nullptr, nullptr));
}
