// Invariants every training result must keep, over every shipped training
// scenario preset (and each compare variant it carries): properties, not
// particular numbers.
#include <doctest/doctest.h>

#include "test_helpers.hpp"

using namespace sightline::test;

namespace {

std::vector<json> training_presets() {
  std::vector<json> out;
  const json list = envelope(sightline::api::list_presets("scenarios")).at("result");
  for (const json& p : list)
    if (p.contains("training")) out.push_back(p);
  return out;
}

}  // namespace

TEST_CASE("training: HFU >= MFU and hardware FLOPs >= model FLOPs for every training preset") {
  // Hardware FLOPs are the model's FLOPs plus those recomputation runs again,
  // so they can never be fewer. (T3.4 once reported 63.6% MFU and 57.8% HFU.)
  const std::vector<json> presets = training_presets();
  REQUIRE(presets.size() >= 10);
  for (const json& p : presets) {
    const std::string id = p["id"].get<std::string>();
    const json e = run(p);
    REQUIRE_MESSAGE(e["ok"] == true, id << ": " << e.dump());
    std::vector<std::pair<std::string, const json*>> results = {{id, &e["result"]}};
    if (e["result"].contains("compare"))
      for (const json& v : e["result"]["compare"])
        if (v.contains("metrics")) results.push_back({id + " / " + v.value("label", "?"), &v});
    for (const auto& entry : results) {
      const auto& name = entry.first;  // not a structured binding: CAPTURE/INFO are lambdas, which may not capture one in C++17
      const auto& r = entry.second;
      const json& m = (*r)["metrics"];
      INFO(name << ": MFU " << m["mfu_pct"] << " HFU " << m["hfu_pct"]);
      CHECK(m["mfu_pct"].get<double>() > 0);
      CHECK(m["hfu_pct"].get<double>() >= m["mfu_pct"].get<double>() * (1 - 1e-12));
      CHECK(m["hardware_tflops_per_gpu"].get<double>() >= m["model_tflops_per_gpu"].get<double>() * (1 - 1e-12));
      CHECK(m["recompute_flops_per_step"].get<double>() >= 0);
      // Nothing recomputed: HFU equals MFU.
      if (m["recompute_flops_per_step"].get<double>() == 0)
        CHECK(m["hfu_pct"].get<double>() == doctest::Approx(m["mfu_pct"].get<double>()).epsilon(1e-9));
    }
  }
}
