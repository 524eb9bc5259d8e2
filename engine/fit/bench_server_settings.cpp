// SGLang's server_info, read for the deployment it reports and compared with
// the replay's (fit/bench_server_settings.hpp says why).
#include "fit/bench_server_settings.hpp"

#include <algorithm>
#include <map>

#include "fit/bench_import_fields.hpp"
#include "fit/bench_server_args.hpp"
#include "comm/allreduce_policy.hpp"
#include "core/error.hpp"
#include "perf/graph_buckets.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_spec.hpp"

namespace sightline::fit::bench {

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

// SGLang's --dtype values that fix the activations' format ("auto": the checkpoint's).
const std::map<std::string, Dtype>& compute_formats() {
  static const std::map<std::string, Dtype> m = {
      {"bfloat16", Dtype::BF16}, {"bf16", Dtype::BF16}, {"float16", Dtype::FP16}, {"half", Dtype::FP16},
      {"fp16", Dtype::FP16},     {"float32", Dtype::FP32}, {"float", Dtype::FP32},
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

// Whether `value` (as JSON writes it) is one of `accepted` ("false|0", ...).
bool accepted_value(const char* accepted, const json& value) {
  const std::string v = value.dump();
  const char* start = accepted;
  for (const char* c = accepted;; ++c) {
    if (*c != '|' && *c != '\0') continue;
    if (v.size() == static_cast<size_t>(c - start) && v.compare(0, v.size(), start, v.size()) == 0) return true;
    if (*c == '\0') return false;
    start = c + 1;
  }
}

// An AtDefault argument (fit/bench_server_args.hpp) at another value than
// those accepted is refused at `here`; `who` ran it ("the mixed server").
void check_at_default(const ServerArg& a, const json& value, const std::string& here, const std::string& who, const BenchRun& run) {
  if (a.use == ServerArgUse::AtDefault && !value.is_null() && !accepted_value(a.accepted, value))
    refuse(error_code::kNotImplemented, run.file, here,
           who + " ran with " + a.key + " " + printable(value.dump(), 60) + ": " + a.why + " (" + a.accepted +
               "); such a run is not replayed");
}

// Every argument of one server against the table (fit/bench_server_args.hpp):
// each it knows is marked read, a changed AtDefault one refused at its key, a
// Held one recorded; one it does not know stays unread, so the file's key
// check refuses it at its place. The scheduler's copy (internal_states) is
// read key by key after the server's settings (read_scheduler_copy).
void walk_server_args(const json& object, const std::string& at, const std::string& role, bool held, BenchRun& run) {
  for (const auto& [key, value] : object.items()) {
    const ServerArg* a = server_arg(key);
    if (!a || a->use == ServerArgUse::SchedulerCopy) continue;
    const std::string here = pointer_append(at, key);
    check_at_default(*a, value, here, "the " + role + " server", run);
    if (held && a->use == ServerArgUse::Held) run.held_settings.push_back({role, key, value.dump(), here});
    run.used.push_back(here);
  }
}

// One key of a scheduler's copy at `here`, against the server's own argument
// (`server` at `server_at`). SGLang's scheduler resolves what the arguments
// leave to it (an attention backend, pp_max_micro_batch_size, the chunked
// prefix cache): a kernel choice is held over the fit's runs as it ran; a
// deployment, replayed or stack setting must be the argument the replay was
// compared with or written from, or the file contradicts itself; a setting the
// engine cannot express is accepted at its default only; the rest (what the
// scheduler measured when asked) change no figure, each with its table reason.
void read_resolved(const ServerArg& a, const json& value, const std::string& here, const json& server,
                   const std::string& server_at, const std::string& role, bool held, BenchRun& run) {
  const auto given = server.find(a.key);
  const bool same = given != server.end() && *given == value;
  const std::string who = "the " + role + " server's scheduler";
  if (!same && (a.use == ServerArgUse::Deployment || a.use == ServerArgUse::Replayed || a.use == ServerArgUse::Stack))
    refuse(error_code::kConstraint, run.file, here,
           who + " ran " + a.key + " " + printable(value.dump(), 60) + ", but the server's arguments say " +
               (given == server.end() ? std::string("nothing of it")
                                      : printable(given->dump(), 60) + " (at " + pointer_append(server_at, a.key) + ")") +
               ", which the replay " + (a.use == ServerArgUse::Replayed ? "writes" : "compares with the base scenario") +
               ": the file contradicts itself, so which one ran is not known; such a run is not replayed");
  check_at_default(a, value, here, who, run);
  if (held && a.use == ServerArgUse::Held) run.held_settings.push_back({role, std::string("internal_states/") + a.key, value.dump(), here});
  run.used.push_back(here);
}

// SGLang's scheduler's copy of a server's arguments (internal_states, one
// entry per data-parallel rank), each key read against them (read_resolved);
// a key the table does not know stays unread, so the file's key check
// refuses it at its place, as at the top.
void read_scheduler_copy(const json& server, const std::string& at, const std::string& role, bool held, BenchRun& run) {
  const auto states = server.find("internal_states");
  if (states == server.end() || states->is_null()) return;
  const std::string list_at = pointer_append(at, "internal_states");
  if (!states->is_array())
    refuse(error_code::kType, run.file, list_at,
           "internal_states must be a list (one scheduler per data-parallel rank), got " + printable(states->dump(), 40));
  if (states->empty()) run.used.push_back(list_at);
  for (size_t i = 0; i < states->size(); ++i) {
    const json& state = (*states)[i];
    const std::string state_at = pointer_append(list_at, i);
    if (!state.is_object())
      refuse(error_code::kType, run.file, state_at, "a scheduler's state must be an object, got " + printable(state.dump(), 40));
    if (state.empty()) run.used.push_back(state_at);
    for (const auto& [key, value] : state.items()) {
      const ServerArg* a = server_arg(key);
      if (a && a->use != ServerArgUse::SchedulerCopy)
        read_resolved(*a, value, pointer_append(state_at, key), server, at, role, held, run);
    }
  }
}

// serving.<section>.<key> = value for the replay; two servers that disagree
// on a setting the replay has once are refused at the second.
void replay_setting(BenchRun& run, const char* section, const char* key, json value, const std::string& from) {
  for (const BenchSetting& b : run.server_settings)
    if (b.section == section && b.key == key) {
      if (b.value != value)
        refuse(error_code::kNotImplemented, run.file, from,
               "the servers differ: " + printable(value.dump(), 40) + " here, " + printable(b.value.dump(), 40) + " at " +
                   b.from + "; the replay has one serving." + section + "." + key);
      return;
    }
  run.server_settings.push_back({section, key, std::move(value), from});
}

// The settings of one server the replay writes (fit/bench_server_args.cpp
// names each one's scenario key). A prefill server's scheduler and radix
// cache are what prompts meet; a decode server runs no prompt, so only the
// KV layout and memory are read from it. SGLang's prefill batch takes at most
// max_prefill_tokens new tokens and, with chunking on (chunked_prefill_size >
// 0), at most chunked_prefill_size (scheduler PrefillAdder): the replay's
// token budget per step. Without enable_mixed_chunk a prefill batch runs
// alone and the decodes wait (prefill_alone); with it the decodes run in the
// prefill's step (decode_first).
void read_replayed(const Fields& f, const std::string& role, BenchRun& run) {
  const bool prompts = role != "decode";
  if (prompts && f.has("disable_radix_cache"))
    replay_setting(run, "kv_cache", "prefix_caching", !f.flag("disable_radix_cache"), f.at("disable_radix_cache"));
  const auto chunk = f.maybe_integer("chunked_prefill_size", -1, 1 << 24);
  const auto prefill = f.maybe_integer("max_prefill_tokens", 1, 1 << 24);
  const bool chunking = chunk && *chunk > 0;
  if (prompts && (chunking || prefill)) {
    const bool by_chunk = chunking && (!prefill || *chunk <= *prefill);
    replay_setting(run, "scheduler", "max_num_batched_tokens", by_chunk ? *chunk : *prefill,
                   f.at(by_chunk ? "chunked_prefill_size" : "max_prefill_tokens"));
  }
  // Chunking off: every prompt is prefilled whole (whatever the stack's default policy).
  if (prompts && chunk && !chunking) replay_setting(run, "scheduler", "policy", "continuous", f.at("chunked_prefill_size"));
  if (role == "mixed" && f.has("enable_mixed_chunk"))
    replay_setting(run, "scheduler", "priority", f.flag("enable_mixed_chunk") ? "decode_first" : "prefill_alone",
                   f.at("enable_mixed_chunk"));
  if (const auto page = f.maybe_integer("page_size", 1, 4096)) replay_setting(run, "kv_cache", "block_size", *page, f.at("page_size"));
  if (const auto len = f.maybe_integer("context_length", 2, 1 << 30)) replay_setting(run, "kv_cache", "max_model_len", *len, f.at("context_length"));
  if (const auto mem = f.maybe("mem_fraction_static", 0.05, 1.0))
    replay_setting(run, "kv_cache", "gpu_memory_utilization", *mem, f.at("mem_fraction_static"));
}

// What the server says of CUDA graphs, its overlap scheduler and its custom all-reduce.
void read_stack_flags(const Fields& f, BenchServer& s, BenchRun& run) {
  auto negated = [&](const char* key) { return f.has(key) ? std::optional<bool>(!f.flag(key)) : std::nullopt; };
  s.cuda_graphs = negated("disable_cuda_graph");
  s.overlap = negated("disable_overlap_schedule");
  s.custom_all_reduce = negated("disable_custom_all_reduce");
  s.graph_max_bs = f.maybe_integer("cuda_graph_max_bs", 1, 1 << 20).value_or(0);
  if (const json* sizes = f.array("cuda_graph_bs"))
    for (size_t i = 0; i < sizes->size(); ++i) {
      const json& v = (*sizes)[i];
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > (1 << 20))
        refuse(error_code::kType, run.file, pointer_append(f.at("cuda_graph_bs"), i),
               "a captured batch size must be a whole number in [1, 1048576], got " + printable(v.dump(), 40));
      s.graph_batch_sizes.push_back(v.get<int64_t>());
    }
}

// One server's arguments (an object holding tp_size and the rest of ServerArgs).
// `own`: a server of the deployment (not a router's copy of one), whose
// settings the replay writes and a fit holds.
BenchServer read_server(const json& object, const std::string& at, const std::string& role, bool own, BenchRun& run,
                        std::vector<std::optional<int64_t>>& batch_limits) {
  const Fields f(object, run.file, at, nullptr);
  walk_server_args(object, at, role, own, run);
  if (own) read_replayed(f, role, run);
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
  s.activations = format_of(compute_formats(), f.text("dtype"), "dtype", at, run);
  s.load_balance = f.text("load_balance_method");
  read_stack_flags(f, s, run);
  batch_limits.push_back(f.maybe_integer("max_running_requests", 1, 1 << 24));
  read_scheduler_copy(object, at, role, own, run);
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

// `base` follows "the base scenario" ("'s software stack ..." or " runs tp 2 ...").
[[noreturn]] void contradicts(const BenchRun& run, const BenchServer& s, const std::string& key, const std::string& said,
                              const std::string& base) {
  refuse(error_code::kConstraint, run.file, pointer_append(s.at, key),
         "the " + s.role + " server ran " + said + ", but the base scenario" + base + kMakeItTheServers);
}

void check_precision(const Scenario& replay, const BenchRun& run, const BenchServer& s) {
  if (s.activations && *s.activations != replay.precision.activations)
    contradicts(run, s, "dtype", "in " + dtype_name(*s.activations),
                " computes in " + dtype_name(replay.precision.activations) + " (/precision/activations)");
  if (s.weights && *s.weights != replay.precision.weights)
    contradicts(run, s, "quantization", "with " + dtype_name(*s.weights) + " weights",
                " has " + dtype_name(replay.precision.weights) + " weights (/precision/weights)");
  if (s.kv_cache && *s.kv_cache != replay.precision.kv_cache)
    contradicts(run, s, "kv_cache_dtype", "with its KV cache in " + dtype_name(*s.kv_cache),
                " keeps it in " + dtype_name(replay.precision.kv_cache) + " (/precision/kv_cache)");
}

// SGLang's attention data parallelism (enable_dp_attention) splits a server's
// tp_size GPUs into dp_size ranks, each running attention on tp_size / dp_size
// of them, and runs the MoE layers over all tp_size GPUs, ep_size of them
// expert-parallel (SGLang's server_args.py, dp_attention.py). The engine says
// the same as a pool of tp tp_size / dp_size with dp_size replicas per server,
// serving.moe.attention_data_parallel dp_size and expert_parallel ep_size
// (scenario/simulation_spec.cpp, read_serving_moe): that layout, or a refusal
// at the key that differs with both layouts named. A server without it is
// attention_data_parallel 1.
struct EngineLayout {
  int64_t tp = 1, attention_dp = 1, ep = 1;
};

EngineLayout engine_layout(const BenchRun& run, const BenchServer& s) {
  if (!s.dp_attention) return {s.tp, 1, s.ep};
  if (s.tp % s.dp != 0)
    refuse(error_code::kConstraint, run.file, pointer_append(s.at, "dp_size"),
           "with enable_dp_attention each of the dp_size " + std::to_string(s.dp) +
               " ranks runs attention on tp_size / dp_size GPUs, but tp_size " + std::to_string(s.tp) + " is not a multiple of it");
  return {s.tp / s.dp, s.dp, s.ep};
}

std::string layout_words(const EngineLayout& l) {
  return "tp " + std::to_string(l.tp) + ", attention_data_parallel " + std::to_string(l.attention_dp) + ", expert_parallel " +
         std::to_string(l.ep);
}

void check_attention_layout(const Scenario& replay, const BenchRun& run, const BenchServer& s, const serve::PoolSpec& p) {
  const EngineLayout server = engine_layout(run, s);
  const EngineLayout base{p.layout.tp, replay.serving->simulation->moe.attention_data_parallel, p.layout.ep};
  const char* key = server.attention_dp != base.attention_dp ? (s.dp_attention ? "dp_size" : "enable_dp_attention")
                    : server.tp != base.tp                    ? "tp_size"
                    : replay.model.is_moe() && server.ep != base.ep ? "ep_size"
                                                                    : nullptr;
  if (!key) return;
  contradicts(run, s, key,
              "tp_size " + std::to_string(s.tp) + ", dp_size " + std::to_string(s.dp) + " and ep_size " + std::to_string(s.ep) +
                  (s.dp_attention ? " with" : " without") + " enable_dp_attention (the engine's " + layout_words(server) + ")",
              " runs " + layout_words(base) + " in its " + serve::to_string(p.role) +
                  " pool (/serving/cluster/pools, /serving/moe)");
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
  const bool attention_dp = replay.serving->simulation->moe.attention_data_parallel > 1 ||
                            std::any_of(servers.begin(), servers.end(), [](const BenchServer* s) { return s->dp_attention; });
  int64_t replicas = 0, server_replicas = 0;
  for (const serve::PoolSpec* p : mine) {
    replicas += p->replicas;
    if (attention_dp)
      for (const BenchServer* s : servers) check_attention_layout(replay, run, *s, *p);
    else if (p->layout.tp != first.tp)
      contradicts(run, first, "tp_size", "tp_size " + std::to_string(first.tp),
                  " runs tp " + std::to_string(p->layout.tp) + " in its " + serve::to_string(role) + " pool");
    if (p->layout.pp != first.pp)
      contradicts(run, first, "pp_size", "pp_size " + std::to_string(first.pp),
                  " runs pp " + std::to_string(p->layout.pp) + " in its " + serve::to_string(role) + " pool");
    if (!attention_dp && replay.model.is_moe() && p->layout.ep != first.ep)
      contradicts(run, first, "ep_size", "ep_size " + std::to_string(first.ep),
                  " runs ep " + std::to_string(p->layout.ep) + " in its " + serve::to_string(role) + " pool");
  }
  for (const BenchServer* s : servers) server_replicas += s->dp;
  if (replicas != server_replicas)
    contradicts(run, first, "dp_size",
                std::to_string(server_replicas) + " replica" + (server_replicas == 1 ? "" : "s") + " (dp_size over " +
                    std::to_string(servers.size()) + " server" + (servers.size() == 1 ? "" : "s") + ")",
                " has " + std::to_string(replicas) + " " + serve::to_string(role) + " replica" + (replicas == 1 ? "" : "s"));
}

// The most requests the run can have had in flight at once: its clients'
// cap, else every request it sent.
int64_t in_flight_bound(const BenchRun& run) {
  if (run.load == "closed_loop" && run.concurrency > 0) return run.concurrency;
  if (run.max_concurrency > 0) return run.max_concurrency;
  return std::max<int64_t>(1, run.requests);
}

// max_running_requests null: SGLang sizes its batch limit from its KV pool,
// min(max(pool tokens / context length x 512, 2048), 4096) requests
// (ModelRunner.init_memory_pool). A run with at most 2048 requests in flight
// met no such limit, nor does its replay at max_num_seqs = that count (the
// least a limit that never binds reserves); a larger run may have met either.
constexpr int64_t kSglangLeastBatchLimit = 2048;
void replay_unstated_limit(BenchRun& run, const std::string& at) {
  const int64_t most = in_flight_bound(run);
  if (most > kSglangLeastBatchLimit)
    refuse(error_code::kNotImplemented, run.file, at,
           "max_running_requests is null: SGLang sized its batch limit from its KV pool (2048 to 4096 requests), and "
           "this run could have " + std::to_string(most) + " requests in flight, so which limit bound it is not known; "
           "such a run is not replayed (one from a server started with --max-running-requests is)");
  run.server_max_num_seqs = most;
  run.notes.push_back("max_running_requests null: SGLang's own limit (at least 2048 requests) never bound a run with at most " +
                      std::to_string(most) + " requests in flight; the replay runs with max_num_seqs " + std::to_string(most));
}

// The base's stack against what a server says of its host side.
void check_graphs(const Scenario& replay, const BenchRun& run, const BenchServer& s);

void check_stack(const Scenario& replay, const BenchRun& run, const BenchServer& s) {
  const SoftwareStack& stack = replay.cost_model.software_stack;
  const std::string named = "'s software stack '" + stack.id + "' (/cost_model/software_stack)";
  auto on_off = [](bool on) { return on ? std::string("with") : std::string("without"); };
  if (s.overlap && *s.overlap != stack.overlap_scheduler)
    contradicts(run, s, "disable_overlap_schedule", on_off(*s.overlap) + " the overlap scheduler", named + " runs " + on_off(stack.overlap_scheduler) + " it");
  if (s.custom_all_reduce && s.tp > 1) {
    const auto& impls = stack.all_reduce.implementations;
    const bool custom = std::any_of(impls.begin(), impls.end(), [](const auto& i) { return i.algorithm != AllReduceAlgorithm::Nccl; });
    if (custom != *s.custom_all_reduce)
      contradicts(run, s, "disable_custom_all_reduce", on_off(*s.custom_all_reduce) + " its custom all-reduce", named + " runs " + on_off(custom) + " one");
  }
  // SGLang captures graphs for decode batches: a prefill server runs none.
  if (s.role == "prefill" || !s.cuda_graphs) return;
  if (*s.cuda_graphs != (stack.cuda_graphs != "none"))
    contradicts(run, s, "disable_cuda_graph", on_off(*s.cuda_graphs) + " CUDA graphs", named + " runs " + on_off(!*s.cuda_graphs) + " them");
  if (*s.cuda_graphs) check_graphs(replay, run, s);
}

// Every decode batch the replay can run (up to its max_num_seqs and the run's
// requests in flight) must replay the same captured size, or run eagerly, on
// the server's list (cuda_graph_bs; without it, every size up to
// cuda_graph_max_bs) as on the stack's.
void check_graphs(const Scenario& replay, const BenchRun& run, const BenchServer& s) {
  if (s.graph_batch_sizes.empty() && s.graph_max_bs == 0) return;
  const GraphBuckets& stack = replay.cost_model.software_stack.graph_batch_sizes;
  const int64_t most = std::min({replay.serving->simulation->scheduler.max_num_seqs, in_flight_bound(run), int64_t{1} << 20});
  for (int64_t b = 1; b <= most; ++b) {
    int64_t server = 0;
    if (s.graph_batch_sizes.empty()) server = b <= s.graph_max_bs ? b : 0;
    else
      for (int64_t size : s.graph_batch_sizes)
        if (size >= b && (server == 0 || size < server)) server = size;
    const int64_t base = graph_bucket(stack, b);
    const bool differs = s.graph_batch_sizes.empty() ? (server == 0) != (base == 0) : server != base;
    if (!differs) continue;
    auto as = [](int64_t g) { return g == 0 ? std::string("eagerly") : "as its graph of " + std::to_string(g); };
    contradicts(run, s, s.graph_batch_sizes.empty() ? "cuda_graph_max_bs" : "cuda_graph_bs",
                "a decode batch of " + std::to_string(b) + " " + as(server),
                "'s software stack '" + replay.cost_model.software_stack.id + "' runs it " + as(base) +
                    " (/cost_model/software_stack)");
  }
}

// SGLang's DP controller spreads requests over dp_size replicas: round_robin,
// or shortest_queue (the fewest requests in flight); the base's router must be that one.
void check_router(const Scenario& replay, const BenchRun& run, const BenchServer& s) {
  if (s.dp <= 1 || s.dp_attention || s.load_balance.empty()) return;
  const serve::RouterKind router = replay.serving->simulation->cluster.router;
  const bool same = (s.load_balance == "round_robin" && router == serve::RouterKind::RoundRobin) ||
                    (s.load_balance == "shortest_queue" && router == serve::RouterKind::LeastOutstanding);
  if (!same)
    contradicts(run, s, "load_balance_method", "its " + std::to_string(s.dp) + " replicas with load_balance_method '" +
                printable(s.load_balance, 30) + "'", " routes with '" + std::string(serve::to_string(router)) +
                "' (/serving/cluster/router; round_robin and shortest_queue have the engine's round_robin and least_outstanding)");
}

// The base's scheduler must batch as SGLang does: continuously (a static batch is not SGLang's).
void check_scheduler(const Scenario& replay, const BenchRun& run, const BenchServer& s) {
  if (replay.serving->simulation->scheduler.policy == serve::SchedulerPolicy::Static)
    refuse(error_code::kConstraint, run.file, s.at,
           "the " + s.role + " server batches continuously, but the base scenario's scheduler is static (/serving/scheduler/policy)" +
               kMakeItTheServers);
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
      run.servers.push_back(read_server((*list)[i], pointer_append(at, i), role, true, run, batch_limits));
    listed = true;
  }
  std::string at = info_at;
  if (const json* args = server_arguments(*info, at)) {
    // A router's own state when it lists servers (checked for speculation only), else the one server.
    std::vector<std::optional<int64_t>> unused;
    const BenchServer s = read_server(*args, at, role_of_mode(*args), !listed, run, listed ? unused : batch_limits);
    if (!listed) run.servers.push_back(s);
  }
  if (run.servers.empty()) {
    run.notes.push_back("server_info names no server arguments (tp_size): the deployment is not compared");
    return;
  }
  run.notes.push_back("server_info: the deployment (parallelism, formats, roles, router) and the software stack (CUDA "
                      "graphs, overlap scheduler, custom all-reduce) are compared with the base scenario's; " +
                      std::to_string(run.server_settings.size()) + " scheduler and KV settings are replayed; kernel "
                      "choices are held equal over a fit's runs (docs/calibrate-from-benchmarks.md)");
  // The server's batch limit, replayed as max_num_seqs when every server states the same one.
  const bool stated = std::all_of(batch_limits.begin(), batch_limits.end(), [&](const auto& b) { return b && *b == *batch_limits[0]; });
  if (!batch_limits.empty() && stated) {
    run.server_max_num_seqs = *batch_limits[0];
    run.notes.push_back("the server ran with max_running_requests " + std::to_string(*batch_limits[0]) +
                        "; the replay runs with it as max_num_seqs");
  } else if (std::any_of(batch_limits.begin(), batch_limits.end(), [](const auto& b) { return b.has_value(); })) {
    run.notes.push_back("the servers' max_running_requests differ: the base scenario's max_num_seqs is replayed");
  } else {
    replay_unstated_limit(run, pointer_append(run.servers.front().at, "max_running_requests"));
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
  // Then how each server ran: its host side, DP routing and batching.
  for (const BenchServer& s : run.servers) {
    check_stack(replay, run, s);
    check_router(replay, run, s);
    check_scheduler(replay, run, s);
  }
}

}  // namespace sightline::fit::bench

namespace sightline::fit::bench {

void check_held_settings(const std::vector<BenchRun>& runs) {
  std::map<std::pair<std::string, std::string>, std::pair<const BenchRun*, const HeldSetting*>> first;
  for (const BenchRun& r : runs)
    for (const HeldSetting& h : r.held_settings) {
      const auto [it, fresh] = first.emplace(std::make_pair(h.role, h.key), std::make_pair(&r, &h));
      if (fresh || it->second.second->value == h.value) continue;
      const BenchRun& other = *it->second.first;
      refuse(error_code::kConstraint, r.file, h.at,
             "the " + h.role + " server ran " + h.key + " " + printable(h.value, 60) + ", but " + other.file + other.where +
                 " ran it " + printable(it->second.second->value, 60) + " (at " + it->second.second->at +
                 "): a kernel or compile choice, which the calibration's factors measure; fit the runs of each setting apart");
    }
}

}  // namespace sightline::fit::bench
