// Reading a deployment search question (deployment_search.hpp): the base
// scenario, the GPU options, the axes with their limits, and the bound on
// the space they multiply to.
#include <algorithm>

#include "core/csv.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "presets/preset_store.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_spec.hpp"
#include "search/axis_list.hpp"
#include "search/deployment_search.hpp"
#include "search/explorer.hpp"

namespace sightline::search {

namespace {

json scenario_document(const json& base) {
  if (base.is_string()) return require_preset("scenarios", base.get<std::string>(), "/base");
  require_object(base, "/base");
  return base;
}

// The search space is bounded before it is planned: each axis at most
// kMaxAxisValues values, and the product of the axes (the combinations the
// plan enumerates, before pruning) at most kMaxCombinations, so a question is
// refused in milliseconds instead of holding a worker for minutes.
constexpr size_t kMaxAxisValues = 64;
constexpr uint64_t kMaxCombinations = 20000;

// "colocated" or "P:D" with whole numbers 1..64 on each side.
PoolRatio parse_ratio(const json& v, const std::string& path) {
  if (!v.is_string()) fail(error_code::kType, path, "expected \"colocated\" or a prefill:decode ratio such as \"1:2\"");
  const std::string t = v.get<std::string>();
  if (t == "colocated") return {};
  const size_t colon = t.find(':');
  auto whole = [&](const std::string& part) {
    int64_t n = 0;  // the one number parser; anything but 1..64 is refused below
    if (part.find_first_not_of("0123456789") != std::string::npos || !parse_integer_token(part, n) || n > 64) return 0;
    return static_cast<int>(n);
  };
  const int p = colon == std::string::npos ? 0 : whole(t.substr(0, colon));
  const int d = colon == std::string::npos ? 0 : whole(t.substr(colon + 1));
  if (p < 1 || d < 1 || p > 64 || d > 64)
    fail(error_code::kInvalidValue, path,
         "'" + t + "' is not \"colocated\" or a prefill:decode ratio of whole numbers 1..64 such as \"1:2\"");
  return {p, d};
}

}  // namespace

void check_search_space(const DeploymentSearchSpec& spec) {
  uint64_t n = 1;
  const char* widest = "/gpus";
  size_t widest_size = 0;
  auto axis = [&](size_t size, const char* path) {
    n *= std::max<size_t>(1, size);  // each at most 64, at most 12 axes: no overflow before the check below
    if (size > widest_size) {
      widest_size = size;
      widest = path;
    }
    if (n > kMaxCombinations) n = kMaxCombinations + 1;
  };
  axis(spec.gpus.size(), "/gpus");
  axis(spec.tp.size(), "/tp");
  axis(spec.pp.size(), "/pp");
  axis(spec.max_num_seqs.size(), "/max_num_seqs");
  axis(spec.chunked_prefill.size(), "/chunked_prefill");
  axis(std::max(spec.max_num_batched_tokens.size(), spec.chunk_size.size()), "/max_num_batched_tokens");
  axis(spec.weights.size(), "/weights");
  axis(spec.kv_cache.size(), "/kv_cache");
  axis(spec.prefill_decode_ratio.size(), "/prefill_decode_ratio");
  // Mixed pools pair every prefill (GPU, tp) with every decode (GPU, tp).
  if (spec.mixed_pools) axis(spec.gpus.size() * spec.tp.size(), "/mixed_pools");
  axis(spec.attention_dp.size(), "/attention_data_parallel");
  axis(static_cast<size_t>(spec.replica_options), "/replica_options");
  if (n > kMaxCombinations)
    fail(error_code::kLimitExceeded, widest,
         "the search space has more than " + std::to_string(kMaxCombinations) +
             " combinations of its axes (before pruning); narrow an axis, starting with this one");
}

DeploymentSearchSpec read_deployment_search(const json& doc) {
  ObjectReader r(doc, "", {"base", "target_qps", "max_gpus", "gpus", "tp", "pp", "max_num_seqs", "chunked_prefill",
                           "max_num_batched_tokens", "chunk_size", "weights", "kv_cache", "prefill_decode_ratio",
                           "mixed_pools", "attention_data_parallel", "requests", "max_requests", "replica_options", "max_interval_points"});
  DeploymentSearchSpec spec;
  spec.base = scenario_document(r.required("base"));
  if (r.has("target_qps")) spec.target_qps = r.number("target_qps", 1e-6, 1e6);
  else if (!r.has("max_gpus"))
    fail(error_code::kMissingKey, "/target_qps",
         "give target_qps (the cheapest deployment serving that rate), or max_gpus without it (the best deployment "
         "under that GPU budget, at its highest rate within the SLO)");
  spec.max_gpus = static_cast<int>(r.integer("max_gpus", 1, 4096, 64));
  const json& gl = r.required("gpus");
  if (!gl.is_array() || gl.empty()) fail(error_code::kType, "/gpus", "expected a non-empty array of GPU options");
  check_axis_size(gl, "/gpus", kMaxAxisValues);
  for (size_t i = 0; i < gl.size(); ++i) {
    const std::string path = pointer_append("/gpus", i);
    spec.gpus.push_back(read_gpu_option(
        ObjectReader(gl[i], path, {"gpu", "usd_per_hour", "intra_node", "inter_node", "gpus_per_node"}), std::nullopt));
  }
  spec.tp = read_int_axis_as<int>(r, "tp", spec.tp, 1, 64, kMaxAxisValues);
  spec.pp = read_int_axis_as<int>(r, "pp", spec.pp, 1, 64, kMaxAxisValues);
  spec.max_num_seqs = read_int_axis(r, "max_num_seqs", spec.max_num_seqs, 1, 65536, kMaxAxisValues);
  spec.chunked_prefill = read_bool_axis(r, "chunked_prefill", spec.chunked_prefill, kMaxAxisValues);
  spec.max_num_batched_tokens = read_int_axis(r, "max_num_batched_tokens", {}, 1, int64_t{1} << 24, kMaxAxisValues);
  spec.chunk_size = read_int_axis(r, "chunk_size", {}, 1, int64_t{1} << 20, kMaxAxisValues);
  // The dtypes the scenario's precision block accepts; what a GPU cannot run
  // (fp8 weights without fp8 tensor cores) is pruned by the scenario checks.
  spec.weights = read_name_axis(r, "weights", {}, dtype_names(), "weight dtype", kMaxAxisValues);
  spec.kv_cache = read_name_axis(r, "kv_cache", {}, {"fp32", "bf16", "fp16", "fp8", "int8"}, "KV cache dtype", kMaxAxisValues);
  if (const json* rv = r.find("prefill_decode_ratio")) {
    const std::string path = r.child_path("prefill_decode_ratio");
    if (!rv->is_array() || rv->empty())
      fail(error_code::kType, path, "expected a non-empty array such as [\"colocated\", \"1:1\", \"1:2\"]");
    check_axis_size(*rv, path, kMaxAxisValues);
    for (size_t i = 0; i < rv->size(); ++i) {
      const PoolRatio ratio = parse_ratio((*rv)[i], pointer_append(path, i));
      for (const PoolRatio& seen : spec.prefill_decode_ratio)
        if (seen.prefill == ratio.prefill && seen.decode == ratio.decode)
          fail_listed_twice(pointer_append(path, i), "'" + ratio_name(ratio) + "'");
      spec.prefill_decode_ratio.push_back(ratio);
    }
  }
  spec.mixed_pools = r.boolean("mixed_pools", false);
  if (spec.mixed_pools) {
    bool any_disaggregated = false;
    for (const PoolRatio& ratio : spec.prefill_decode_ratio) any_disaggregated = any_disaggregated || ratio.disaggregated();
    if (!any_disaggregated)
      fail(error_code::kConstraint, "/mixed_pools",
           "mixed pools pair a prefill pool with a decode pool: give prefill_decode_ratio a P:D ratio such as \"1:2\"");
    if (spec.gpus.size() < 2 && spec.tp.size() < 2)
      fail(error_code::kConstraint, "/mixed_pools",
           "mixed pools need two GPU options or two tp values to mix; give more gpus or tp values, or drop mixed_pools");
  }
  spec.attention_dp = read_int_axis_as<int>(r, "attention_data_parallel", {}, 1, 1024, kMaxAxisValues);
  // Each default is the spec's own (deployment_search.hpp), written once there.
  spec.requests = r.integer("requests", 100, 200000, spec.requests);
  // The budget question's capacity searches size their runs from the whole
  // deployment's occupancy: the capacity search's own default cap.
  const int64_t default_cap = spec.budget() ? serve::SearchSpec{}.max_requests_per_run : spec.max_requests;
  spec.max_requests = r.integer("max_requests", spec.requests, 2000000, std::max<int64_t>(spec.requests, default_cap));
  spec.replica_options = static_cast<int>(r.integer("replica_options", 1, 64, spec.replica_options));
  spec.max_interval_points = static_cast<int>(r.integer("max_interval_points", 0, 64, spec.max_interval_points));
  // The base must be a valid serving simulation with an SLO.
  bool base_is_moe = false;
  try {
    const Scenario s = read_scenario(spec.base);
    if (!s.serving || !s.serving->simulation) fail(error_code::kConstraint, "/serving/mode", "the base must be a serving \"simulate\" scenario");
    if (!s.serving->simulation->slo.enabled) fail(error_code::kMissingKey, "/serving/slo", "the search needs an slo");
    base_is_moe = s.model.is_moe();
    spec.ttft_percentile = question_percentile(s.serving->simulation->slo, serve::kSloTtft);
    spec.tpot_percentile = question_percentile(s.serving->simulation->slo, serve::kSloTpot);
  } catch (const SightlineError& e) {
    fail(e.code().c_str(), std::string("/base") + e.path(), e.what());
  }
  if (!spec.attention_dp.empty() && !base_is_moe)
    fail(error_code::kConstraint, "/attention_data_parallel", "wide expert parallelism needs a mixture-of-experts base model");
  check_search_space(spec);
  return spec;
}

}  // namespace sightline::search
