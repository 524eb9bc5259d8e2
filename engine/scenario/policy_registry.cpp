#include "scenario/policy_registry.hpp"

#include <algorithm>

namespace sightline::serve {

namespace {
// Every arrival process once: its name, description, the keys it takes and
// whether the steady-state verdict can judge it (policy_registry.hpp).
const std::vector<ArrivalProcessRules>& arrival_table() {
  static const std::vector<ArrivalProcessRules> t = {
      {"poisson", "exponential inter-arrival times at rate_qps", {"rate_qps", "max_concurrency"}, true},
      {"gamma", "gamma inter-arrival times at rate_qps with coefficient of variation cv (burstiness; cv 1 = Poisson)",
       {"rate_qps", "cv", "max_concurrency"}, true},
      {"fixed", "one request every 1/rate_qps seconds", {"rate_qps", "max_concurrency"}, true},
      {"all_at_once", "every request arrives at time 0 (offline batch)", {}, false},
      {"closed_loop",
       "concurrency clients, each sending its next request think_time_s (default 0) after its previous one ends (a benchmark's max concurrency)",
       {"concurrency", "think_time_s"}, false},
      {"trace", "replay inline CSV rows arrival_s,prompt_tokens,output_tokens[,prefix_group,prefix_tokens]", {"csv"}, true},
  };
  return t;
}
}  // namespace

const std::vector<RegistryEntry>& arrival_processes() {
  static const std::vector<RegistryEntry> r = [] {
    std::vector<RegistryEntry> out;
    for (const ArrivalProcessRules& a : arrival_table()) out.push_back({a.name, a.description});
    return out;
  }();
  return r;
}

const ArrivalProcessRules* arrival_process_rules(const std::string& name) {
  for (const ArrivalProcessRules& r : arrival_table())
    if (name == r.name) return &r;
  return nullptr;
}

const std::vector<std::string>& arrival_keys_of_any_process() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const ArrivalProcessRules& a : arrival_table())
      for (const std::string& k : a.keys)
        if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    return out;
  }();
  return keys;
}

const std::vector<RegistryEntry>& length_distributions() {
  static const std::vector<RegistryEntry> r = {
      {"fixed", "always value"},
      {"uniform", "uniform integers in [min, max]"},
      {"normal", "normal(mean, stddev), rounded and clamped to [min, max]"},
      {"lognormal", "lognormal with the given mean and cv (stddev/mean), rounded and clamped to [min, max]"},
      {"zipf", "zipf over [min, max]: P(min + i) proportional to (i + 1)^-theta"},
  };
  return r;
}

const std::vector<RegistryEntry>& routers() {
  static const std::vector<RegistryEntry> r = {
      {"round_robin", "replicas in turn"},
      {"least_outstanding", "the replica with the fewest unfinished requests"},
      {"least_kv_load", "the replica with the smallest share of KV blocks used or asked for by its queue"},
      {"prefix_affinity",
       "the replica whose prefix cache (HBM or offload tiers) holds the longest prefix of the prompt, among those within the load bound "
       "(router_load_bound x the mean outstanding + 1); ties and misses to the fewest outstanding"},
      {"session_affinity",
       "every turn of a session to the replica of its first turn; first turns and single requests to the fewest "
       "outstanding"},
      {"kv_aware",
       "the least cost: prompt tokens to compute there + tokens reloaded from offload tiers weighted by reload time "
       "over prefill time + its queued prompt tokens + its KV tokens in use"},
  };
  return r;
}

const std::vector<RegistryEntry>& pool_roles() {
  static const std::vector<RegistryEntry> r = {
      {"mixed", "prefill and decode on the same replicas"},
      {"prefill", "disaggregated: prompts only; the KV cache then moves to a decode replica"},
      {"decode", "disaggregated: decodes only, after the KV transfer"},
  };
  return r;
}

const std::vector<RegistryEntry>& scheduler_policies() {
  static const std::vector<RegistryEntry> r = {
      {"continuous", "iteration-level batching with vLLM limits (max_num_seqs, max_num_batched_tokens, KV watermark)"},
      {"chunked_prefill", "Sarathi-style: a token budget (chunk_size) per step, prompts split into chunks"},
      {"static", "request-level batches padded to the longest; a batch runs to its end before the next starts"},
  };
  return r;
}

