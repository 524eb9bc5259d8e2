// The calibration entries of the JSON API the page's worker calls
// (api::apply_calibration, api::fit_calibration): the same calibration as
// `sightline fit`, progress after every replay, the fit's work budget read as
// a scenario's limits are, and located errors in the request.
#include <doctest/doctest.h>

#include <string>

#include "api/api.hpp"
#include "fit/calibration_fit.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "perf/cluster_calibration.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace calibration_api {

// A real vLLM sweep summary (tests/data/bench/SOURCES.md): two closed-loop runs of opt-125m.
const char* const kSweep = "tests/data/bench/real/er0080_opt125m_sweep_seqs4_c2_summary.json";

json fit_request(const json& limits = nullptr) {
  json r = {{"base", parse_json_text(test::read_source_file("presets/scenarios/I2.2.json"))},
            {"base_name", "I2.2"},
            {"files", json::array({{{"name", "summary.json"}, {"text", test::read_source_file(kSweep)}}})},
            {"id", "lab"}};
  if (!limits.is_null()) r["limits"] = limits;
  return r;
}

}  // namespace calibration_api

TEST_CASE("calibration api: a fit through JSON is sightline fit's, with progress after every replay") {
  std::vector<double> seen;
  const json env = parse_json_text(
      api::fit_calibration(safe_dump(calibration_api::fit_request()), [&](double p) { seen.push_back(p); },
                           fit::FitOptions::kApiCeiling));
  REQUIRE_MESSAGE(env["ok"].get<bool>(), safe_dump(env));
  const json& cal = env["result"];
  CHECK(cal["id"] == "lab");
  CHECK(cal["fit"]["base_scenario"] == "I2.2");
  CHECK(cal["fit"]["in_sample"]["runs"].size() == 2);
  // Monotone progress in (0, 1], one call per replay.
  REQUIRE(seen.size() >= 4);
  for (size_t i = 1; i < seen.size(); ++i) CHECK(seen[i] >= seen[i - 1]);
  CHECK(seen.front() > 0);
  CHECK(seen.back() <= 1);

  // The calibration goes into the scenario's cost model, as run --calibration puts it.
  const std::string base = test::read_source_file("presets/scenarios/I2.2.json");
  const json applied = parse_json_text(api::apply_calibration(base, safe_dump(cal)));
  REQUIRE(applied["ok"].get<bool>());
  CHECK(applied["result"]["cost_model"]["calibration"] == cal);
  const json run = parse_json_text(api::run_scenario(safe_dump(applied["result"])));
  REQUIRE(run["ok"].get<bool>());
  CHECK(run["result"]["calibration"]["id"] == "lab");
}

TEST_CASE("calibration api: the fit's budget is read like a scenario's limits, within the API's ceiling") {
  const auto fit_text = [](const json& request) { return parse_json_text(api::fit_calibration(safe_dump(request), {}, fit::FitOptions::kApiCeiling)); };
  // Too small a budget for the runs: refused before the first replay.
  const json small = fit_text(calibration_api::fit_request({{"max_work_units", 10}}));
  REQUIRE_FALSE(small["ok"].get<bool>());
  CHECK(small["error"]["code"] == "limit_exceeded");
  // Past the API's ceiling (the CLI's --max-work-units goes higher): located at the limit.
  const json big = fit_text(calibration_api::fit_request({{"max_work_units", fit::FitOptions::kApiCeiling + 1}}));
  REQUIRE_FALSE(big["ok"].get<bool>());
  CHECK(big["error"]["path"] == "/limits/max_work_units");
  // An unknown key of the request, and a file the readers refuse, are located.
  json extra = calibration_api::fit_request();
  extra["model"] = "x";
  CHECK(fit_text(extra)["error"]["path"] == "/model");
  json bad = calibration_api::fit_request();
  bad["files"][0]["text"] = "{}";
  const json refused = fit_text(bad);
  REQUIRE_FALSE(refused["ok"].get<bool>());
  CHECK(refused["error"]["message"].get<std::string>().find("summary.json") != std::string::npos);
}

TEST_CASE("calibration api: a scenario whose cost_model is not an object is a located error, not replaced") {
  const json env = parse_json_text(api::apply_calibration(R"({"cost_model": 3})", R"({"id": "x", "source": "", "factors": {}})"));
  REQUIRE_FALSE(env["ok"].get<bool>());
  CHECK(env["error"]["path"] == "/cost_model");
}

// The fit clamps each factor to the range the reader accepts, both read from
// perf/cluster_calibration.hpp: a calibration at either end of each range
// reads back as written, and one past an end is refused at that factor. A
// reader that stops using the shared range (a literal of its own) fails here.
TEST_CASE("calibration api: a cluster calibration reads at both ends of each factor's shared range, not past them") {
  struct Factor {
    const char* key;
    FactorRange range;
  };
  const Factor factors[] = {{"compute_efficiency_scale", kEfficiencyScaleRange},
                            {"memory_efficiency_scale", kEfficiencyScaleRange},
                            {"comm_efficiency_scale", kEfficiencyScaleRange},
                            {"host_us_per_step", kHostUsPerStepRange},
                            {"request_latency_ms", kRequestLatencyMsRange}};
  for (const Factor& f : factors) {
    const std::string key = f.key;
    CAPTURE(key);
    ClusterCalibration base;
    base.id = "edges";
    base.source = "this test";
    json doc = base.to_json();
    for (double v : {f.range.lo, f.range.hi}) {
      doc["factors"][f.key] = v;
      CHECK(ClusterCalibration::from_json(doc, "").to_json()["factors"].value(f.key, 0.0) == v);
    }
    for (double v : {f.range.lo - 0.01, f.range.hi * 1.01}) {
      doc["factors"][f.key] = v;
      bool refused = false;
      try {
        ClusterCalibration::from_json(doc, "");
      } catch (const SightlineError& e) {
        refused = e.path() == std::string("/factors/") + f.key;
      }
      CHECK(refused);
    }
  }
}
