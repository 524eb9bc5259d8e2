// sightline presets: lists the presets compiled into the engine.
#include <iostream>

#include "core/json_text.hpp"
#include "api/api.hpp"
#include "cli/cli_common.hpp"

namespace sightline::cli {

int cmd_presets(const std::vector<std::string>& args) {
  std::string kind, format = "table";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--format" && i + 1 < args.size()) format = args[++i];
    else if (kind.empty()) kind = args[i];
    else return usage_error("unexpected argument '" + args[i] + "'");
  }
  if (format != "table" && format != "json") return usage_error("unknown format '" + format + "'");
  std::vector<std::string> kinds;
  if (kind.empty()) kinds = json::parse(sightline::api::list_presets(""))["result"].get<std::vector<std::string>>();
  else kinds.push_back(kind);
  json all = json::object();
  for (const auto& k : kinds) {
    json envelope = json::parse(sightline::api::list_presets(k));
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
      // A GPU's table row also says which link it ships with and where its numbers come from.
      if (k == "gpus") std::cout << "\t" << p.value("default_intra_node", "") << "\t" << p.value("source", "");
      std::cout << "\n";
    }
  }
  return 0;
}

}  // namespace sightline::cli
