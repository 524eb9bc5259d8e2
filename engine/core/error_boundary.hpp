#pragma once
// The one error boundary. Every API entry (api/api.cpp) and every CLI command
// (cli/command_boundary.cpp) runs its body through catch_all, so no exception
// ends the process: a SightlineError keeps its code and path; anything else
// (a std::exception, an unknown throw, out of memory) becomes a located
// internal_error naming the entry or command and the input it read.
#include <functional>
#include <optional>
#include <string>

namespace sightline {

struct CaughtError {
  std::string code;
  std::string path;
  std::string message;
};

// Runs `body`; nullopt when it returned, else what it threw. `where` names the
// entry and its input ("run on scenario.json") for an internal_error's message.
std::optional<CaughtError> catch_all(const std::function<void()>& body, const std::string& where);

// A test hook at each boundary's call site, so a test can check that a throw
// from inside any entry or command becomes an error, never an abort: when the
// environment variable SIGHTLINE_TEST_THROW_IN equals `site` ("cli:run",
// "api:run_scenario"), throws a std::runtime_error (or, with
// SIGHTLINE_TEST_THROW_KIND=int, a non-standard exception, or =alloc, a
// std::bad_alloc). Does nothing otherwise.
void test_throw_point(const std::string& site);

}  // namespace sightline
