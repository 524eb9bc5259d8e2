// sightline validate: checks a scenario without running it.
#include <iostream>

#include "api/api.hpp"
#include "cli/cli_common.hpp"
#include "cli/flags.hpp"

namespace sightline::cli {

int cmd_validate(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  std::string problem;
  Flags flags("validate");
  flags.positional(&files, 1);
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (files.size() != 1) return usage_error("validate takes one FILE");
  std::string text;
  if (!read_file(files[0], text)) {
    std::cerr << "error [io_error] at '': cannot read " << files[0] << "\n";
    return 1;
  }
  json envelope = json::parse(sightline::api::validate_scenario(text));
  if (!envelope["ok"].get<bool>()) return report_error(envelope);
  std::cout << "ok\n";
  return 0;
}

}  // namespace sightline::cli
