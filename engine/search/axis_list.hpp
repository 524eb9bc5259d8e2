#pragma once
// The axes of a search question (the lists of values to try), read by one set
// of readers that the deployment and the training search share, so a bad list
// gets the same treatment in both: a non-empty array, each value checked at
// its own pointer, at most `max_values` values, and no value listed twice. A
// repeated value would plan every layout with it twice and rank the copies
// side by side, so it is a located invalid_value error at its second place.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline::search {

constexpr size_t kNoAxisLimit = std::numeric_limits<size_t>::max();

// Fails at `array_path` when the array holds more than `max_values` values
// (checked before any value is read, so an oversized list is refused at once).
void check_axis_size(const json& array, const std::string& array_path, size_t max_values);

// The one duplicate rule: fails at `path` (the value's own pointer) when
// `shown` names a value already read into the axis.
[[noreturn]] void fail_listed_twice(const std::string& path, const std::string& shown);

// Whole numbers in [lo, hi]. An absent key gives `fallback`.
std::vector<int64_t> read_int_axis(const ObjectReader& r, const std::string& key, std::vector<int64_t> fallback, int64_t lo,
                                   int64_t hi, size_t max_values = kNoAxisLimit);

template <class T>
std::vector<T> read_int_axis_as(const ObjectReader& r, const std::string& key, const std::vector<T>& fallback, int64_t lo,
                                int64_t hi, size_t max_values = kNoAxisLimit) {
  const std::vector<int64_t> v = read_int_axis(r, key, std::vector<int64_t>(fallback.begin(), fallback.end()), lo, hi, max_values);
  return std::vector<T>(v.begin(), v.end());
}

// Names from `valid` (`what` names one in messages: "recompute mode").
std::vector<std::string> read_name_axis(const ObjectReader& r, const std::string& key, std::vector<std::string> fallback,
                                        const std::vector<std::string>& valid, const std::string& what,
                                        size_t max_values = kNoAxisLimit);

// true and/or false.
std::vector<bool> read_bool_axis(const ObjectReader& r, const std::string& key, std::vector<bool> fallback,
                                 size_t max_values = kNoAxisLimit);

}  // namespace sightline::search
