#include "core/parameter_schema.hpp"

#include <algorithm>

namespace sightline {

namespace {
thread_local ParameterSchemaRecorder* g_active = nullptr;

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
}  // namespace

ParameterSchemaRecorder::ParameterSchemaRecorder() : outer_(g_active) { g_active = this; }
ParameterSchemaRecorder::~ParameterSchemaRecorder() { g_active = outer_; }
ParameterSchemaRecorder* ParameterSchemaRecorder::active() { return g_active; }

std::string generic_pointer(const std::string& path) {
  std::string out;
  size_t i = 0;
  while (i < path.size()) {
    // path[i] == '/': one segment up to the next '/'.
    const size_t next = path.find('/', i + 1);
    const std::string segment = path.substr(i + 1, next == std::string::npos ? std::string::npos : next - i - 1);
    out += '/';
    out += all_digits(segment) ? "*" : segment;
    if (next == std::string::npos) break;
    i = next;
  }
  return out;
}

void ParameterSchemaRecorder::record(const std::string& path, const std::string& type, json min, json max,
                                     std::optional<json> default_value, std::vector<std::string> choices) {
  const std::string pointer = generic_pointer(path);
  auto it = entries_.find(pointer);
  if (it == entries_.end()) {
    ParameterEntry e;
    e.pointer = pointer;
    e.type = type;
    e.min = std::move(min);
    e.max = std::move(max);
    e.has_default = default_value.has_value();
    if (default_value) e.default_value = std::move(*default_value);
    e.choices = std::move(choices);
    entries_.emplace(pointer, std::move(e));
    return;
  }
  ParameterEntry& e = it->second;
  // A choice is read as a string first: the narrower type wins.
  if (type == "choice") {
    e.type = type;
    e.choices = std::move(choices);
  }
  // Different contexts (e.g. a pool of a cluster and a plain parallelism
  // block) may accept different ranges: the schema gives their union.
  if (!min.is_null() && (e.min.is_null() || min < e.min)) e.min = std::move(min);
  if (!max.is_null() && (e.max.is_null() || max > e.max)) e.max = std::move(max);
  const bool has = default_value.has_value();
  if (has != e.has_default || (has && *default_value != e.default_value)) e.default_varies = true;
}

void record_parameter(const std::string& path, const std::string& type, std::vector<std::string> choices) {
  if (ParameterSchemaRecorder* rec = ParameterSchemaRecorder::active())
    rec->record(path, type, nullptr, nullptr, std::nullopt, std::move(choices));
}

json ParameterSchemaRecorder::to_json() const {
  json out = json::array();
  for (const auto& [pointer, e] : entries_) {
    json j = {{"pointer", pointer}, {"type", e.type}};
    if (!e.min.is_null()) j["min"] = e.min;
    if (!e.max.is_null()) j["max"] = e.max;
    if (e.default_varies) j["default_varies"] = true;
    else if (e.has_default) j["default"] = e.default_value;
    if (!e.choices.empty()) j["choices"] = e.choices;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace sightline
