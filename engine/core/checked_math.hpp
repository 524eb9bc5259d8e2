#pragma once
// Checked integer arithmetic for counts and bytes derived from user input
// (parameter counts, sizes): an overflow is a located input error, never a
// wrapped (negative) count.
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace sightline {

// a * b, or a located out_of_range error naming `what` at `path`.
inline int64_t checked_mul(int64_t a, int64_t b, const std::string& path, const char* what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    fail(error_code::kRange, path, std::string(what) + " overflows a 64-bit integer; the sizes are too large");
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b, const std::string& path, const char* what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    fail(error_code::kRange, path, std::string(what) + " overflows a 64-bit integer; the sizes are too large");
  return r;
}

}  // namespace sightline
