// The parameter schema that listRegistries exports is the validator's own:
// for every bounded parameter a scenario preset uses, a value just past the
// schema's bound is rejected at that parameter's pointer, and the bound itself
// is accepted by the reader (no range error there).
#include <doctest/doctest.h>

#include <climits>
#include <regex>
#include <string>

#include "test_helpers.hpp"

using namespace sightline::test;

namespace {

// The schema pointer with each '*' replaced by 0 (the first array element).
json::json_pointer concrete(std::string pointer) {
  for (size_t i; (i = pointer.find('*')) != std::string::npos;) pointer.replace(i, 1, "0");
  return json::json_pointer(pointer);
}

json parameters() { return envelope(sightline::api::list_registries()).at("result").at("parameters"); }

}  // namespace

TEST_CASE("the exported parameter schema lists what the readers check") {
  const json params = parameters();
  REQUIRE(params.size() > 100);
  auto find = [&](const std::string& p) -> json {
    for (const json& e : params)
      if (e.at("pointer") == p) return e;
    return nullptr;
  };
  const json n = find("/serving/workload/num_requests");
  REQUIRE(n.is_object());
  CHECK(n.at("type") == "integer");
  const json tier = find("/cost_model/tier");
  REQUIRE(tier.is_object());
  CHECK(tier.at("type") == "choice");
  CHECK(tier.at("default") == "auto");
  CHECK(tier.at("choices").size() == 4);
  CHECK(find("/serving/cluster/pools/*/tp").is_object());  // array items as '*'
  const std::regex index_segment("/[0-9]+(/|$)");
  for (const json& e : params) CHECK_FALSE(std::regex_search(e.at("pointer").get<std::string>(), index_segment));
}

TEST_CASE("every bounded integer parameter a preset uses: past the bound is a range error at its pointer") {
  const json params = parameters();
  const json scenarios = envelope(sightline::api::list_presets("scenarios")).at("result");
  int checked = 0;
  for (const json& e : params) {
    if (e.at("type") != "integer" || !e.contains("max")) continue;
    const json::json_pointer at = concrete(e.at("pointer"));
    for (const json& summary : scenarios) {
      json s = preset("scenarios", summary.at("id"));
      if (!s.contains(at) || !s.at(at).is_number_integer()) continue;
      const int64_t max = e.at("max").get<int64_t>();
      if (max >= INT64_MAX / 2) break;
      CAPTURE(e.dump());
      CAPTURE(summary.at("id").get<std::string>());
      s[at] = max + 1;
      const json r = validate(s);
      REQUIRE(r.contains("error"));
      CHECK(r["error"]["code"] == "out_of_range");
      CHECK(r["error"]["path"] == at.to_string());
      ++checked;
      break;
    }
  }
  CHECK(checked >= 10);
}
