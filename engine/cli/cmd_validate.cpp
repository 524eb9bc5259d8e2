// sightline validate: checks a scenario without running it.
#include <iostream>

#include "api/api.hpp"
#include "cli/cli_common.hpp"

namespace sightline::cli {

int cmd_validate(const std::vector<std::string>& args) {
  if (args.size() != 1) return usage_error("validate takes one FILE");
  std::string text;
  if (!read_file(args[0], text)) {
    std::cerr << "error [io_error] at '': cannot read " << args[0] << "\n";
    return 1;
  }
  json envelope = json::parse(sightline::api::validate_scenario(text));
  if (!envelope["ok"].get<bool>()) return report_error(envelope);
  std::cout << "ok\n";
  return 0;
}

}  // namespace sightline::cli
