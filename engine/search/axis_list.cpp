#include "search/axis_list.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/json_text.hpp"

namespace sightline::search {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The axis array at `key`, or nullptr when the key is absent.
const json* axis_array(const ObjectReader& r, const std::string& key, const char* expected, size_t max_values) {
  const json* v = r.find(key);
  if (!v) return nullptr;
  const std::string path = r.child_path(key);
  if (!v->is_array() || v->empty()) fail(error_code::kType, path, std::string("expected a non-empty array of ") + expected);
  check_axis_size(*v, path, max_values);
  return v;
}

}  // namespace

void check_axis_size(const json& array, const std::string& array_path, size_t max_values) {
  if (array.is_array() && array.size() > max_values)
    fail(error_code::kRange, array_path,
         "at most " + std::to_string(max_values) + " values per axis, got " + std::to_string(array.size()));
}

void fail_listed_twice(const std::string& path, const std::string& shown) {
  fail(error_code::kInvalidValue, path, shown + " is listed twice");
}

std::vector<int64_t> read_int_axis(const ObjectReader& r, const std::string& key, std::vector<int64_t> fallback, int64_t lo,
                                   int64_t hi, size_t max_values) {
  const json* v = axis_array(r, key, "whole numbers", max_values);
  if (!v) return fallback;
  const std::string path = r.child_path(key);
  std::vector<int64_t> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string ip = pointer_append(path, i);
    const int64_t x = read_integer((*v)[i], ip, lo, hi);
    if (std::find(out.begin(), out.end(), x) != out.end()) fail_listed_twice(ip, std::to_string(x));
    out.push_back(x);
  }
  return out;
}

std::vector<std::string> read_name_axis(const ObjectReader& r, const std::string& key, std::vector<std::string> fallback,
                                        const std::vector<std::string>& valid, const std::string& what, size_t max_values) {
  const json* v = axis_array(r, key, "names", max_values);
  if (!v) return fallback;
  const std::string path = r.child_path(key);
  std::vector<std::string> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string ip = pointer_append(path, i);
    if (!(*v)[i].is_string()) fail(error_code::kType, ip, "expected a " + what + " (" + joined(valid) + ")");
    const std::string name = (*v)[i].get<std::string>();
    if (std::find(valid.begin(), valid.end(), name) == valid.end())
      fail(error_code::kInvalidValue, ip, "unknown " + what + " '" + printable(name) + "'; valid: " + joined(valid));
    if (std::find(out.begin(), out.end(), name) != out.end()) fail_listed_twice(ip, "'" + name + "'");
    out.push_back(name);
  }
  return out;
}

std::vector<bool> read_bool_axis(const ObjectReader& r, const std::string& key, std::vector<bool> fallback, size_t max_values) {
  const json* v = axis_array(r, key, "true/false", max_values);
  if (!v) return fallback;
  const std::string path = r.child_path(key);
  std::vector<bool> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string ip = pointer_append(path, i);
    if (!(*v)[i].is_boolean()) fail(error_code::kType, ip, "expected true or false");
    const bool b = (*v)[i].get<bool>();
    if (std::find(out.begin(), out.end(), b) != out.end()) fail_listed_twice(ip, b ? "true" : "false");
    out.push_back(b);
  }
  return out;
}

}  // namespace sightline::search
