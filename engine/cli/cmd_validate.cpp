// sightline validate: checks a scenario without running it.
#include <iostream>

#include "api/api.hpp"
#include "cli/cli_common.hpp"
#include "cli/flags.hpp"
#include "core/json_text.hpp"

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
  json envelope = read_engine_envelope(sightline::api::validate_scenario(text));
  if (!envelope["ok"].get<bool>()) return report_error(envelope);
  std::cout << "ok\n";
  return 0;
}

// sightline inspect-model FILE: what the engine understood of a model.
int cmd_inspect_model(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  std::string problem;
  bool as_json = false, format_json = false;
  Flags flags("inspect-model");
  flags.boolean("--json", &as_json).boolean("--format=json", &format_json).positional(&files, 1);
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (files.size() != 1) return usage_error("inspect-model takes one FILE (a config.json or a model object) [--json]");
  std::string text;
  if (!read_file(files[0], text)) {
    std::cerr << "error [io_error] at '': cannot read " << files[0] << "\n";
    return 1;
  }
  json envelope = read_engine_envelope(sightline::api::inspect_model(text));
  if (!envelope["ok"].get<bool>()) return report_error(envelope);
  const json& r = envelope["result"];
  if (as_json || format_json) {
    std::cout << sightline::safe_dump(r, 2) << "\n";
    return 0;
  }
  print_understood_model(r, "", true);
  return 0;
}

// What the engine understood of a model (api::inspect_model's result), one
// labelled line per part; `indent` before each, the ignored keys and warnings
// only with `notes` (a run's table prints those in its import block).
void print_understood_model(const json& r, const std::string& indent, bool notes) {
  std::cout << indent << "family        " << r["family"].get<std::string>() << "  (" << r["name"].get<std::string>() << ")\n";
  std::cout << indent << "layers        " << r["layers"].get<int>() << "\n";
  for (const json& l : r["layers_by_kind"]) {
    std::cout << indent << "  " << l["count"].get<int>() << " x " << l["mixer"].get<std::string>();
    if (l.contains("attention")) std::cout << " (" << l["attention"].get<std::string>() << ")";
    std::cout << " + " << l["ffn"].get<std::string>() << "\n";
  }
  const json& h = r["heads"];
  std::cout << indent << "heads         " << h["query"].get<int>() << " query / " << h["kv"].get<int>() << " KV ("
            << h["kind"].get<std::string>() << "), head_dim " << h["head_dim"].get<int64_t>() << "\n";
  if (h.contains("sparse_attention")) {
    const json& d = h["sparse_attention"];
    std::cout << indent << "sparse attn   DSA: indexer of " << d["index_heads"].get<int>() << " heads x " << d["index_head_dim"].get<int64_t>()
              << " (FP8 key, " << fixed(d["index_key_bytes_per_token"].get<double>(), 0)
              << " B/token/layer in the KV cache); each query attends to its top-" << d["index_topk"].get<int64_t>() << " keys\n";
  }
  if (!r["experts"].is_null()) {
    const json& e = r["experts"];
    std::cout << indent << "experts       " << e["routed"].get<int>() << " routed, " << e["shared"].get<int>() << " shared, top-"
              << e["top_k"].get<int>() << " (" << e["moe_layers"].get<int>() << " MoE layers)";
    if (e.contains("latent_size"))
      std::cout << ", routed experts at the latent width " << e["latent_size"].get<int64_t>() << " (hidden "
                << r["architecture"]["hidden_size"].get<int64_t>() << ")";
    std::cout << "\n";
  }
  if (r["mtp_layers"].get<int>() > 0) std::cout << indent << "MTP layers    " << r["mtp_layers"].get<int>() << "\n";
  const json& p = r["params"];
  std::cout << indent << "parameters    total " << fixed(p["total_B"].get<double>(), 2) << " B, active "
            << fixed(p["active_B"].get<double>(), 2) << " B, embedding " << fixed(p["embedding_B"].get<double>(), 2)
            << " B (not in active)\n";
  std::cout << indent << "KV cache      (" << r["kv_cache"]["dtype"].get<std::string>() << ", one GPU) bytes/token:";
  for (auto it = r["kv_cache"]["at"].begin(); it != r["kv_cache"]["at"].end(); ++it)
    std::cout << " " << it.key() << " " << fixed(it.value()["bytes_per_token"].get<double>(), 0);
  std::cout << "\n";
  const json& w = r["weights"];
  std::cout << indent << "weights       " << w["dtype"].get<std::string>() << ", " << fixed(w["GiB"].get<double>(), 1) << " GiB";
  if (!w["from_config"].is_null()) std::cout << "  [" << w["from_config"].get<std::string>() << "]";
  std::cout << "\n";
  if (!notes) return;
  for (const json& x : r["ignored_parts"]) std::cout << indent << "ignored       " << x.get<std::string>() << "\n";
  for (const json& x : r["ignored_why"]) std::cout << indent << "ignored keys  " << x.get<std::string>() << "\n";
  for (const json& x : r["warnings"]) std::cout << indent << "warning: " << x.get<std::string>() << "\n";
}

}  // namespace sightline::cli
