// SGLang's server_info, read for the deployment it reports and compared with
// the replay's (api/bench_server_settings.hpp says why).
#include "api/bench_server_settings.hpp"

#include <algorithm>
#include <map>

#include "api/bench_import_fields.hpp"
#include "core/error.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_spec.hpp"

namespace sightline::api::bench {

namespace {

constexpr int64_t kMostRanks = 65536;

// SGLang's --quantization values whose weight format is fixed by the name
// (server_args.py QUANTIZATION_CHOICES); the others (gptq's bits, gguf, bitsandbytes,
// moe_wna16, ...) come from the checkpoint and are not compared.
const std::map<std::string, Dtype>& weight_formats() {
  static const std::map<std::string, Dtype> m = {
      {"fp8", Dtype::FP8},           {"w8a8_fp8", Dtype::FP8},  {"modelopt", Dtype::FP8},
      {"modelopt_fp8", Dtype::FP8},  {"modelopt_fp4", Dtype::NVFP4}, {"petit_nvfp4", Dtype::NVFP4},
      {"mxfp4", Dtype::MXFP4},       {"awq", Dtype::INT4},      {"awq_marlin", Dtype::INT4},
      {"w8a8_int8", Dtype::INT8},
  };
  return m;
}

// SGLang's --kv-cache-dtype values ("auto": the model's dtype, not compared).
const std::map<std::string, Dtype>& kv_formats() {
  static const std::map<std::string, Dtype> m = {
      {"fp8_e4m3", Dtype::FP8}, {"fp8_e5m2", Dtype::FP8}, {"bf16", Dtype::BF16},
      {"bfloat16", Dtype::BF16}, {"fp16", Dtype::FP16}, {"float16", Dtype::FP16},
  };
  return m;
}

std::optional<Dtype> format_of(const std::map<std::string, Dtype>& formats, const std::string& value,
                               const std::string& what, const std::string& at, BenchRun& run) {
  if (value.empty() || value == "auto") return std::nullopt;
  const auto it = formats.find(value);
  if (it != formats.end()) return it->second;
  run.notes.push_back("server_info " + at + ": " + what + " '" + printable(value, 40) +
                      "' is not compared with the base scenario (its format comes from the checkpoint)");
  return std::nullopt;
}

// One server's arguments (an object holding tp_size and the rest of ServerArgs).
BenchServer read_server(const json& object, const std::string& at, const std::string& role, BenchRun& run,
                        std::vector<std::optional<int64_t>>& batch_limits) {
  const Fields f(object, run.file, at, nullptr);
  if (const std::string spec = f.text("speculative_algorithm"); !spec.empty())
    refuse(error_code::kNotImplemented, run.file, f.at("speculative_algorithm"),
           "the server decoded speculatively ('" + printable(spec, 40) +
               "'): a step may emit several tokens, so TPOT and ITL are not per decode step; such a run is not replayed");
  BenchServer s;
  s.at = at;
  s.role = role;
  s.tp = f.maybe_integer("tp_size", 1, kMostRanks).value_or(1);
  s.pp = f.maybe_integer("pp_size", 1, kMostRanks).value_or(1);
  s.dp = f.maybe_integer("dp_size", 1, kMostRanks).value_or(1);
  s.ep = f.maybe_integer("ep_size", 1, kMostRanks).value_or(1);
  s.dp_attention = f.flag("enable_dp_attention");
  s.weights = format_of(weight_formats(), f.text("quantization"), "quantization", at, run);
  s.kv_cache = format_of(kv_formats(), f.text("kv_cache_dtype"), "kv_cache_dtype", at, run);
  batch_limits.push_back(f.maybe_integer("max_running_requests", 1, 1 << 24));
  if (s.dp_attention)
    run.notes.push_back("server_info " + at + ": attention data parallel (dp_size " + std::to_string(s.dp) +
                        "); its layout is not compared with the base scenario's");
  return s;
}

// The object holding the server's arguments: server_info itself (a server
// queried directly) or its first internal state (a router's reply).
const json* server_arguments(const json& info, std::string& at) {
  if (info.contains("tp_size")) return &info;
  const auto states = info.find("internal_states");
  if (states != info.end() && states->is_array() && !states->empty() && (*states)[0].is_object() &&
      (*states)[0].contains("tp_size")) {
    at = pointer_append(pointer_append(at, "internal_states"), 0);
    return &(*states)[0];
  }
  return nullptr;
}

std::string role_of_mode(const json& server) {
  const auto mode = server.find("disaggregation_mode");
  if (mode != server.end() && mode->is_string() && (*mode == "prefill" || *mode == "decode")) return mode->get<std::string>();
  return "mixed";
}

constexpr const char* kMakeItTheServers =
    "; the replay would price another deployment than the one measured: make the base scenario the server's";

[[noreturn]] void contradicts(const BenchRun& run, const BenchServer& s, const std::string& key, const std::string& said,
                              const std::string& base) {
  refuse(error_code::kConstraint, run.file, pointer_append(s.at, key),
         "the " + s.role + " server ran " + said + ", but the base scenario " + base + kMakeItTheServers);
}

void check_precision(const Scenario& replay, const BenchRun& run, const BenchServer& s) {
  if (s.weights && *s.weights != replay.precision.weights)
    contradicts(run, s, "quantization", "with " + dtype_name(*s.weights) + " weights",
                "has " + dtype_name(replay.precision.weights) + " weights (/precision/weights)");
  if (s.kv_cache && *s.kv_cache != replay.precision.kv_cache)
    contradicts(run, s, "kv_cache_dtype", "with its KV cache in " + dtype_name(*s.kv_cache),
                "keeps it in " + dtype_name(replay.precision.kv_cache) + " (/precision/kv_cache)");
}

// The servers of one role against the base's pools of that role.
void check_role(const Scenario& replay, const BenchRun& run, serve::PoolRole role, const std::vector<const BenchServer*>& servers) {
  const auto& pools = replay.serving->simulation->cluster.pools;
  const BenchServer& first = *servers.front();
  std::vector<const serve::PoolSpec*> mine;
  for (const auto& p : pools)
    if (p.role == role) mine.push_back(&p);
  if (mine.empty())
    refuse(error_code::kConstraint, run.file, first.at,
           std::string("the file reports a ") + serve::to_string(role) + " server, but the base scenario has no " +
               (role == serve::PoolRole::Mixed ? "pool that serves whole requests" : std::string(serve::to_string(role)) + " pool") +
               " (/serving/cluster/pools)" + kMakeItTheServers);
  if (std::any_of(servers.begin(), servers.end(), [](const BenchServer* s) { return s->dp_attention; })) return;
  int64_t replicas = 0, server_replicas = 0;
  for (const serve::PoolSpec* p : mine) {
    replicas += p->replicas;
    if (p->layout.tp != first.tp)
      contradicts(run, first, "tp_size", "tp_size " + std::to_string(first.tp),
                  "runs tp " + std::to_string(p->layout.tp) + " in its " + serve::to_string(role) + " pool");
    if (p->layout.pp != first.pp)
      contradicts(run, first, "pp_size", "pp_size " + std::to_string(first.pp),
                  "runs pp " + std::to_string(p->layout.pp) + " in its " + serve::to_string(role) + " pool");
    if (replay.model.is_moe() && p->layout.ep != first.ep)
      contradicts(run, first, "ep_size", "ep_size " + std::to_string(first.ep),
                  "runs ep " + std::to_string(p->layout.ep) + " in its " + serve::to_string(role) + " pool");
  }
  for (const BenchServer* s : servers) server_replicas += s->dp;
  if (replicas != server_replicas)
    contradicts(run, first, "dp_size",
                std::to_string(server_replicas) + " replica" + (server_replicas == 1 ? "" : "s") + " (dp_size over " +
                    std::to_string(servers.size()) + " server" + (servers.size() == 1 ? "" : "s") + ")",
                "has " + std::to_string(replicas) + " " + serve::to_string(role) + " replica" + (replicas == 1 ? "" : "s"));
}

}  // namespace

void read_sglang_server_info(const Fields& run_fields, BenchRun& run) {
  const json* info = run_fields.object("server_info");
  if (!info) return;
  std::vector<std::optional<int64_t>> batch_limits;
  const std::string info_at = run_fields.at("server_info");
  // A PD router's reply lists its prefill and decode servers.
  bool listed = false;
  for (const char* role : {"prefill", "decode"}) {
    const auto list = info->find(role);
    if (list == info->end() || list->is_null()) continue;
    const std::string at = pointer_append(info_at, role);
    if (!list->is_array()) refuse(error_code::kType, run.file, at, std::string("'") + role + "' must be a list of servers");
    for (size_t i = 0; i < list->size(); ++i)
      run.servers.push_back(read_server((*list)[i], pointer_append(at, i), role, run, batch_limits));
    listed = true;
  }
  std::string at = info_at;
  if (const json* args = server_arguments(*info, at)) {
    // A router's own state when it lists servers (checked for speculation only), else the one server.
    std::vector<std::optional<int64_t>> unused;
    const BenchServer s = read_server(*args, at, role_of_mode(*args), run, listed ? unused : batch_limits);
    if (!listed) run.servers.push_back(s);
  }
  if (run.servers.empty()) {
    run.notes.push_back("server_info names no server arguments (tp_size): the deployment is not compared");
    return;
  }
  run.notes.push_back("server_info: the deployment (parallelism, weight and KV formats) is compared with the base "
                      "scenario's; the server's other settings (kernels, CUDA graphs, cache and scheduling policy) are not");
  // The server's batch limit, replayed as max_num_seqs when every server states the same one.
  const bool stated = std::all_of(batch_limits.begin(), batch_limits.end(), [&](const auto& b) { return b && *b == *batch_limits[0]; });
  if (!batch_limits.empty() && stated) {
    run.server_max_num_seqs = *batch_limits[0];
    run.notes.push_back("the server ran with max_running_requests " + std::to_string(*batch_limits[0]) +
                        "; the replay runs with it as max_num_seqs");
  } else if (std::any_of(batch_limits.begin(), batch_limits.end(), [](const auto& b) { return b.has_value(); })) {
    run.notes.push_back("the servers' max_running_requests differ: the base scenario's max_num_seqs is replayed");
  }
}

void check_server_deployment(const Scenario& replay, const BenchRun& run) {
  if (run.servers.empty() || !replay.serving || !replay.serving->simulation) return;
  std::map<serve::PoolRole, std::vector<const BenchServer*>> by_role;
  for (const BenchServer& s : run.servers) {
    check_precision(replay, run, s);
    by_role[s.role == "prefill" ? serve::PoolRole::Prefill : s.role == "decode" ? serve::PoolRole::Decode : serve::PoolRole::Mixed]
        .push_back(&s);
  }
  for (const auto& [role, servers] : by_role) check_role(replay, run, role, servers);
  // A disaggregated base replayed from a server that was not (or the other way round).
  for (const auto& p : replay.serving->simulation->cluster.pools)
    if (!by_role.count(p.role))
      refuse(error_code::kConstraint, run.file, run.servers.front().at,
             std::string("the base scenario has a ") + serve::to_string(p.role) + " pool ('" + p.name +
                 "'), but the file reports no server of that role" + kMakeItTheServers);
}

}  // namespace sightline::api::bench
