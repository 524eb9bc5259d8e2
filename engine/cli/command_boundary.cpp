#include "cli/command_boundary.hpp"

#include <iostream>
#include <optional>

#include "core/error_boundary.hpp"
#include "core/json_text.hpp"

namespace sightline::cli {

namespace {

// "sightline run scenario.json --calibration cal.json": the command as typed,
// so an internal error names the input it was reading.
std::string command_line(const std::string& name, const std::vector<std::string>& args) {
  std::string s = "sightline " + name;
  for (const std::string& a : args) s += " " + a;
  return printable(s, 300);
}

}  // namespace

int run_command(const std::string& name, const std::function<int(const std::vector<std::string>&)>& command,
                const std::vector<std::string>& args) noexcept {
  try {
    int status = 1;
    const std::optional<CaughtError> error = catch_all(
        [&] {
          test_throw_point("cli:" + name);
          status = command(args);
        },
        "'" + command_line(name, args) + "'");
    if (!error) return status;
    std::cout.flush();
    std::cerr << "error [" << error->code << "] at '" << printable(error->path) << "': " << printable(error->message, 2000)
              << "\n";
    return 1;
  } catch (...) {  // only building the message can get here (out of memory)
    std::cerr << "error [internal_error] at '': out of memory\n";
    return 1;
  }
}

}  // namespace sightline::cli
