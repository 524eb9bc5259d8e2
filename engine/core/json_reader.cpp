#include "core/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.hpp"
#include "core/parameter_schema.hpp"

namespace sightline {

std::string pointer_append(const std::string& path, const std::string& key) {
  std::string escaped;
  escaped.reserve(key.size());
  for (char c : key) {
    if (c == '~') escaped += "~0";
    else if (c == '/') escaped += "~1";
    else escaped += c;
  }
  return path + "/" + escaped;
}

std::string pointer_append(const std::string& path, std::size_t index) {
  return path + "/" + std::to_string(index);
}

std::string json_type_name(const json& value) {
  if (value.is_null()) return "null";
  if (value.is_boolean()) return "boolean";
  if (value.is_number_integer() || value.is_number_unsigned()) return "integer";
  if (value.is_number_float()) return "number";
  if (value.is_string()) return "string";
  if (value.is_array()) return "array";
  return "object";
}

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += items[i];
  }
  return out;
}

std::string format_number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

void require_object(const json& value, const std::string& path) {
  if (!value.is_object())
    fail(error_code::kType, path, "expected an object, got " + json_type_name(value));
}

ObjectReader::ObjectReader(const json& object, std::string path, std::vector<std::string> allowed_keys)
    : object_(object), path_(std::move(path)) {
  require_object(object_, path_);
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (std::find(allowed_keys.begin(), allowed_keys.end(), it.key()) == allowed_keys.end()) {
      std::sort(allowed_keys.begin(), allowed_keys.end());
      fail(error_code::kUnknownKey, child_path(it.key()),
           "unknown key '" + it.key() + "'; allowed keys here: " + join(allowed_keys));
    }
  }
}

bool ObjectReader::has(const std::string& key) const { return find(key) != nullptr; }

// null is never "use the default": a key is either left out or given a value.
// (The few keys where null names "none" read through nullable().)
const json* ObjectReader::find(const std::string& key) const {
  auto it = object_.find(key);
  if (it == object_.end()) return nullptr;
  if (it->is_null())
    fail(error_code::kType, child_path(key),
         "null is not a value for '" + key + "'; leave the key out to use its default");
  return &*it;
}

const json* ObjectReader::nullable(const std::string& key) const {
  auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

const json& ObjectReader::required(const std::string& key) const {
  const json* v = find(key);
  if (!v) fail(error_code::kMissingKey, child_path(key), "required key '" + key + "' is missing");
  return *v;
}

int64_t read_integer(const json& v, const std::string& path, int64_t min_value, int64_t max_value) {
  int64_t value = 0;
  if (v.is_number_integer()) {
    value = v.get<int64_t>();
  } else if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(max_value))
      fail(error_code::kRange, path, "must be at most " + std::to_string(max_value) + ", got " + std::to_string(u));
    value = static_cast<int64_t>(u);
  } else if (v.is_number_float() && std::isfinite(v.get<double>()) &&
             std::floor(v.get<double>()) == v.get<double>() && std::fabs(v.get<double>()) < 9.0e15) {
    value = static_cast<int64_t>(v.get<double>());
  } else {
    fail(error_code::kType, path, "expected an integer, got " + json_type_name(v) + " " + printable(safe_dump(v), 80));
  }
  if (value < min_value || value > max_value)
    fail(error_code::kRange, path,
         "must be between " + std::to_string(min_value) + " and " + std::to_string(max_value) + ", got " +
             std::to_string(value));
  return value;
}

double read_number(const json& v, const std::string& path, double min_value, double max_value) {
  if (!v.is_number()) fail(error_code::kType, path, "expected a number, got " + json_type_name(v) + " " + printable(safe_dump(v), 80));
  double value = v.get<double>();
  if (!std::isfinite(value) || value < min_value || value > max_value)
    fail(error_code::kRange, path,
         "must be between " + format_number(min_value) + " and " + format_number(max_value) + ", got " +
             format_number(value));
  return value;
}

namespace {
// A bound as the schema shows it: none for an infinite one.
json schema_bound(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
}  // namespace

int64_t ObjectReader::integer(const std::string& key, int64_t min_value, int64_t max_value,
                              std::optional<int64_t> default_value) const {
  if (auto* rec = ParameterSchemaRecorder::active())
    rec->record(child_path(key), "integer", min_value, max_value,
                default_value ? std::optional<json>(*default_value) : std::nullopt);
  const json* v = find(key);
  if (!v) {
    if (default_value) return *default_value;
    required(key);
  }
  return read_integer(*v, child_path(key), min_value, max_value);
}

double ObjectReader::number(const std::string& key, double min_value, double max_value,
                            std::optional<double> default_value) const {
  if (auto* rec = ParameterSchemaRecorder::active())
    rec->record(child_path(key), "number", schema_bound(min_value), schema_bound(max_value),
                default_value ? std::optional<json>(schema_bound(*default_value)) : std::nullopt);
  const json* v = find(key);
  if (!v) {
    if (default_value) return *default_value;
    required(key);
  }
  return read_number(*v, child_path(key), min_value, max_value);
}

bool ObjectReader::boolean(const std::string& key, std::optional<bool> default_value) const {
  if (auto* rec = ParameterSchemaRecorder::active())
    rec->record(child_path(key), "boolean", nullptr, nullptr,
                default_value ? std::optional<json>(*default_value) : std::nullopt);
  const json* v = find(key);
  if (!v) {
    if (default_value) return *default_value;
    required(key);
  }
  if (!v->is_boolean()) fail(error_code::kType, child_path(key), "expected true or false, got " + json_type_name(*v));
  return v->get<bool>();
}

std::string ObjectReader::string(const std::string& key, std::optional<std::string> default_value) const {
  if (auto* rec = ParameterSchemaRecorder::active())
    rec->record(child_path(key), "string", nullptr, nullptr,
                default_value ? std::optional<json>(*default_value) : std::nullopt);
  const json* v = find(key);
  if (!v) {
    if (default_value) return *default_value;
    required(key);
  }
  if (!v->is_string()) fail(error_code::kType, child_path(key), "expected a string, got " + json_type_name(*v));
  return v->get<std::string>();
}

std::string ObjectReader::choice(const std::string& key, const std::vector<std::string>& allowed,
                                 std::optional<std::string> default_value) const {
  if (auto* rec = ParameterSchemaRecorder::active())
    rec->record(child_path(key), "choice", nullptr, nullptr,
                default_value ? std::optional<json>(*default_value) : std::nullopt, allowed);
  std::string value = string(key, default_value);
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
    fail(error_code::kInvalidValue, child_path(key), "'" + value + "' is not one of: " + join(allowed));
  return value;
}

}  // namespace sightline
