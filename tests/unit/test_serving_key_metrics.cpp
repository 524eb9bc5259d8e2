// The serving key metrics are read from the run's typed figures
// (serve/serving_key_metrics), never out of the written result. That every
// serving metric has a getter needs no test: the id, its words and its getter
// are one row of scenario/serving_metric_table.hpp. These hold each getter
// to what the writers put at the same row's pointer: for
// every serving id of the catalogue, the same kind, value and reason, on
// short runs of the presets that have each optional part (compare, max-QPS
// search, quantization, speculative decoding, prefix cache, disaggregated
// pools, MoE, LoRA, a GPU price).
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "scenario/metric_catalogue.hpp"
#include "scenario/scenario.hpp"
#include "serve/serving_job.hpp"
#include "test_helpers.hpp"

using namespace sightline;
using sightline::test::json;

namespace {

// What the writers put at the catalogue's location, as a key metric holds it.
KeyMetric written_key_metric(const MetricInfo& m, const json& result) {
  KeyMetric k;
  const json::json_pointer ptr(m.pointer);
  if (!result.contains(ptr)) return k;
  const json& v = result.at(ptr);
  k.kind = key_metric_kind(v);
  if (k.kind == KeyMetric::Kind::Bool) k.value = v.get<bool>() ? 1.0 : 0.0;
  else if (k.numeric()) k.value = v.get<double>();
  // A statistic the run does not have carries its reason beside it.
  const json::json_pointer parent = ptr.parent_pointer();
  if (v.is_null() && result.at(parent).is_object() && result.at(parent).contains("reason"))
    k.reason = result.at(parent)["reason"].get<std::string>();
  return k;
}

}  // namespace

TEST_CASE("key metrics: serving: the typed figures equal what the result says at the catalogue's location") {
  int compared = 0, present = 0;
  std::set<std::string> compare_figures, compare_written;
  for (const char* id : {"I2.3", "I4.2", "I5.1", "I5.2", "I5.3", "I5.4", "I5.5"}) {
    json doc = sightline::test::preset("scenarios", id);
    json& sv = doc["serving"];
    sv["workload"]["num_requests"] = 60;
    if (sv.contains("max_qps_search")) sv["max_qps_search"] = {{"iterations", 2}, {"num_requests", 100}};
    serve::ServingJob job(read_scenario(doc));
    while (!job.step(1 << 20)) {
    }
    const json result = job.result();
    for (const MetricInfo& m : metric_catalogue()) {
      if (m.kind != MetricKind::kServing) continue;
      const std::string preset = id, metric = m.id;
      CAPTURE(preset);
      CAPTURE(metric);
      const KeyMetric typed = job.key_metric(m.id), written = written_key_metric(m, result);
      CHECK(static_cast<int>(typed.kind) == static_cast<int>(written.kind));
      CHECK(typed.value == written.value);
      CHECK(typed.reason == written.reason);
      ++compared;
      if (typed.kind != KeyMetric::Kind::Missing) ++present;
      // A compare block's figure reads a name the block writes (serve/serving_key_metrics
      // refuses a table whose compare row names no compared figure): each is written by
      // some preset's compare block (not every one: goodput needs an SLO).
      if (std::string(m.pointer).rfind("/compare/", 0) == 0) {
        compare_figures.insert(m.id);
        if (result.contains(json::json_pointer(m.pointer))) compare_written.insert(m.id);
      }
    }
  }
  CHECK(compare_figures.size() >= 27);
  CHECK(compare_written == compare_figures);
  CHECK(compared > 600);
  CHECK(present > 450);  // most figures exist on these runs, so the comparison is not of nulls
}
