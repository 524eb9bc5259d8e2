#pragma once
// The parameter schema (pointer, type, range, default, choices) of scenario
// documents, recorded from the readers that validate them: while a recorder
// is active on a thread, every typed read of ObjectReader notes what it
// accepts. Reading documents that use every section (the scenario presets)
// therefore lists the parameters exactly as the validator checks them, with
// no hand-kept copy that could drift from it.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_text.hpp"

namespace sightline {

using json = nlohmann::json;

struct ParameterEntry {
  std::string pointer;   // array indices written as '*': /serving/cluster/pools/*/tp
  std::string type;      // integer | number | boolean | string | choice
  json min, max;         // null when the type has no range
  json default_value;    // null when required, absent means "off", or the default depends on context
  bool has_default = false;
  bool default_varies = false;  // readers in different contexts default it differently
  std::vector<std::string> choices;
};

class ParameterSchemaRecorder {
 public:
  // Records on this thread for the recorder's lifetime (nests: the innermost records).
  ParameterSchemaRecorder();
  ~ParameterSchemaRecorder();
  ParameterSchemaRecorder(const ParameterSchemaRecorder&) = delete;
  ParameterSchemaRecorder& operator=(const ParameterSchemaRecorder&) = delete;

  // The recorder active on this thread, or nullptr (the readers' fast path).
  static ParameterSchemaRecorder* active();

  void record(const std::string& path, const std::string& type, json min, json max,
              std::optional<json> default_value, std::vector<std::string> choices = {});
  // Entries sorted by pointer.
  json to_json() const;

 private:
  std::map<std::string, ParameterEntry> entries_;
  ParameterSchemaRecorder* outer_ = nullptr;
};

// Records, while a recorder is active on this thread, a parameter that is no
// single typed read: a section whose presence switches a part of the run on
// ("object"), a list of such sections ("array"), a preset reference, an id or
// an inline object ("preset"), or a list of names ("list", with the names
// allowed). The readers call it where they look the key up, whether or not the
// document has it, so the schema lists the parameter even when no shipped
// preset sets it (the page's form has a switch or a picker for each).
void record_parameter(const std::string& path, const std::string& type, std::vector<std::string> choices = {});

// `path` with every all-digit segment (an array index) replaced by '*'.
std::string generic_pointer(const std::string& path);

}  // namespace sightline
