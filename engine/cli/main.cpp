// sightline: the native command-line front end of the engine API.
#include <functional>
#include <iostream>
#include <map>

#include "core/json_text.hpp"
#include "api/api.hpp"
#include "cli/cli_common.hpp"
#include "cli/command_boundary.hpp"
#include "cli/flags.hpp"

using namespace sightline::cli;

namespace {

// Commands that take no arguments still refuse them (one parser for all).
bool no_arguments(const char* command, const Args& args, int& code) {
  std::string problem;
  if (Flags(command).parse(args, problem)) return true;
  code = usage_error(problem);
  return false;
}

int cmd_registries(const Args& args) {
  int code = 0;
  if (!no_arguments("registries", args, code)) return code;
  std::cout << sightline::safe_dump(sightline::read_engine_envelope(sightline::api::list_registries())["result"], 2) << "\n";
  return 0;
}

int cmd_version(const Args& args) {
  int code = 0;
  if (!no_arguments("version", args, code)) return code;
  std::cout << sightline::safe_dump(sightline::read_engine_envelope(sightline::api::version())["result"]) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  const std::map<std::string, std::function<int(const Args&)>> commands = {
      {"run", cmd_run},
      {"fit", cmd_fit},
      {"validate", cmd_validate},
      {"inspect-model", cmd_inspect_model},
      {"presets", cmd_presets},
      {"calibrate", cmd_calibrate},
      {"report-accuracy", cmd_report_accuracy},
      {"calibrate-comm", cmd_calibrate_comm},
      {"ops", cmd_ops},
      {"explain-step", cmd_explain_step},
      {"explain-train-step", cmd_explain_train_step},
      {"comm", cmd_comm},
      {"report-training", cmd_report_training},
      {"report-e2e", cmd_report_e2e},
      {"sweep", cmd_sweep},
      {"batch", cmd_batch},
      {"merge", cmd_merge},
      {"search", cmd_search},
      {"check-capacity", cmd_check_capacity},
      {"registries", cmd_registries},
      {"version", cmd_version},
  };
  const std::string name = args[0];
  args.erase(args.begin());
  auto it = commands.find(name);
  if (it == commands.end()) return usage_error("unknown command '" + name + "'");
  return run_command(name, it->second, args);
}
