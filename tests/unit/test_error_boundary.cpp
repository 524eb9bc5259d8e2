// Issue 34's one error boundary, API side: every api:: entry and Engine method
// runs through core/error_boundary, so a throw of any type from inside it is
// an internal_error envelope naming the entry, never an exception out of the
// API (which would abort the CLI or trap the wasm module). The throw comes
// from the test hook at the boundary's own call site (SIGHTLINE_TEST_THROW_IN),
// so the shipped path is the one tested. Also the one number parser's rules.
#include <doctest/doctest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "test_helpers.hpp"

using namespace sightline::test;
namespace api = sightline::api;

namespace {

struct EnvGuard {
  EnvGuard(const std::string& site, const char* kind) {
    setenv("SIGHTLINE_TEST_THROW_IN", site.c_str(), 1);
    setenv("SIGHTLINE_TEST_THROW_KIND", kind, 1);
  }
  ~EnvGuard() {
    unsetenv("SIGHTLINE_TEST_THROW_IN");
    unsetenv("SIGHTLINE_TEST_THROW_KIND");
  }
};

}  // namespace

TEST_CASE("boundary: a throw inside every API entry is an internal_error envelope naming the entry") {
  const std::string s = sightline::safe_dump(preset("scenarios", "I1.1"));
  api::Engine engine;
  const std::vector<std::pair<std::string, std::function<std::string()>>> entries = {
      {"run_scenario", [&] { return api::run_scenario(s); }},
      {"validate_scenario", [&] { return api::validate_scenario(s); }},
      {"estimate_work", [&] { return api::estimate_work(s, true); }},
      {"list_presets", [&] { return api::list_presets(""); }},
      {"get_preset", [&] { return api::get_preset("scenarios", "I1.1"); }},
      {"inspect_model", [&] { return api::inspect_model("{}"); }},
      {"version", [&] { return api::version(); }},
      {"list_registries", [&] { return api::list_registries(); }},
      {"search_plan", [&] { return api::search_plan("{}"); }},
      {"search_intervals", [&] { return api::search_intervals("{}", "[]"); }},
      {"search_rank", [&] { return api::search_rank("{}", "[]", "[]"); }},
      {"training_search", [&] { return api::training_search("{}"); }},
      {"Engine::start", [&] { return engine.start(s); }},
      {"Engine::start_at_bound", [&] { return engine.start_at_bound(s, "low"); }},
      {"Engine::step", [&] { return engine.step(1, 1); }},
      {"Engine::result", [&] { return engine.result(1); }},
      {"Engine::cancel", [&] { return engine.cancel(1); }},
  };
  for (const auto& entry : entries) {
    // Named copies, not a structured binding: CAPTURE's lambda cannot capture
    // a binding before C++20, and clang (the sanitizer build) refuses it.
    const auto& name = entry.first;
    const auto& call = entry.second;
    for (const char* kind : {"", "int", "alloc"}) {
      CAPTURE(name);
      CAPTURE(kind);
      json e;
      {
        EnvGuard guard("api:" + name, kind);
        std::string text;
        CHECK_NOTHROW(text = call());
        e = envelope(text);
      }
      REQUIRE(e["ok"] == false);
      CHECK(e["error"]["code"] == "internal_error");
      CHECK(e["error"]["message"].get<std::string>().find("api::" + name) != std::string::npos);
    }
  }
  // Without the hook the same calls answer as they always do.
  CHECK(envelope(api::version())["ok"] == true);
}

TEST_CASE("number parser: the whole token, plain decimal, finite, or a located error") {
  double d = 0;
  int64_t i = 0;
  for (const char* bad : {"many", "42abc", "inf", "-inf", "nan", "0x10", "", " ", "1e", "--1", "1.2.3", "1e999"})
    CHECK_MESSAGE(!sightline::csv_parse_decimal(bad, d), bad);
  for (const char* bad : {"many", "42abc", "1.0", "1e3", "0x10", "", "+", "++1", "99999999999999999999"})
    CHECK_MESSAGE(!sightline::parse_integer_token(bad, i), bad);
  CHECK(sightline::csv_parse_decimal("-1.5e3", d));
  CHECK(d == -1500);
  CHECK(sightline::parse_integer_token("+42", i));
  CHECK(i == 42);
  const sightline::TextPosition at{"f.csv", 3, 7};
  try {
    sightline::read_decimal_token("42abc", at, "column 'm'", 0, 10);
    FAIL("no error");
  } catch (const sightline::SightlineError& e) {
    CHECK(e.path() == "f.csv:3:7");
    CHECK(std::string(e.code()) == "type_error");
  }
  try {
    sightline::read_integer_token("11", at, "column 'm'", 0, 10);
    FAIL("no error");
  } catch (const sightline::SightlineError& e) {
    CHECK(std::string(e.code()) == "out_of_range");
  }
}

TEST_CASE("CSV table: cells by column name with their positions; a missing column is located") {
  const sightline::CsvTable t("# c\na,b\n1,\"x,y\"\n2\n", "t.csv");
  REQUIRE(t.rows().size() == 2);
  CHECK(t.text(t.rows()[0], "b") == "x,y");
  CHECK(t.position(t.rows()[0], "b").describe() == "t.csv:3:3");
  CHECK(t.find(t.rows()[1], "b") == nullptr);
  CHECK_THROWS_WITH_AS(t.required(t.rows()[1], "b"), doctest::Contains("stops before column 'b'"), sightline::SightlineError);
  CHECK_THROWS_WITH_AS(t.required(t.rows()[0], "c"), doctest::Contains("t.csv:2:1: missing column 'c'"), sightline::SightlineError);
}
