#include "perf/running_limit.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "hw/hardware.hpp"

namespace sightline {

json RunningLimitRule::to_json() const {
  if (kind == Kind::Fixed) return {{"rule", "fixed"}, {"requests", requests}, {"source", source}};
  if (kind == Kind::GpuMemory)
    return {{"rule", "gpu_memory"},
            {"min_memory_GiB", min_memory_GiB},
            {"except_architectures", except_architectures},
            {"large", large},
            {"small", small},
            {"source", source}};
  return {{"rule", "kv_pool"},
          {"requests_per_context", requests_per_context},
          {"min_requests", min_requests},
          {"max_requests", max_requests},
          {"tokens_per_request", tokens_per_request},
          {"source", source}};
}

RunningLimitRule read_running_limit_rule(const json& v, const std::string& path) {
  require_object(v, path);
  const std::string kind = v.contains("rule") && v["rule"].is_string() ? v["rule"].get<std::string>() : "";
  std::vector<std::string> keys = {"rule", "source"};
  if (kind == "gpu_memory") keys.insert(keys.end(), {"min_memory_GiB", "except_architectures", "large", "small"});
  else if (kind == "kv_pool") keys.insert(keys.end(), {"requests_per_context", "min_requests", "max_requests", "tokens_per_request"});
  else if (kind == "fixed") keys.insert(keys.end(), {"requests"});
  ObjectReader r(v, path, keys);
  RunningLimitRule rule;
  const std::string named = r.choice("rule", {"gpu_memory", "kv_pool", "fixed"});
  rule.kind = named == "gpu_memory" ? RunningLimitRule::Kind::GpuMemory
              : named == "kv_pool"  ? RunningLimitRule::Kind::KvPool
                                    : RunningLimitRule::Kind::Fixed;
  rule.source = r.string("source", "user-supplied");
  if (rule.kind == RunningLimitRule::Kind::Fixed) {
    rule.requests = r.integer("requests", 1, 65536);
  } else if (rule.kind == RunningLimitRule::Kind::GpuMemory) {
    rule.min_memory_GiB = r.number("min_memory_GiB", 0, 1e6);
    if (const json* a = r.find("except_architectures"); a && !a->empty())
      rule.except_architectures = read_architecture_names(*a, r.child_path("except_architectures"));
    rule.large = r.integer("large", 1, 65536);
    rule.small = r.integer("small", 1, 65536);
  } else {
    rule.requests_per_context = r.number("requests_per_context", 0, 1e6);
    rule.min_requests = r.integer("min_requests", 1, 65536);
    rule.max_requests = r.integer("max_requests", rule.min_requests, 65536);
    rule.tokens_per_request = r.integer("tokens_per_request", 1, 1 << 20);
  }
  return rule;
}

int64_t running_limit(const RunningLimitRule& rule, const GpuSpec& gpu, int64_t kv_tokens, int64_t max_model_len) {
  if (rule.kind == RunningLimitRule::Kind::Fixed) return rule.requests;
  if (rule.kind == RunningLimitRule::Kind::GpuMemory) {
    const bool excepted = std::find(rule.except_architectures.begin(), rule.except_architectures.end(),
                                    gpu.architecture) != rule.except_architectures.end();
    return gpu.memory_GiB >= rule.min_memory_GiB && !excepted ? rule.large : rule.small;
  }
  // SGLang's request pool: int(KV tokens / context length x 512) held within
  // [2048, 4096]; the scheduler takes at most half the KV tokens as requests.
  const double per_context = static_cast<double>(std::max<int64_t>(kv_tokens, 0)) /
                             static_cast<double>(std::max<int64_t>(max_model_len, 1)) * rule.requests_per_context;
  const int64_t pool = std::clamp<int64_t>(static_cast<int64_t>(per_context), rule.min_requests, rule.max_requests);
  return std::max<int64_t>(1, std::min<int64_t>(kv_tokens / rule.tokens_per_request, pool));
}

}  // namespace sightline
