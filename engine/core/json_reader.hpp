#pragma once
// Strict reading of JSON objects: unknown keys are rejected, every value is
// type- and range-checked, and every error carries the JSON pointer of the
// offending value.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "core/json_text.hpp"

namespace sightline {

using json = nlohmann::json;

// Appends `key` to a JSON pointer, escaping '~' and '/' as RFC 6901 requires.
std::string pointer_append(const std::string& path, const std::string& key);
std::string pointer_append(const std::string& path, std::size_t index);

// Human-readable JSON type name for messages.
std::string json_type_name(const json& value);

class ObjectReader {
 public:
  // Throws type_error if `object` is not an object and unknown_key for any key
  // not listed in `allowed_keys`.
  ObjectReader(const json& object, std::string path, std::vector<std::string> allowed_keys);

  const std::string& path() const { return path_; }
  std::string child_path(const std::string& key) const { return pointer_append(path_, key); }
  bool has(const std::string& key) const;
  // The value of `key`, or nullptr when it is absent; a null value is a type_error.
  const json* find(const std::string& key) const;
  // Like find(), but null reads as absent: only for keys documented as "null means none".
  const json* nullable(const std::string& key) const;
  const json& required(const std::string& key) const;

  int64_t integer(const std::string& key, int64_t min_value, int64_t max_value,
                  std::optional<int64_t> default_value = std::nullopt) const;
  double number(const std::string& key, double min_value, double max_value,
                std::optional<double> default_value = std::nullopt) const;
  bool boolean(const std::string& key, std::optional<bool> default_value = std::nullopt) const;
  std::string string(const std::string& key, std::optional<std::string> default_value = std::nullopt) const;
  std::string choice(const std::string& key, const std::vector<std::string>& allowed,
                     std::optional<std::string> default_value = std::nullopt) const;

 private:
  const json& object_;
  std::string path_;
};

// Standalone checks for values that are not object members (array items, roots).
int64_t read_integer(const json& value, const std::string& path, int64_t min_value, int64_t max_value);
double read_number(const json& value, const std::string& path, double min_value, double max_value);
void require_object(const json& value, const std::string& path);

}  // namespace sightline
