// FP8 recipe overheads (issue 38): Transformer Engine's delayed scaling casts
// with a scale from the amax history and all-reduces the amaxes once per
// forward and backward; current scaling scans each tensor for its amax right
// before the cast (one more read of the input, half the cast's bytes) and
// reduces no history. Through the public JSON API, on T2.1 (Llama-2-7B,
// 8 x H100, data parallel) with FP8 GEMMs.
#include <doctest/doctest.h>

#include "test_helpers.hpp"

using namespace sightline::test;

namespace {

json fp8_recipe_result(const char* recipe) {
  json s = preset("scenarios", "T2.1");
  s["training"]["fp8"] = "layers";
  if (recipe) s["training"]["fp8_recipe"] = recipe;
  const json e = run(s);
  REQUIRE_MESSAGE(e["ok"] == true, e.dump());
  return e["result"];
}

// Bytes of the forward operators whose name ends with `suffix`.
double forward_bytes_ending(const json& r, const std::string& suffix) {
  double b = 0;
  for (const json& op : r["breakdown"]["forward_per_micro_batch"]) {
    const std::string n = op["name"].get<std::string>();
    if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      b += op["bytes"].get<double>();
  }
  return b;
}

}  // namespace

TEST_CASE("fp8 recipe: current scaling scans before each cast and reduces no amax history") {
  const json delayed = fp8_recipe_result(nullptr);
  const json current = fp8_recipe_result("current");
  json s = preset("scenarios", "T2.1");
  s["training"]["fp8"] = "layers";
  const json resolved = validate(s);
  REQUIRE(resolved["ok"] == true);
  CHECK(resolved["result"]["training"]["fp8_recipe"] == "delayed");  // the default, as the resolved scenario says
  // Delayed: no scans; the amax all-reduce per micro-batch over the 8 data-parallel ranks.
  CHECK(forward_bytes_ending(delayed, "_fp8_amax") == 0.0);
  CHECK(delayed["step_breakdown_ms"]["framework_parts"]["fp8_amax_allreduce"].get<double>() > 0.0);
  // Current: every cast has its scan, reading the bf16 input once (2 of the cast's 4 bytes per element).
  const double casts = forward_bytes_ending(current, "_fp8_cast");
  CHECK(casts > 0.0);
  CHECK(forward_bytes_ending(current, "_fp8_amax") == doctest::Approx(casts / 2.0));
  CHECK(current["step_breakdown_ms"]["framework_parts"]["fp8_amax_allreduce"].get<double>() == 0.0);
  CHECK(current["metrics"]["step_time_ms"].get<double>() > delayed["metrics"]["step_time_ms"].get<double>());
}

TEST_CASE("fp8 recipe: a recipe without FP8 GEMMs is a located error") {
  json s = preset("scenarios", "T2.1");
  s["training"]["fp8_recipe"] = "current";
  const json e = run(s);
  REQUIRE(e["ok"] == false);
  CHECK(e["error"]["path"] == "/training/fp8_recipe");
  s["training"]["fp8"] = "layers";
  s["training"]["fp8_recipe"] = "hybrid";
  const json bad = run(s);
  REQUIRE(bad["ok"] == false);
  CHECK(bad["error"]["path"] == "/training/fp8_recipe");
}