const std::vector<RegistryEntry>& scheduler_priorities() {
  static const std::vector<RegistryEntry> r = {
      {"prefill_first", "admitted prompts run in their own step and stall decodes (vLLM v0 default)"},
      {"decode_first", "running decodes are always scheduled; prompts fill the remaining token budget (stall-free)"},
      {"prefill_alone",
       "a step that takes prompt tokens takes nothing else: decodes wait for a step without prompts (SGLang without "
       "--enable-mixed-chunk; under continuous the same as prefill_first)"},
      {"fcfs", "the token budget goes to requests in arrival order, running or waiting"},
  };
  return r;
}

const std::vector<RegistryEntry>& kv_allocations() {
  static const std::vector<RegistryEntry> r = {
      {"paged", "PagedAttention: blocks allocated on demand as sequences grow"},
      {"contiguous", "each request reserves max_model_len tokens on admission (reports fragmentation)"},
  };
  return r;
}

const std::vector<RegistryEntry>& kv_admissions() {
  static const std::vector<RegistryEntry> r = {
      {"on_demand", "blocks as a sequence grows, preempted when none are left (vLLM, SGLang)"},
      {"to_completion", "admitted only with its whole prompt and output's blocks free: never preempted (TensorRT-LLM)"},
  };
  return r;
}

const std::vector<RegistryEntry>& preemption_modes() {
  static const std::vector<RegistryEntry> r = {
      {"recompute", "free the victim's blocks; its prompt and output so far are prefilled again"},
      {"swap", "copy the victim's blocks to host memory over PCIe and back (falls back to recompute when full)"},
  };
  return r;
}

const std::vector<RegistryEntry>& speculative_methods() {
  static const std::vector<RegistryEntry> r = {
      {"draft", "a smaller draft model proposes k tokens; the target verifies k+1 in one pass"},
      {"ngram", "prompt-lookup (n-gram) proposals at negligible cost"},
      {"mtp", "the model's own multi-token-prediction layers (DeepSeek-V3/R1, GLM-4.5) draft k tokens, one module "
              "pass each, on the target's GPUs; the target verifies k+1 in one pass"},
      {"eagle3", "an EAGLE-3 head (one decoder layer of the target's shape over its fused hidden states) drafts k "
                 "tokens, one head pass each, on the target's GPUs; dense targets only"},
  };
  return r;
}

const std::vector<RegistryEntry>& lora_targets() {
  static const std::vector<RegistryEntry> r = {
      {"attention", "adapters on the QKV and output projections"},
      {"all_linear", "adapters on the attention and MLP projections"},
  };
  return r;
}

std::vector<std::string> registry_names(const std::vector<RegistryEntry>& r) {
  std::vector<std::string> out;
  for (const auto& e : r) out.emplace_back(e.name);
  return out;
}

const std::vector<RegistryEntry>& all_to_all_modes() {
  static const std::vector<RegistryEntry> r = {
      {"auto", "low_latency for decode-only steps, high_throughput for steps with prefill tokens"},
      {"low_latency", "DeepEP low-latency kernels: each token copy sent straight to its expert's GPU, fp8 dispatch"},
      {"high_throughput", "DeepEP normal kernels: a counts exchange, then one copy per destination GPU"},
  };
  return r;
}

json policy_tables_json() {
  auto list = [](const std::vector<RegistryEntry>& r) {
    json a = json::array();
    for (const auto& e : r) a.push_back({{"name", e.name}, {"description", e.description}});
    return a;
  };
  json arrivals = list(arrival_processes());
  for (json& e : arrivals) {
    const ArrivalProcessRules* rules = arrival_process_rules(e["name"].get<std::string>());
    e["keys"] = rules->keys;
    e["steady_state_judged"] = rules->steady_state_judged;
  }
  return {{"arrival_processes", arrivals},
          {"length_distributions", list(length_distributions())},
          {"routers", list(routers())},
          {"pool_roles", list(pool_roles())},
          {"scheduler_policies", list(scheduler_policies())},
          {"scheduler_priorities", list(scheduler_priorities())},
          {"kv_allocations", list(kv_allocations())},
          {"kv_admissions", list(kv_admissions())},
          {"preemption_modes", list(preemption_modes())},
          {"speculative_methods", list(speculative_methods())},
          {"lora_targets", list(lora_targets())},
          {"all_to_all_modes", list(all_to_all_modes())}};
}

}  // namespace sightline::serve
