#pragma once
// The CLI's side of the one error boundary (core/error_boundary): main()
// runs every command through run_command, so any exception a command throws
// is printed as a located error and exits with status 1, never an abort.
#include <functional>
#include <string>
#include <vector>

namespace sightline::cli {

// Runs `command(args)`; an exception becomes "error [code] at 'path': message"
// on standard error (an internal_error names the command and its arguments,
// so the input file), and the exit status 1.
int run_command(const std::string& name, const std::function<int(const std::vector<std::string>&)>& command,
                const std::vector<std::string>& args) noexcept;

}  // namespace sightline::cli
