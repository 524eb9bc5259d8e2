#pragma once
// The input-handling tests' one check of a located error: the envelope is an
// error with this code at exactly this JSON path, and its message says why.
#include <doctest/doctest.h>

#include <string>

#include "test_helpers.hpp"

namespace sightline::test {

inline void check_error(const json& e, const char* code, const char* path) {
  CAPTURE(e.dump());
  REQUIRE(e["ok"] == false);
  CHECK(e["error"]["code"] == code);
  CHECK(e["error"]["path"] == path);
  CHECK(!e["error"]["message"].get<std::string>().empty());
}

}  // namespace sightline::test
