// Typed results and their key metrics: one ordered array shape for every
// result kind and intervals combined by id. (That every training metric a
// scenario can name has a getter is structural: both come from one row of
// scenario/training_metric_table.hpp.)
#include <doctest/doctest.h>

#include "run/key_metric.hpp"
#include "scenario/metric_catalogue.hpp"
#include "test_helpers.hpp"
#include "train/training_result.hpp"

using namespace sightline;
using sightline::test::json;

TEST_CASE("key metrics: the interval spans the central and both bound runs, matched by id") {
  KeyMetrics central = {KeyMetric::number("a", "A", "ms", 10), KeyMetric::number("b", "B", "x", 2)};
  central.push_back(KeyMetric{"fits", "Fits", "", "", KeyMetric::Kind::Bool, 1});
  // The bound runs list their metrics in another order; a bound run may even
  // land on the other side of the central value (queueing is not monotonic).
  const KeyMetrics low = {KeyMetric::number("b", "B", "x", 2.5), KeyMetric::number("a", "A", "ms", 8)};
  const KeyMetrics high = {KeyMetric::number("a", "A", "ms", 13)};
  attach_intervals(central, low, high);
  CHECK(central[0].has_interval);
  CHECK(central[0].low == 8);
  CHECK(central[0].high == 13);
  CHECK(central[1].low == 2);  // no high-run value: the central value bounds it
  CHECK(central[1].high == 2.5);
  CHECK_FALSE(central[2].has_interval);  // a yes/no has no interval

  const json j = key_metrics_to_json(central);
  REQUIRE(j.is_array());
  CHECK(j[0] == json{{"id", "a"}, {"label", "A"}, {"unit", "ms"}, {"value", 10.0}, {"low", 8.0}, {"high", 13.0}});
  CHECK(j[2]["value"] == true);
  CHECK_FALSE(j[2].contains("low"));
}

TEST_CASE("key metrics: a count stays an integer and a missing figure is null") {
  KeyMetric count{"preemptions", "preemptions", "count", "", KeyMetric::Kind::Integer, 3};
  CHECK(to_json(count)["value"].is_number_integer());
  CHECK(to_json(count)["value"] == 3);
  KeyMetric missing{"cost_usd", "Cost", "USD", "", KeyMetric::Kind::Missing, 0};
  CHECK(to_json(missing)["value"].is_null());
}

TEST_CASE("key metrics: latency, serving and training results carry one ordered array with intervals") {
  const json latency = sightline::test::preset("scenarios", "I1.1");
  json serving = sightline::test::preset("scenarios", "I2.1");
  serving["serving"]["workload"]["num_requests"] = 200;
  const json training = sightline::test::preset("scenarios", "T2.1");
  for (const json& s : {latency, serving, training}) {
    CAPTURE(s["id"]);
    const json r = sightline::test::run(s).at("result");
    REQUIRE(r["key_metrics"].is_array());
    REQUIRE(r["key_metrics"].size() >= 1);
    for (const json& k : r["key_metrics"]) {
      CAPTURE(k.dump());
      CHECK(k["id"].is_string());
      CHECK(k["label"].is_string());
      CHECK(k["unit"].is_string());
      if (!k["value"].is_number()) continue;
      REQUIRE(k.contains("low"));
      CHECK(k["low"].get<double>() <= k["value"].get<double>());
      CHECK(k["value"].get<double>() <= k["high"].get<double>());
    }
  }
  // The order is the scenario's.
  const json t = sightline::test::run(training).at("result");
  for (size_t i = 0; i < training["training"]["key_metrics"].size(); ++i)
    CHECK(t["key_metrics"][i]["id"] == training["training"]["key_metrics"][i]);
}
