#pragma once
// Located input errors: every rejection names a stable code, a JSON-pointer path
// into the scenario and a human message. Thrown inside the engine, caught at the
// API boundary and turned into an error envelope.
#include <stdexcept>
#include <string>

namespace sightline {

namespace error_code {
inline constexpr const char* kParse = "parse_error";
inline constexpr const char* kUnknownKey = "unknown_key";
inline constexpr const char* kDuplicateKey = "duplicate_key";
inline constexpr const char* kMissingKey = "missing_key";
inline constexpr const char* kType = "type_error";
inline constexpr const char* kRange = "out_of_range";
inline constexpr const char* kInvalidValue = "invalid_value";
inline constexpr const char* kUnknownPreset = "unknown_preset";
inline constexpr const char* kConstraint = "constraint_violation";
inline constexpr const char* kDoesNotFit = "does_not_fit";
inline constexpr const char* kNotImplemented = "not_implemented";
inline constexpr const char* kUnknownHandle = "unknown_handle";
inline constexpr const char* kLimitExceeded = "limit_exceeded";
inline constexpr const char* kInternal = "internal_error";
}  // namespace error_code

class SightlineError : public std::runtime_error {
 public:
  SightlineError(std::string code, std::string path, const std::string& message)
      : std::runtime_error(message), code_(std::move(code)), path_(std::move(path)) {}
  const std::string& code() const { return code_; }
  const std::string& path() const { return path_; }

 private:
  std::string code_;
  std::string path_;
};

[[noreturn]] inline void fail(const char* code, const std::string& path, const std::string& message) {
  throw SightlineError(code, path, message);
}

}  // namespace sightline
