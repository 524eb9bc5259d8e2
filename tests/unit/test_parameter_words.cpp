// The words of the scenario parameters (scenario/parameter_words.cpp) belong to
// parameters the readers check: every entry names a pointer of the recorded
// schema (no words for a parameter that does not exist, or no longer does),
// each pointer once, and the exported schema carries them on that pointer's
// entry. That every field of the page's form with a schema pointer has words
// is checked against the page's FIELDS by tests/web/form_layout.test.mjs.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "scenario/parameter_words.hpp"
#include "test_helpers.hpp"

using namespace sightline::test;

namespace {
json exported_parameters() { return envelope(sightline::api::list_registries()).at("result").at("parameters"); }
}  // namespace

TEST_CASE("every parameter's words name a pointer the schema records, once") {
  const json params = exported_parameters();
  std::set<std::string> recorded;
  for (const json& e : params) recorded.insert(e.at("pointer").get<std::string>());
  std::set<std::string> worded;
  REQUIRE(sightline::parameter_words().size() > 50);
  for (const sightline::ParameterWords& w : sightline::parameter_words()) {
    CAPTURE(w.pointer);
    CHECK(recorded.count(w.pointer) == 1);  // an orphan: words for a pointer no reader checks
    CHECK(worded.insert(w.pointer).second);  // each pointer once
    CHECK_FALSE(w.label.empty());
    CHECK_FALSE(w.help.empty());
  }
}

TEST_CASE("the exported schema carries each parameter's words on its entry") {
  int worded = 0;
  for (const json& e : exported_parameters()) {
    const sightline::ParameterWords* w = sightline::parameter_words_at(e.at("pointer").get<std::string>());
    CAPTURE(e.dump());
    if (!w) {
      CHECK_FALSE(e.contains("label"));
      CHECK_FALSE(e.contains("help"));
      continue;
    }
    CHECK(e.at("label") == w->label);
    CHECK(e.at("help") == w->help);
    CHECK(e.value("unit", std::string()) == w->unit);
    ++worded;
  }
  CHECK(worded == static_cast<int>(sightline::parameter_words().size()));
}
