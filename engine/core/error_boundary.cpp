#include "core/error_boundary.hpp"

#include <cstdlib>
#include <new>
#include <stdexcept>

#include "core/error.hpp"

namespace sightline {

std::optional<CaughtError> catch_all(const std::function<void()>& body, const std::string& where) {
  try {
    body();
    return std::nullopt;
  } catch (const SightlineError& e) {
    return CaughtError{e.code(), e.path(), e.what()};
  } catch (const std::bad_alloc&) {
    return CaughtError{error_code::kInternal, "", "out of memory in " + where};
  } catch (const std::exception& e) {
    return CaughtError{error_code::kInternal, "", "internal error in " + where + ": " + e.what()};
  } catch (...) {
    return CaughtError{error_code::kInternal, "", "internal error in " + where + " (an exception of unknown type)"};
  }
}

void test_throw_point(const std::string& site) {
  const char* wanted = std::getenv("SIGHTLINE_TEST_THROW_IN");
  if (wanted == nullptr || site != wanted) return;
  const char* kind = std::getenv("SIGHTLINE_TEST_THROW_KIND");
  const std::string k = kind ? kind : "";
  if (k == "int") throw 42;
  if (k == "alloc") throw std::bad_alloc();
  throw std::runtime_error("thrown by the test hook at " + site);
}

}  // namespace sightline
