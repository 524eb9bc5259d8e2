#include "fit/bench_import_fields.hpp"

#include <cmath>
#include <limits>

#include "core/csv.hpp"
#include "core/error.hpp"

namespace sightline::fit::bench {

void refuse(const char* code, const std::string& file, const std::string& path, const std::string& msg) {
  fail(code, path, file + ": " + msg);
}

BenchRun new_bench_run(const std::string& format, const std::string& file, const std::string& where) {
  BenchRun r;
  r.format = format;
  r.file = file;
  r.where = where;
  return r;
}

double text_number(const std::string& token, const std::string& file, const std::string& key, int line, int column,
                   double min_value, double max_value) {
  const std::string where = "/line/" + std::to_string(line);
  const std::string at = file + ":" + std::to_string(line) + ":" + std::to_string(column);
  double v = 0;
  // csv_parse_decimal takes the whole token in plain decimal syntax only and
  // refuses a non-finite result: "42abc", "inf", "nan", "0x10" and "" fail.
  if (!csv_parse_decimal(token, v))
    fail(error_code::kInvalidValue, where,
         at + ": '" + key + "' must be a plain decimal number, got '" + printable(token, 60) + "'");
  if (v < min_value || v > max_value)
    fail(error_code::kRange, where,
         at + ": '" + key + "' = " + printable(token, 60) + " is outside [" + std::to_string(min_value) + ", " +
             std::to_string(max_value) + "]");
  return v;
}

Fields::Fields(const json& object, const std::string& file, std::string path, BenchRun* run)
    : object_(object), file_(file), path_(std::move(path)), run_(run) {
  if (!object_.is_object())
    refuse(error_code::kType, file_, path_, "expected an object, got " + json_type_name(object_));
}

std::string Fields::at(const std::string& key) const { return pointer_append(path_, key); }

void Fields::use(const std::string& key) const {
  if (run_) run_->used.push_back(at(key));
}

bool Fields::has(const std::string& key) const {
  auto it = object_.find(key);
  return it != object_.end() && !it->is_null();
}

std::optional<double> Fields::maybe(const std::string& key, double min_value, double max_value) const {
  if (!has(key)) return std::nullopt;
  use(key);
  const json& v = object_.at(key);
  if (!v.is_number())
    refuse(error_code::kType, file_, at(key), "'" + key + "' must be a number, got " + json_type_name(v) +
                                                  (v.is_string() ? " '" + printable(v.get<std::string>(), 40) + "'" : ""));
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < min_value || d > max_value)
    refuse(error_code::kRange, file_, at(key),
           "'" + key + "' = " + safe_dump(v) + " is outside [" + safe_dump(json(min_value)) + ", " +
               safe_dump(json(max_value)) + "]");
  return d;
}

double Fields::number(const std::string& key, double min_value, double max_value) const {
  if (!has(key)) refuse(error_code::kMissingKey, file_, at(key), "missing '" + key + "'");
  return *maybe(key, min_value, max_value);
}

std::optional<int64_t> Fields::maybe_integer(const std::string& key, int64_t min_value, int64_t max_value) const {
  const auto d = maybe(key, static_cast<double>(min_value), static_cast<double>(max_value));
  if (!d) return std::nullopt;
  if (std::floor(*d) != *d) refuse(error_code::kType, file_, at(key), "'" + key + "' must be a whole number");
  return static_cast<int64_t>(*d);
}

int64_t Fields::integer(const std::string& key, int64_t min_value, int64_t max_value) const {
  if (!has(key)) refuse(error_code::kMissingKey, file_, at(key), "missing '" + key + "'");
  return *maybe_integer(key, min_value, max_value);
}

bool Fields::flag(const std::string& key) const {
  if (!has(key)) return false;
  use(key);
  const json& v = object_.at(key);
  if (!v.is_boolean()) refuse(error_code::kType, file_, at(key), "'" + key + "' must be true or false, got " + json_type_name(v));
  return v.get<bool>();
}

std::string Fields::text(const std::string& key) const {
  if (!has(key)) return "";
  use(key);
  const json& v = object_.at(key);
  if (!v.is_string()) refuse(error_code::kType, file_, at(key), "'" + key + "' must be a string, got " + json_type_name(v));
  return v.get<std::string>();
}

std::string Fields::required_text(const std::string& key) const {
  if (!has(key)) refuse(error_code::kMissingKey, file_, at(key), "'" + key + "' is missing");
  return text(key);
}

std::optional<double> Fields::rate(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const json& v = object_.at(key);
  if (v.is_string()) {
    use(key);
    const std::string s = v.get<std::string>();
    // benchmark_serving writes "inf"; Python's json writes float('inf') as a
    // bare Infinity, which the JSON reader hands over as the string "Infinity".
    if (s == "inf" || s == "Infinity") return std::numeric_limits<double>::infinity();
    refuse(error_code::kType, file_, at(key), "'" + key + "' must be a number or \"inf\", got '" + printable(s, 40) + "'");
  }
  return maybe(key, 1e-9, 1e9);
}

const json* Fields::object(const std::string& key) const {
  if (!has(key)) return nullptr;
  const json& v = object_.at(key);
  if (!v.is_object()) refuse(error_code::kType, file_, at(key), "'" + key + "' must be an object, got " + json_type_name(v));
  return &v;
}

const json* Fields::array(const std::string& key) const {
  if (!has(key)) return nullptr;
  const json& v = object_.at(key);
  if (!v.is_array()) refuse(error_code::kType, file_, at(key), "'" + key + "' must be an array, got " + json_type_name(v));
  return &v;
}

void Fields::figure(const std::string& metric, const std::string& key, double scale) const {
  const auto v = maybe(key, 0, 1e12);
  if (v && run_) run_->measured.push_back({metric, *v * scale, at(key)});
}

}  // namespace sightline::fit::bench
