#pragma once
// Shared pieces of the benchmark-file readers (fit/bench_import*.cpp): located
// refusals, typed reads of one object's members that record every key they
// take, and the whole-token number reading of text summaries.
#include <optional>
#include <string>

#include "fit/bench_import.hpp"

namespace sightline::fit::bench {

// Every refusal names the file in the message; `path` locates the value inside it.
[[noreturn]] void refuse(const char* code, const std::string& file, const std::string& path, const std::string& msg);

// An empty run of `format` read from `file` at `where` (the readers fill the rest).
BenchRun new_bench_run(const std::string& format, const std::string& file, const std::string& where);

// A number written in a text summary (MLPerf LoadGen "key : value"): the whole
// token must be a plain decimal number (no suffix such as "42abc", no inf,
// nan or hex), finite and within [min, max]; otherwise a located error that
// names the file, the line and the column. Kept in one place so that it can
// switch to core's shared whole-token parser without touching the readers.
double text_number(const std::string& token, const std::string& file, const std::string& key, int line, int column,
                   double min_value, double max_value);

// The members of one object of a benchmark file, read with their pointers.
class Fields {
 public:
  // Refuses (type_error) when `object` is not an object.
  Fields(const json& object, const std::string& file, std::string path, BenchRun* run);

  const std::string& path() const { return path_; }
  std::string at(const std::string& key) const;
  // Present and not null.
  bool has(const std::string& key) const;
  // A number in [min, max]; required: missing_key when absent or null.
  double number(const std::string& key, double min_value, double max_value) const;
  std::optional<double> maybe(const std::string& key, double min_value, double max_value) const;
  // An integer in [min, max] (a whole number written as 8 or 8.0).
  int64_t integer(const std::string& key, int64_t min_value, int64_t max_value) const;
  std::optional<int64_t> maybe_integer(const std::string& key, int64_t min_value, int64_t max_value) const;
  // A boolean (false when absent or null).
  bool flag(const std::string& key) const;
  // A string ("" when absent or null).
  std::string text(const std::string& key) const;
  // A string the reader cannot do without (a strategy, a unit): missing_key
  // when absent or null, never read as "" and then refused as an unknown value.
  std::string required_text(const std::string& key) const;
  // A request rate: a number > 0, or the tool's "no limit" ("inf", Python's
  // bare Infinity, read as infinity). Absent or null: nullopt.
  std::optional<double> rate(const std::string& key) const;
  // The member as an object / array (refused otherwise); nullptr when absent or null.
  const json* object(const std::string& key) const;
  const json* array(const std::string& key) const;
  // Records a measured figure when the key is present (ms figures: > 0).
  void figure(const std::string& metric, const std::string& key, double scale = 1) const;
  // Records the member as read whole (an array a reader takes by index).
  void use(const std::string& key) const;

 private:
  const json& object_;
  std::string file_;
  std::string path_;
  BenchRun* run_;
};

}  // namespace sightline::fit::bench
