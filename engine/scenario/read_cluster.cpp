// serving.cluster (pools, routers, links) and each replica's scheduler, KV
// cache and speculative decoding.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/parameter_schema.hpp"
#include "scenario/checks.hpp"
#include "scenario/policy_registry.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_sections.hpp"

namespace sightline::serve {

namespace {

void check_layout(const ModelArch& m, const ParallelLayout& l, const HardwareSpec& hw, const std::string& tp_path,
                  const std::string& pp_path) {
  check_tensor_parallel(m, l.tp, tp_path);
  if (m.num_layers % l.pp != 0)
    fail(error_code::kConstraint, pp_path,
         "pp (" + std::to_string(l.pp) + ") must divide num_layers (" + std::to_string(m.num_layers) + ")");
  if (l.tp > hw.gpus_per_node)
    fail(error_code::kConstraint, tp_path,
         "tp (" + std::to_string(l.tp) + ") must fit inside one node (gpus_per_node = " +
             std::to_string(hw.gpus_per_node) + ")");
}

// The layout without pools: serving.parallelism's tp × pp (1 × 1 by default) repeated
// over every GPU of the hardware, as one pool of mixed replicas. The page relies on
// this rule rather than computing replica counts itself.
PoolSpec parallelism_pool(const Scenario& s, const ParallelLayout& layout, const std::string& parallelism_path) {
  const std::string tp_path = pointer_append(parallelism_path, "tp");
  check_layout(s.model, layout, s.hardware, tp_path, pointer_append(parallelism_path, "pp"));
  const int total = s.hardware.total_gpus();
  const int per = layout.tp * layout.pp;
  if (total % per != 0)
    fail(error_code::kConstraint, tp_path,
         "tp × pp = " + std::to_string(per) + " does not divide the " + std::to_string(total) +
             " GPUs of the hardware into whole replicas");
  PoolSpec p;
  p.name = "replicas";
  p.replicas = total / per;
  p.layout = layout;
  return p;
}

}  // namespace

ClusterSpec read_cluster(const json* v, const std::string& path, const Scenario& s, const ParallelLayout& default_layout,
                         bool has_parallelism, const std::string& parallelism_path) {
  ClusterSpec c;
  const int total = s.hardware.total_gpus();
  if (!v) {
    c.pools.push_back(parallelism_pool(s, default_layout, parallelism_path));
    return c;
  }
  ObjectReader r(*v, path, {"router", "router_load_bound", "pools", "kv_transfer_link"});
  if (has_parallelism && r.has("pools"))
    fail(error_code::kConstraint, parallelism_path,
         "with serving.cluster.pools the parallelism is given per pool; remove serving.parallelism");
  c.router = pick<RouterKind>(r.choice("router", registry_names(routers()), "round_robin"),
                              {{"round_robin", RouterKind::RoundRobin},
                               {"least_outstanding", RouterKind::LeastOutstanding},
                               {"least_kv_load", RouterKind::LeastKvLoad},
                               {"prefix_affinity", RouterKind::PrefixAffinity},
                               {"session_affinity", RouterKind::SessionAffinity},
                               {"kv_aware", RouterKind::KvAware}});
  if (r.has("router_load_bound")) {
    if (c.router != RouterKind::PrefixAffinity)
      fail(error_code::kConstraint, r.child_path("router_load_bound"),
           "router_load_bound applies to router \"prefix_affinity\" only");
    c.router_load_bound = r.number("router_load_bound", 1.0, 100.0);
    c.router_load_bound_given = true;
  }
  record_parameter(r.child_path("pools"), "array");
  if (!r.has("pools")) {
    // A router (or nothing) without pools: serving.parallelism's single pool.
    c.pools.push_back(parallelism_pool(s, default_layout, parallelism_path));
    if (r.has("kv_transfer_link"))
      fail(error_code::kConstraint, r.child_path("kv_transfer_link"),
           "kv_transfer_link needs prefill and decode pools (disaggregated serving)");
    return c;
  }
  const json& pools = r.required("pools");
  const std::string ppath = r.child_path("pools");
  if (!pools.is_array() || pools.empty())
    fail(pools.is_array() ? error_code::kInvalidValue : error_code::kType, ppath, "expected a non-empty array of pools");
  if (pools.size() > 64) fail(error_code::kRange, ppath, "at most 64 pools");
  int used = 0;
  int n_prefill = 0, n_decode = 0, n_mixed = 0;
  for (size_t i = 0; i < pools.size(); ++i) {
    const std::string ip = pointer_append(ppath, i);
    ObjectReader pr(pools[i], ip, {"name", "replicas", "tp", "pp", "gpu", "role", "intra_node"});
    PoolSpec p;
    p.name = pr.string("name", "pool" + std::to_string(i));
    p.replicas = static_cast<int>(pr.integer("replicas", 1, 4096, 1));
    p.layout.tp = static_cast<int>(pr.integer("tp", 1, 1024, 1));
    p.layout.pp = static_cast<int>(pr.integer("pp", 1, 1024, 1));
    if (const json* g = pr.find("gpu")) {
      p.gpu = read_gpu(*g, pr.child_path("gpu"));
      // The same precision checks as the scenario's own GPU, located at the pool's GPU.
      const std::string gpu_path = pr.child_path("gpu");
      check_precision_on_gpu(s.precision, *p.gpu, [&gpu_path](const char*) { return gpu_path; });
    }
    if (const json* link = pr.find("intra_node")) {
      p.intra_node = read_interconnect(*link, pr.child_path("intra_node"));
      if (p.intra_node->scope != "intra_node")
        fail(error_code::kConstraint, pr.child_path("intra_node"),
             "interconnect '" + p.intra_node->id + "' is an inter-node network; a pool's intra_node links its GPUs");
    } else if (p.gpu && !p.gpu->default_intra_node.empty() && p.gpu->id != s.hardware.gpu.id) {
      p.intra_node = read_interconnect(json(p.gpu->default_intra_node), pr.child_path("gpu"));
    }
    if (p.intra_node && p.intra_node->domain_gpus > 0 && p.layout.tp * p.layout.pp > p.intra_node->domain_gpus)
      fail(error_code::kConstraint, pr.child_path("tp"),
           "tp x pp (" + std::to_string(p.layout.tp * p.layout.pp) + ") exceeds the " +
               std::to_string(p.intra_node->domain_gpus) + " GPUs one '" + p.intra_node->id + "' domain joins");
    p.role = pick<PoolRole>(pr.choice("role", registry_names(pool_roles()), "mixed"),
                            {{"mixed", PoolRole::Mixed}, {"prefill", PoolRole::Prefill}, {"decode", PoolRole::Decode}});
    check_layout(s.model, p.layout, s.hardware, pr.child_path("tp"), pr.child_path("pp"));
    used += p.replicas * p.layout.tp * p.layout.pp;
    (p.role == PoolRole::Prefill ? n_prefill : p.role == PoolRole::Decode ? n_decode : n_mixed)++;
    c.pools.push_back(p);
  }
  if (used != total)
    fail(error_code::kConstraint, ppath,
         "the pools use " + std::to_string(used) + " GPUs (replicas × tp × pp), but the hardware has " +
             std::to_string(total) + " (gpus_per_node × nodes); they must match");
  if ((n_prefill > 0 || n_decode > 0) && (n_mixed > 0 || n_prefill == 0 || n_decode == 0))
    fail(error_code::kConstraint, ppath,
         "disaggregated serving needs at least one 'prefill' and one 'decode' pool and no 'mixed' pool");
  c.disaggregated = n_prefill > 0;
  if (const json* link = r.find("kv_transfer_link")) {
    if (!c.disaggregated)
      fail(error_code::kConstraint, r.child_path("kv_transfer_link"),
           "kv_transfer_link needs prefill and decode pools (disaggregated serving)");
    c.kv_transfer_link = read_interconnect(*link, r.child_path("kv_transfer_link"));
  } else if (c.disaggregated) {
    if (s.hardware.nodes > 1 && s.hardware.inter_node) c.kv_transfer_link = *s.hardware.inter_node;
    else if (s.hardware.intra_node) c.kv_transfer_link = *s.hardware.intra_node;
    else {
      InterconnectSpec pcie;
      pcie.id = "gpu-pcie";
      pcie.name = "PCIe of " + s.hardware.gpu.name;
      pcie.source = "the GPU preset's pcie_bandwidth_GBps";
      pcie.kind = "pcie";
      pcie.scope = "intra_node";
      pcie.bandwidth_per_gpu_GBps = s.hardware.gpu.pcie_bandwidth_GBps;
      pcie.latency_us = 5;
      c.kv_transfer_link = pcie;
    }
  }
  return c;
}

namespace {

const std::vector<std::pair<const char*, SchedulerPolicy>>& policy_table() {
  static const std::vector<std::pair<const char*, SchedulerPolicy>> t = {
      {"continuous", SchedulerPolicy::Continuous},
      {"chunked_prefill", SchedulerPolicy::ChunkedPrefill},
      {"static", SchedulerPolicy::Static}};
  return t;
}

const std::vector<std::pair<const char*, Priority>>& priority_table() {
  static const std::vector<std::pair<const char*, Priority>> t = {{"prefill_first", Priority::PrefillFirst},
                                                                   {"decode_first", Priority::DecodeFirst},
                                                                   {"prefill_alone", Priority::PrefillAlone},
                                                                   {"fcfs", Priority::Fcfs}};
  return t;
}

}  // namespace

SchedulerPolicy scheduler_policy_named(const std::string& name) { return pick<SchedulerPolicy>(name, policy_table()); }
Priority scheduler_priority_named(const std::string& name) { return pick<Priority>(name, priority_table()); }

std::string scheduler_policy_run(const std::string& given, const std::string& stack_default) {
  return !given.empty() ? given : !stack_default.empty() ? stack_default : "continuous";
}

SchedulerSpec read_scheduler(const json* v, const std::string& path, int64_t max_len,
                             const std::optional<StackSchedulerDefault>& stack) {
  SchedulerSpec sc;
  const json empty = json::object();
  // The scenario's policy, else its stack's: the keys follow the policy run.
  const std::string given_policy = v ? peek_string(*v, "policy") : "";
  const std::string default_policy = scheduler_policy_run("", stack ? to_string(stack->policy) : "");
  const std::string policy = scheduler_policy_run(given_policy, default_policy);
  std::vector<std::string> keys = {"policy", "priority", "max_num_seqs", "cpu_overhead_us"};
  if (policy == "static") keys.insert(keys.end(), {"batch_size", "max_wait_ms", "max_num_batched_tokens"});
  else if (policy == "chunked_prefill") keys.insert(keys.end(), {"chunk_size", "max_prefill_chunk"});
  else if (policy == "continuous") keys.insert(keys.end(), {"max_num_batched_tokens"});
  else keys.insert(keys.end(), {"batch_size", "max_wait_ms", "max_num_batched_tokens", "chunk_size", "max_prefill_chunk"});
  ObjectReader r(v ? *v : empty, path, keys);
  sc.policy = scheduler_policy_named(r.choice("policy", registry_names(scheduler_policies()), default_policy));
  // The stack's priority goes with the stack's policy; another policy runs its own.
  const bool stack_policy = stack && sc.policy == stack->policy;
  const char* default_priority = stack_policy                                   ? to_string(stack->priority)
                                 : sc.policy == SchedulerPolicy::Continuous     ? "prefill_first"
                                 : sc.policy == SchedulerPolicy::ChunkedPrefill ? "decode_first"
                                                                                : "fcfs";
  sc.priority = scheduler_priority_named(r.choice("priority", registry_names(scheduler_priorities()), default_priority));
  sc.max_num_seqs = r.integer("max_num_seqs", 1, 65536, 256);
  sc.cpu_overhead_us = r.number("cpu_overhead_us", 0.0, 1e6, 0.0);
  if (sc.policy == SchedulerPolicy::ChunkedPrefill) {
    sc.max_num_batched_tokens = r.integer("chunk_size", 1, 1 << 20, stack_policy ? stack->token_budget : 512);
    sc.max_prefill_chunk = r.integer("max_prefill_chunk", 1, sc.max_num_batched_tokens, sc.max_num_batched_tokens);
  } else {
    const bool stack_budget = stack_policy && stack->token_budget > 0;
    sc.max_num_batched_tokens = r.integer("max_num_batched_tokens", 1, 1 << 24,
                                          stack_budget ? stack->token_budget : std::max<int64_t>(max_len, 2048));
  }
  if (sc.policy == SchedulerPolicy::Static) {
    sc.batch_size = r.integer("batch_size", 1, 65536, 8);
    sc.max_wait_ms = r.number("max_wait_ms", 0.0, 1e7, 0.0);
    if (sc.batch_size > sc.max_num_seqs) sc.max_num_seqs = sc.batch_size;
  }
  if (stack && given_policy.empty()) sc.policy_source = stack->source;
  return sc;
}

json scheduler_to_json(const SchedulerSpec& sc) {
  json j = {{"policy", to_string(sc.policy)},
            {"priority", to_string(sc.priority)},
            {"max_num_seqs", sc.max_num_seqs},
            {"cpu_overhead_us", sc.cpu_overhead_us}};
  if (sc.policy == SchedulerPolicy::ChunkedPrefill) {
    j["chunk_size"] = sc.max_num_batched_tokens;
    j["max_prefill_chunk"] = sc.max_prefill_chunk;
  }
  else j["max_num_batched_tokens"] = sc.max_num_batched_tokens;
  if (sc.policy == SchedulerPolicy::Static) {
    j["batch_size"] = sc.batch_size;
    j["max_wait_ms"] = sc.max_wait_ms;
  }
  return j;
}

namespace {

const std::vector<std::pair<const char*, KvAdmission>>& admission_table() {
  static const std::vector<std::pair<const char*, KvAdmission>> t = {
      {"on_demand", KvAdmission::OnDemand}, {"to_completion", KvAdmission::ToCompletion}};
  return t;
}

// The stack's default admission, its name checked against the registry as a
// scenario's own is, at the stack's key (its reader, a layer down, cannot see it).
std::optional<KvAdmission> stack_kv_admission(const SoftwareStack& stack) {
  if (!stack.default_kv_admission) return std::nullopt;
  const StackKvAdmission& d = *stack.default_kv_admission;
  const json names = {{"admission", d.admission}};
  ObjectReader r(names, d.path, {"admission"});
  return pick<KvAdmission>(r.choice("admission", registry_names(kv_admissions())), admission_table());
}

}  // namespace

KvCacheSpec read_kv(const json* v, const std::string& path, const ModelArch& m, const SoftwareStack& stack) {
  KvCacheSpec kv;
  kv.max_model_len = m.max_context;
  const std::optional<KvAdmission> stack_admission = stack_kv_admission(stack);
  const json empty = json::object();
  ObjectReader r(v ? *v : empty, path,
                 {"allocation", "block_size", "gpu_memory_utilization", "watermark", "preemption", "admission",
                  "swap_space_GiB", "prefix_caching", "max_model_len", "offload"});
  kv.allocation = pick<KvAllocation>(r.choice("allocation", registry_names(kv_allocations()), "paged"),
                                     {{"paged", KvAllocation::Paged}, {"contiguous", KvAllocation::Contiguous}});
  // The scenario's admission, else its stack's; contiguous allocation
  // reserves max_model_len a request, more than any admission would.
  const bool contiguous = kv.allocation == KvAllocation::Contiguous;
  if (contiguous && r.has("admission"))
    fail(error_code::kConstraint, r.child_path("admission"),
         "contiguous allocation reserves max_model_len tokens a request on admission; admission chooses between "
         "paged policies");
  const char* default_admission = stack_admission && !contiguous ? to_string(*stack_admission) : "on_demand";
  kv.admission = pick<KvAdmission>(r.choice("admission", registry_names(kv_admissions()), default_admission),
                                   admission_table());
  if (stack_admission && !contiguous && !r.has("admission"))
    kv.admission_source = std::string(to_string(kv.admission)) + ": the default of software stack '" + stack.id +
                          "' (its default_kv_admission)";
  kv.block_size = r.integer("block_size", 1, 4096, 16);
  kv.gpu_memory_utilization = r.number("gpu_memory_utilization", 0.05, 1.0, 0.9);
  kv.watermark = r.number("watermark", 0.0, 0.5, 0.01);
  kv.preemption = pick<PreemptionMode>(r.choice("preemption", registry_names(preemption_modes()), "recompute"),
                                       {{"recompute", PreemptionMode::Recompute}, {"swap", PreemptionMode::Swap}});
  kv.swap_space_GiB = r.number("swap_space_GiB", 0.0, 1e5, 4.0);
  kv.prefix_caching = r.boolean("prefix_caching", false);
  kv.max_model_len = r.integer("max_model_len", 2, m.max_context, m.max_context);
  if (kv.allocation == KvAllocation::Contiguous && kv.prefix_caching)
    fail(error_code::kConstraint, r.child_path("prefix_caching"),
         "prefix caching shares KV blocks and needs allocation \"paged\"");
  if (const json* off = r.find("offload")) {
    if (!kv.prefix_caching)
      fail(error_code::kConstraint, r.child_path("offload"),
           "offload tiers hold blocks the prefix cache evicts: set prefix_caching to true");
    read_kv_offload(*off, r.child_path("offload"), kv);
  }
  return kv;
}

SpeculativeSpec read_speculative(const json* v, const std::string& path, const Scenario& s, const ClusterSpec& c,
                                 const SchedulerSpec& sc) {
  SpeculativeSpec sp;
  if (!v) return sp;
  const std::string method = peek_string(*v, "method");
  std::vector<std::string> keys = {"method", "k", "acceptance_rate"};
  if (method == "draft") keys.insert(keys.end(), {"draft_model", "draft_tp"});
  else if (method == "ngram") keys.insert(keys.end(), {"ngram_lookup_us"});
  else if (method != "mtp" && method != "eagle3") keys.insert(keys.end(), {"draft_model", "draft_tp", "ngram_lookup_us"});
  ObjectReader r(*v, path, keys);
  const std::string name = r.choice("method", registry_names(speculative_methods()));
  sp.method = name == "draft"    ? SpecMethod::Draft
              : name == "mtp"    ? SpecMethod::Mtp
              : name == "eagle3" ? SpecMethod::Eagle3
                                 : SpecMethod::Ngram;
  sp.k = static_cast<int>(r.integer("k", 1, 16, 5));
  // The user's rate wins; without one, the published rows for the method, and
  // 0.7 (the schema's default, which the page shows) where no row matches.
  sp.acceptance_rate = r.number("acceptance_rate", 0.0, 1.0, 0.7);
  if (!r.find("acceptance_rate")) {
    sp.published = published_acceptance(s.model.id, name == "draft" ? "draft_model" : name);
    sp.acceptance_assumed = !sp.published;
    if (sp.published) sp.acceptance_rate = sp.published->rate;
  }
  int min_tp = 1 << 30;
  for (const auto& p : c.pools) min_tp = std::min(min_tp, p.layout.tp);
  if (sp.method == SpecMethod::Draft) {
    record_parameter(r.child_path("draft_model"), "preset");
    sp.draft_model = read_model(r.required("draft_model"), r.child_path("draft_model"));
    if (sp.draft_model->vocab_size != s.model.vocab_size)
      fail(error_code::kConstraint, r.child_path("draft_model"),
           "the draft model's vocabulary (" + std::to_string(sp.draft_model->vocab_size) +
               ") must equal the target's (" + std::to_string(s.model.vocab_size) + ")");
    sp.draft_tp = static_cast<int>(r.integer("draft_tp", 1, 1024, min_tp));
    if (sp.draft_tp > min_tp)
      fail(error_code::kConstraint, r.child_path("draft_tp"),
           "draft_tp (" + std::to_string(sp.draft_tp) + ") must not exceed the target's tp (" + std::to_string(min_tp) + ")");
    check_tensor_parallel(*sp.draft_model, sp.draft_tp, r.child_path("draft_tp"));
  } else if (sp.method == SpecMethod::Mtp) {
    // The draft is the model's own MTP module(s), on the target's GPUs.
    if (s.model.mtp_layers <= 0)
      fail(error_code::kConstraint, r.child_path("method"),
           "method \"mtp\" drafts with the model's multi-token-prediction layers, and model '" + s.model.id +
               "' has none (mtp_layers 0; DeepSeek-V3/R1 and GLM-4.5 configs carry num_nextn_predict_layers). "
               "Use \"draft\" with a draft model or \"ngram\"");
  } else if (sp.method == SpecMethod::Eagle3) {
    // The head is one dense decoder layer of the target's shape; the shape of
    // a head for an MoE target is the head's own (not derivable from the target).
    if (s.model.is_moe())
      fail(error_code::kConstraint, r.child_path("method"),
           "method \"eagle3\" prices the head as one dense layer of the target, and model '" + s.model.id +
               "' is MoE, whose EAGLE-3 heads have their own shape: use \"draft\" with the head as draft_model");
  } else {
    sp.ngram_lookup_us = r.number("ngram_lookup_us", 0.0, 1e5, 20.0);
  }
  if (sc.policy == SchedulerPolicy::Static)
    fail(error_code::kConstraint, r.path(), "speculative decoding needs a continuous or chunked_prefill scheduler");
  return sp;
}

json speculative_to_json(const SpeculativeSpec& sp) {
  if (sp.method == SpecMethod::None) return nullptr;
  json j = {{"method", to_string(sp.method)}, {"k", sp.k}, {"acceptance_rate", sp.acceptance_rate}};
  if (sp.method == SpecMethod::Draft) {
    j["draft_model"] = sp.draft_model->to_json();
    j["draft_tp"] = sp.draft_tp;
  } else if (sp.method == SpecMethod::Ngram) {
    j["ngram_lookup_us"] = sp.ngram_lookup_us;
  }
  return j;
}

}  // namespace sightline::serve
