// sightline presets: lists the presets compiled into the engine.
#include <iostream>

#include "core/json_text.hpp"
#include "api/api.hpp"
#include "cli/cli_common.hpp"
#include "cli/flags.hpp"

namespace sightline::cli {

int cmd_presets(const std::vector<std::string>& args) {
  std::string kind, format = "table";
  std::vector<std::string> bare;
  std::string problem;
  Flags flags("presets");
  flags.text("--format", &format, {"table", "json"}).positional(&bare, 1);
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (!bare.empty()) kind = bare[0];
  std::vector<std::string> kinds;
  if (kind.empty()) kinds = read_engine_envelope(sightline::api::list_presets(""))["result"].get<std::vector<std::string>>();
  else kinds.push_back(kind);
  json all = json::object();
  for (const auto& k : kinds) {
    json envelope = read_engine_envelope(sightline::api::list_presets(k));
    if (!envelope["ok"].get<bool>()) return report_error(envelope);
    all[k] = envelope["result"];
  }
  if (format == "json") {
    std::cout << safe_dump(kind.empty() ? all : all[kind], 2) << "\n";
    return 0;
  }
  for (const auto& k : kinds) {
    if (kind.empty()) std::cout << "# " << k << "\n";
    for (const json& p : all[k]) {
      std::string title = p.contains("title") ? p["title"].get<std::string>() : p.value("name", "");
      std::cout << p["id"].get<std::string>() << "\t" << title;
      // A GPU's table row also says which links it ships with (inside a node, between nodes) and
      // where its numbers come from.
      if (k == "gpus")
        std::cout << "\t" << p.value("default_intra_node", "") << "\t" << p.value("default_inter_node", "") << "\t"
                  << p.value("source", "");
      std::cout << "\n";
    }
  }
  return 0;
}

}  // namespace sightline::cli
