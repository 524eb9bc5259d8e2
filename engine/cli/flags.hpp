#pragma once
// One argument parser for every CLI command: a declarative table of typed,
// bounded flags. Integers must be whole numbers written as such ("1e3" is not
// one), numbers must be finite, ranges are checked, choices are closed lists,
// and anything else is a usage error that names the command, the flag and
// the value (exit 2), never a silent default or a wrapped value.
#include <cstdint>
#include <string>
#include <vector>

namespace sightline::cli {

class Flags {
 public:
  explicit Flags(std::string command) : command_(std::move(command)) {}

  // --name VALUE, any text; `choices`, when given, is the closed list of accepted values.
  Flags& text(const char* name, std::string* out, std::vector<std::string> choices = {});
  // --name VALUE, repeatable; each occurrence appends.
  Flags& texts(const char* name, std::vector<std::string>* out);
  // --name N: a whole number in [min_value, max_value].
  Flags& integer(const char* name, int64_t* out, int64_t min_value, int64_t max_value);
  // --name X: a finite number in [min_value, max_value].
  Flags& number(const char* name, double* out, double min_value, double max_value);
  // --name alone sets *out to true.
  Flags& boolean(const char* name, bool* out);
  // Bare arguments (not starting with "--", or "-"): up to `max_count` of them.
  Flags& positional(std::vector<std::string>* out, size_t max_count);

  // Parses `args`; false with `problem` set ("ops: --tp takes a whole number from 1 to 1024 (got '0')").
  bool parse(const std::vector<std::string>& args, std::string& problem);

  // Strict readers the table uses (exposed for `--shard i/N` and tests).
  static bool parse_integer(const std::string& text, int64_t& out);
  static bool parse_number(const std::string& text, double& out);

 private:
  enum class Kind { Text, Texts, Integer, Number, Boolean };
  struct Spec {
    std::string name;
    Kind kind = Kind::Text;
    void* out = nullptr;
    int64_t imin = 0, imax = 0;
    double dmin = 0, dmax = 0;
    std::vector<std::string> choices;
  };
  static Spec make(const char* name, Kind kind, void* out);
  const Spec* find(const std::string& name) const;
  std::string command_;
  std::vector<Spec> specs_;
  std::vector<std::string>* positional_ = nullptr;
  size_t positional_max_ = 0;
};

}  // namespace sightline::cli
