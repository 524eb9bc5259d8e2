#include "search/deployment_search.hpp"

#include <algorithm>
#include <cmath>

#include "core/dtype.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "presets/preset_store.hpp"
#include "scenario/scenario.hpp"
#include "search/axis_list.hpp"
#include "search/pareto.hpp"
#include "serve/serving_job.hpp"
#include "serve/workload.hpp"

namespace sightline::search {

namespace {

constexpr int64_t kRunAllEvents = int64_t{1} << 40;

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

namespace {


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

// The candidate as a scenario document: the base with the hardware, one pool
// of `replicas` x (tp, pp), the scheduler limits, arrivals at the target rate,
// and the steady-state check that sizes and judges the run.
json candidate_document(const DeploymentSearchSpec& spec, const Candidate& c) {
  const GpuOption& g = spec.gpus[c.gpu];
  json d = spec.base;
  const int total = c.gpus();
  const int per_node = std::min(total, g.gpus_per_node);
  const bool mixed = c.mixed();
  const GpuOption& dg = spec.gpus[c.decode_gpu()];
  const bool other_gpu = dg.gpu != g.gpu;
  d["hardware"] = {{"gpu", g.gpu}, {"gpus_per_node", per_node}};
  if (per_node > 1) d["hardware"]["intra_node"] = g.intra_node;
  if (total > per_node) {
    d["hardware"]["nodes"] = (total + per_node - 1) / per_node;
    d["hardware"]["inter_node"] = g.inter_node;
  }
  if (!d.contains("cost_model") || !d["cost_model"].is_object()) d["cost_model"] = json::object();
  // Mixed pools: the deployment's price per hour spread over all its GPUs, so
  // the run's $/Mtok prices each pool at its own GPU's rate.
  d["cost_model"]["gpu_hour_usd"] = mixed ? candidate_usd_per_hour(spec, c) / total : g.usd_per_hour;
  if (!c.weights.empty() || !c.kv_cache.empty()) {
    if (!d.contains("precision") || !d["precision"].is_object()) d["precision"] = json::object();
    if (!c.weights.empty()) d["precision"]["weights"] = c.weights;
    if (!c.kv_cache.empty()) d["precision"]["kv_cache"] = c.kv_cache;
  }
  json& sv = d["serving"];
  for (const char* k : {"parallelism", "max_qps_search", "compare", "key_metrics", "outputs"}) sv.erase(k);
  const json* base_cluster = sv.contains("cluster") && sv["cluster"].is_object() ? &sv["cluster"] : nullptr;
  json router = base_cluster && base_cluster->contains("router") ? (*base_cluster)["router"] : json("least_outstanding");
  json cluster = {{"router", router}};
  if (c.ratio.disaggregated()) {
    // Both pools at the candidate's tp x pp; the base's KV link, if it names one.
    json decode = {{"name", "decode"}, {"replicas", c.decode_replicas()}, {"tp", c.decode_tp()}, {"pp", c.pp}, {"role", "decode"}};
    if (other_gpu) {
      // Its own GPU and that GPU option's link between its GPUs.
      decode["gpu"] = dg.gpu;
      if (c.decode_tp() * c.pp > 1) decode["intra_node"] = dg.intra_node;
    }
    cluster["pools"] = json::array({{{"name", "prefill"}, {"replicas", c.prefill_replicas()}, {"tp", c.tp}, {"pp", c.pp}, {"role", "prefill"}},
                                    decode});
    if (base_cluster && base_cluster->contains("kv_transfer_link")) cluster["kv_transfer_link"] = (*base_cluster)["kv_transfer_link"];
    // Two GPU types never share a node: the KV cache crosses the prefill
    // nodes' network unless the base names a link.
    else if (other_gpu) cluster["kv_transfer_link"] = g.inter_node;
  } else {
    cluster["pools"] = json::array({{{"name", "main"}, {"replicas", c.replicas}, {"tp", c.tp}, {"pp", c.pp}}});
  }
  sv["cluster"] = cluster;
  if (c.attention_dp > 1) {
    // Wide EP: the base's serving.moe keys (imbalance, EPLB, all-to-all mode)
    // with the experts spread over each data-parallel group's GPUs.
    json moe = sv.contains("moe") && sv["moe"].is_object() ? sv["moe"] : json::object();
    moe["attention_data_parallel"] = c.attention_dp;
    moe["expert_parallel"] = c.attention_dp * c.tp;
    sv["moe"] = moe;
  }
  if (!sv.contains("scheduler") || !sv["scheduler"].is_object()) sv["scheduler"] = json::object();
  json& sched = sv["scheduler"];
  sched["policy"] = c.chunked ? "chunked_prefill" : "continuous";
  sched["max_num_seqs"] = c.max_num_seqs;
  // Keys of the other policy would be rejected as unknown: drop them.
  for (const char* k : {"batch_size", "max_wait_ms"}) sched.erase(k);
  if (c.chunked) {
    sched.erase("max_num_batched_tokens");
    if (c.batched_tokens > 0) {
      sched["chunk_size"] = c.batched_tokens;
      if (sched.contains("max_prefill_chunk") && sched["max_prefill_chunk"].is_number_integer() &&
          sched["max_prefill_chunk"].get<int64_t>() > c.batched_tokens)
        sched["max_prefill_chunk"] = c.batched_tokens;
    }
  } else {
    for (const char* k : {"chunk_size", "max_prefill_chunk"}) sched.erase(k);
    if (c.batched_tokens > 0) sched["max_num_batched_tokens"] = c.batched_tokens;
  }
  sv["workload"].erase("duration_s");
  sv["limits"] = {{"max_requests", spec.max_requests}};
  sv["outputs"] = {{"max_request_records", 0}};
  if (spec.budget()) {
    // The capacity search gives the answer; the ordinary run before it is
    // the fewest requests the search allows, at a light 1 req/s.
    sv["workload"]["arrival"] = {{"process", "poisson"}, {"rate_qps", 1.0}};
    sv["workload"]["num_requests"] = 100;
    sv["max_qps_search"] = {{"num_requests", spec.requests}, {"max_requests_per_run", spec.max_requests}};
    return d;
  }
  sv["workload"]["arrival"] = {{"process", "poisson"}, {"rate_qps", spec.target_qps}};
  sv["workload"]["num_requests"] = spec.requests;
  sv["steady_state"] = {{"max_requests", spec.max_requests}};
  return d;
}

// A number of a candidate's result given to search_rank (input); 0 when absent.
double number_at(const json& j, const char* pointer) {
  const json::json_pointer p(pointer);
  return j.contains(p) && j.at(p).is_number() ? j.at(p).get<double>() : 0.0;
}

// The budget question's $/Mtok: the deployment's price per hour over the
// tokens per hour it carries at its highest rate within the SLO. A run that
// met the SLO at no rate has no price.
CandidateOutcome priced(const DeploymentSearchSpec& spec, const Plan& plan, size_t i, CandidateOutcome o) {
  if (!o.ok || !o.capacity) return o;
  const double usd_per_hour = candidate_usd_per_hour(spec, plan.candidates[i]);
  const double tokens_per_hour = o.max_qps * plan.tokens_per_request * 3600.0;
  o.usd_per_million_tokens = tokens_per_hour > 0 ? usd_per_hour / tokens_per_hour * 1e6 : 0.0;
  return o;
}

std::vector<CandidateOutcome> priced_all(const DeploymentSearchSpec& spec, const Plan& plan, const std::vector<CandidateOutcome>& o) {
  std::vector<CandidateOutcome> out;
  for (size_t i = 0; i < o.size(); ++i) out.push_back(priced(spec, plan, i, o[i]));
  return out;
}

// Prunes one layout (c.replicas = one unit of its ratio) or adds its
// candidates, at replica counts from the analytic minimum up.
void plan_layout(const DeploymentSearchSpec& spec, const Candidate& c, Plan& plan) {
  const int unit = c.unit_replicas();
  const int per_node = spec.gpus[c.gpu].gpus_per_node;
  const int unit_gpus = c.unit_gpus();
  if (unit_gpus > spec.max_gpus) {
    plan.pruned.push_back({c, c.ratio.disaggregated() ? "one " + ratio_name(c.ratio) + " unit of tp x pp (" +
                                                            std::to_string(unit_gpus) + " GPUs) above max_gpus"
                                                      : "tp x pp above max_gpus"});
    return;
  }
  // Whole nodes only once a deployment spans more than one node.
  auto whole_nodes = [&](int units) {
    const int total = units * unit_gpus;
    return total <= per_node || total % per_node == 0;
  };
  // The scenario checks (memory fit included) on the fewest units that fill
  // whole nodes: one replica when colocated, as every pool's replica is
  // checked alike.
  Candidate first = c;
  if (c.ratio.disaggregated()) {
    int k = 1;
    while (k * unit_gpus <= spec.max_gpus && !whole_nodes(k)) ++k;
    if (k * unit_gpus > spec.max_gpus) {
      plan.pruned.push_back({c, "no whole-node multiple of one " + ratio_name(c.ratio) + " unit within max_gpus"});
      return;
    }
    first.replicas = k * unit;
  }
  Scenario s;
  try {
    s = read_scenario(candidate_document(spec, first));
  } catch (const SightlineError& e) {
    plan.pruned.push_back({c, std::string(e.code()) + ": " + e.what()});
    return;
  }
  // Analytic bounds from the same cost model, at its central bound.
  const LayoutBounds lb = layout_bounds(s, c);
  const auto& slo = s.serving->simulation->slo;
  // A bound a lone request cannot meet prunes when most requests must meet it.
  const auto share = [&](serve::SloMetric m) { return slo.percentile(m) > 0 ? slo.percentile(m) : slo.attainment; };
  if (slo.tpot_ms > 0 && lb.decode1_s * 1e3 > slo.tpot_ms && share(serve::kSloTpot) > 0.5) {
    plan.pruned.push_back({c, "a batch-1 decode step (" + std::to_string(lb.decode1_s * 1e3) + " ms) is above the TPOT SLO"});
    return;
  }
  if (slo.ttft_ms > 0 && lb.prefill_s * 1e3 > slo.ttft_ms && share(serve::kSloTtft) > 0.5) {
    plan.pruned.push_back({c, "a lone prefill of the mean prompt (" + std::to_string(lb.prefill_s * 1e3) + " ms) is above the TTFT SLO"});
    return;
  }
  if (spec.budget()) {
    // The deployment that fills the budget: the most units on whole nodes.
    int k = spec.max_gpus / unit_gpus;
    while (k > 0 && !whole_nodes(k)) --k;
    if (k == 0) {
      plan.pruned.push_back({c, "no whole-node count of replicas within max_gpus"});
      return;
    }
    Candidate cand = c;
    cand.replicas = k * unit;  // k >= the scenario-checked count, which fits
    plan.candidates.push_back(cand);
    plan.scenarios.push_back(candidate_document(spec, cand));
    return;
  }
  const int d_min = std::max(1, static_cast<int>(std::ceil(spec.target_qps / lb.replica_qps)));
  int k_min = (d_min + unit - 1) / unit;  // colocated: whole data-parallel groups (1 replica without wide EP)
  if (c.ratio.disaggregated()) {
    const int p_min = std::max(1, static_cast<int>(std::ceil(spec.target_qps / lb.prefill_replica_qps)));
    k_min = std::max((d_min + c.ratio.decode - 1) / c.ratio.decode, (p_min + c.ratio.prefill - 1) / c.ratio.prefill);
  }
  int added = 0;
  for (int k = k_min; added < spec.replica_options && k * unit_gpus <= spec.max_gpus; ++k) {
    if (!whole_nodes(k)) continue;
    if (added > 0 && k < static_cast<int>(std::ceil(k_min * (1.0 + 0.5 * added)))) continue;
    Candidate cand = c;
    cand.replicas = k * unit;
    plan.candidates.push_back(cand);
    plan.scenarios.push_back(candidate_document(spec, cand));
    ++added;
  }
  if (added == 0)
    plan.pruned.push_back({c, c.ratio.disaggregated()
                                  ? "needs at least " + std::to_string(k_min) + " " + ratio_name(c.ratio) +
                                        " units by the throughput bounds: above max_gpus"
                                  : "needs at least " + std::to_string(k_min) + " replicas by the throughput bound: above max_gpus"});
}

// Candidates (indices) meeting the SLO that no other meeting one beats on
// both $/Mtok and P99 TTFT, cheapest first.
// The second axis: P99 TTFT at the target rate, or (the budget question) the
// highest rate within the SLO, negated so lower is better on both.
double second_axis(const CandidateOutcome& o) { return o.capacity ? -o.max_qps : o.ttft_p99_ms; }

std::vector<size_t> pareto_front(const std::vector<CandidateOutcome>& o) {
  std::vector<ParetoPoint> points;
  for (size_t i = 0; i < o.size(); ++i)
    if (o[i].ok && o[i].meets_slo) points.push_back({i, o[i].usd_per_million_tokens, second_axis(o[i])});
  std::vector<size_t> front = search::pareto_front(points);
  std::stable_sort(front.begin(), front.end(),
                   [&](size_t a, size_t b) { return o[a].usd_per_million_tokens < o[b].usd_per_million_tokens; });
  return front;
}

}  // namespace

std::string ratio_name(const PoolRatio& r) {
  return r.disaggregated() ? std::to_string(r.prefill) + ":" + std::to_string(r.decode) : "colocated";
}

double candidate_usd_per_hour(const DeploymentSearchSpec& spec, const Candidate& c) {
  if (!c.mixed()) return spec.gpus[c.gpu].usd_per_hour * c.gpus();
  return spec.gpus[c.gpu].usd_per_hour * c.prefill_replicas() * c.tp * c.pp +
         spec.gpus[c.decode_gpu()].usd_per_hour * c.decode_replicas() * c.decode_tp() * c.pp;
}

std::string candidate_label(const DeploymentSearchSpec& spec, const Candidate& c) {
  auto shape_of = [&](int tp) { return "(tp" + std::to_string(tp) + (c.pp > 1 ? " pp" + std::to_string(c.pp) : "") + ")"; };
  const std::string shape = shape_of(c.tp);
  const std::string decode_gpu = c.decode_gpu() != c.gpu ? spec.gpus[c.decode_gpu()].gpu + " " : "";
  std::string s = spec.gpus[c.gpu].gpu + " " +
                  (c.ratio.disaggregated()
                       ? std::to_string(c.prefill_replicas()) + "P" + shape + "+" + decode_gpu +
                             std::to_string(c.decode_replicas()) + "D" + shape_of(c.decode_tp())
                       : std::to_string(c.replicas) + "x" + shape) +
                  " seqs " + std::to_string(c.max_num_seqs) + (c.chunked ? " chunked" : "");
  if (c.batched_tokens > 0) s += (c.chunked ? " chunk " : " batch-tokens ") + std::to_string(c.batched_tokens);
  if (!c.weights.empty()) s += " w-" + c.weights;
  if (!c.kv_cache.empty()) s += " kv-" + c.kv_cache;
  if (c.attention_dp > 1) s += " adp" + std::to_string(c.attention_dp) + " ep" + std::to_string(c.attention_dp * c.tp);
  return s;
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
    ObjectReader gr(gl[i], path, {"gpu", "usd_per_hour", "intra_node", "inter_node", "gpus_per_node"});
    GpuOption g;
    g.gpu = gr.string("gpu");
    require_preset("gpus", g.gpu, gr.child_path("gpu"));
    g.usd_per_hour = gr.number("usd_per_hour", 0.0, 1e6);
    // The links default to the GPU preset's own (its default_intra_node and default_inter_node).
    const GpuSpec preset = read_gpu(json(g.gpu), gr.child_path("gpu"));
    g.intra_node = gr.string("intra_node", preset.default_intra_node);
    g.inter_node = gr.string("inter_node", preset.default_inter_node);
    // The GPU's own server size (its node_gpus), no more than the link joins
    // (an NVLink bridge pair, a 4-way bridge).
    const InterconnectSpec link = read_interconnect(json(g.intra_node), gr.child_path("intra_node"));
    g.gpus_per_node = static_cast<int>(gr.integer("gpus_per_node", 1, 64, preset.proposed_node_gpus(&link)));
    spec.gpus.push_back(g);
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
  spec.requests = r.integer("requests", 100, 200000, 1000);
  // The budget question's capacity searches size their runs from the whole
  // deployment's occupancy: the capacity search's own default cap.
  spec.max_requests = r.integer("max_requests", spec.requests, 2000000,
                                std::max<int64_t>(spec.requests, spec.budget() ? 60000 : 20000));
  spec.replica_options = static_cast<int>(r.integer("replica_options", 1, 64, 3));
  spec.max_interval_points = static_cast<int>(r.integer("max_interval_points", 0, 64, 8));
  // The base must be a valid serving simulation with an SLO.
  bool base_is_moe = false;
  try {
    const Scenario s = read_scenario(spec.base);
    if (!s.serving || !s.serving->simulation) fail(error_code::kConstraint, "/serving/mode", "the base must be a serving \"simulate\" scenario");
    if (!s.serving->simulation->slo.enabled) fail(error_code::kMissingKey, "/serving/slo", "the search needs an slo");
    base_is_moe = s.model.is_moe();
  } catch (const SightlineError& e) {
    fail(e.code().c_str(), std::string("/base") + e.path(), e.what());
  }
  if (!spec.attention_dp.empty() && !base_is_moe)
    fail(error_code::kConstraint, "/attention_data_parallel", "wide expert parallelism needs a mixture-of-experts base model");
  check_search_space(spec);
  return spec;
}

Plan plan_deployment_search(const DeploymentSearchSpec& spec) {
  Plan plan;
  // An absent optional axis is one value, "the base's" (0 / empty).
  const std::vector<int64_t> base_tokens = {0};
  const std::vector<std::string> base_dtype = {""};
  const std::vector<PoolRatio> colocated = {PoolRatio{}};
  const std::vector<std::string>& weights_axis = spec.weights.empty() ? base_dtype : spec.weights;
  const std::vector<std::string>& kv_axis = spec.kv_cache.empty() ? base_dtype : spec.kv_cache;
  const std::vector<PoolRatio>& ratio_axis = spec.prefill_decode_ratio.empty() ? colocated : spec.prefill_decode_ratio;
  const std::vector<int> no_dp = {1};
  const std::vector<int>& dp_axis = spec.attention_dp.empty() ? no_dp : spec.attention_dp;
  for (size_t gi = 0; gi < spec.gpus.size(); ++gi)
    for (int tp : spec.tp)
      for (int pp : spec.pp)
        for (int64_t seqs : spec.max_num_seqs)
          for (bool chunked : spec.chunked_prefill) {
            const std::vector<int64_t>& tokens_axis =
                chunked ? (spec.chunk_size.empty() ? base_tokens : spec.chunk_size)
                        : (spec.max_num_batched_tokens.empty() ? base_tokens : spec.max_num_batched_tokens);
            for (int64_t tokens : tokens_axis)
              for (const std::string& weights : weights_axis)
                for (const std::string& kv : kv_axis)
                  for (const PoolRatio& ratio : ratio_axis)
                    for (int dp : dp_axis) {
                    // Wide EP groups colocated replicas; disaggregated pools keep the base's serving.moe.
                    if (dp > 1 && ratio.disaggregated()) continue;
                    Candidate c;
                    c.gpu = gi;
                    c.tp = tp;
                    c.pp = pp;
                    c.max_num_seqs = seqs;
                    c.chunked = chunked;
                    c.batched_tokens = tokens;
                    c.weights = weights;
                    c.kv_cache = kv;
                    c.ratio = ratio;
                    c.attention_dp = dp;
                    c.replicas = c.unit_replicas();
                    ++plan.space_size;
                    plan_layout(spec, c, plan);
                    if (!spec.mixed_pools || !ratio.disaggregated()) continue;
                    // Mixed pools: the same prefill pool with every other decode (GPU, tp).
                    for (size_t dgi = 0; dgi < spec.gpus.size(); ++dgi)
                      for (int dtp : spec.tp) {
                        if (dgi == gi && dtp == tp) continue;
                        Candidate m = c;
                        m.decode_gpu_option = static_cast<int>(dgi);
                        m.decode_tp_value = dtp;
                        ++plan.space_size;
                        plan_layout(spec, m, plan);
                      }
                  }
          }
  if (spec.budget() && !plan.scenarios.empty()) {
    // The mean tokens of the workload's requests (the same seeded draws as
    // every run), for the budget question's $/Mtok at each layout's rate.
    const Scenario s = read_scenario(plan.scenarios.front());
    serve::WorkloadOverride o;
    o.num_requests = std::max<int64_t>(spec.max_requests, 20000);
    const serve::GeneratedWorkload w = serve::generate_workload(*s.serving->simulation, s.seed, o);
    double tokens = 0;
    for (const auto& q : w.requests) tokens += static_cast<double>(q.prompt + q.output);
    plan.tokens_per_request = w.requests.empty() ? 0.0 : tokens / static_cast<double>(w.requests.size());
  }
  return plan;
}

CandidateOutcome read_candidate_outcome(const json& result) {
  CandidateOutcome o;
  if (result.is_object() && result.contains("max_qps") && result["max_qps"].is_object()) {
    const json& q = result["max_qps"];
    o.ok = true;
    o.capacity = true;
    o.max_qps = q.value("qps", 0.0);
    o.max_qps_upper = q.contains("upper_qps") && q["upper_qps"].is_number() ? q["upper_qps"].get<double>() : 0.0;
    o.service_rate_qps = q.value("service_rate_qps", 0.0);
    o.requests = q.value("requests_simulated", int64_t{0});
    o.meets_slo = o.max_qps > 0;
    o.verdict = o.meets_slo ? "sustains" : "misses";
    return o;
  }
  if (!result.is_object() || !result.contains("steady_state") || !result.contains("metrics")) {
    o.error = result.is_object() && result.contains("error") ? result["error"].dump() : "not a candidate's run result";
    return o;
  }
  const json& ss = result["steady_state"];
  const json& m = result["metrics"];
  o.ok = true;
  o.verdict = ss.value("verdict", "uncertain");
  o.meets_slo = ss.value("meets_slo", false);
  o.attainment = ss.value("slo_attainment", 0.0);
  o.attainment_low = ss.value("slo_attainment_low", 0.0);
  o.attainment_high = ss.value("slo_attainment_high", 0.0);
  o.requests = ss.value("requests", int64_t{0});
  o.ttft_p99_ms = number_at(m, "/ttft_ms/p99");
  o.tpot_p99_ms = number_at(m, "/tpot_ms/p99");
  o.output_tokens_per_s = number_at(m, "/throughput/output_tokens_per_s");
  o.usd_per_million_tokens = number_at(m, "/cost/usd_per_million_tokens");
  return o;
}

namespace {

// A finished candidate run's outcome, from the job's typed figures (the same
// figures read_candidate_outcome reads from its written result).
CandidateOutcome outcome_of(const serve::ServingJob& job) {
  CandidateOutcome o;
  if (const serve::CapacitySearch* q = job.capacity_search()) {
    o.ok = true;
    o.capacity = true;
    o.max_qps = q->qps();
    o.max_qps_upper = q->upper_qps().value_or(0.0);
    o.service_rate_qps = q->service_rate_qps();
    o.requests = q->requests_simulated();
    o.meets_slo = o.max_qps > 0;
    o.verdict = o.meets_slo ? "sustains" : "misses";
    return o;
  }
  const serve::SteadyStateReport* ss = job.steady_state();
  if (!ss) {
    o.error = "not a candidate's run result";
    return o;
  }
  const serve::ServingMetrics m = job.metrics();
  o.ok = true;
  o.verdict = serve::to_string(ss->verdict);
  o.meets_slo = ss->verdict == serve::Verdict::Meets;
  o.attainment = ss->attainment;
  o.attainment_low = ss->attainment_low;
  o.attainment_high = ss->attainment_high;
  o.requests = job.steady_state_requests();
  o.ttft_p99_ms = m.ttft_ms.empty() ? 0.0 : m.ttft_ms.p99;
  o.tpot_p99_ms = m.tpot_ms.empty() ? 0.0 : m.tpot_ms.p99;
  o.output_tokens_per_s = m.throughput.output_tokens_per_s;
  o.usd_per_million_tokens = m.cost ? m.cost->usd_per_million_tokens : 0.0;
  return o;
}

}  // namespace

CandidateOutcome evaluate_candidate(const json& scenario, CostBound bound) {
  try {
    Scenario s = read_scenario(scenario);
    s.cost_model.bound = bound;
    serve::ServingJob job(s);
    while (!job.step(kRunAllEvents)) {
    }
    return outcome_of(job);
  } catch (const SightlineError& e) {
    CandidateOutcome o;
    o.error = std::string(e.code()) + " at '" + e.path() + "': " + e.what();
    return o;
  }
}

std::vector<size_t> interval_candidates(const DeploymentSearchSpec& spec, const Plan& plan,
                                        const std::vector<CandidateOutcome>& central) {
  std::vector<size_t> front = pareto_front(spec.budget() ? priced_all(spec, plan, central) : central);
  if (front.size() > static_cast<size_t>(spec.max_interval_points)) front.resize(static_cast<size_t>(spec.max_interval_points));
  return front;
}

DeploymentSearchResult rank_deployment_search(const DeploymentSearchSpec& spec, const Plan& plan,
                                              const std::vector<CandidateOutcome>& central,
                                              const std::vector<CandidateOutcome>& low,
                                              const std::vector<CandidateOutcome>& high) {
  if (central.size() != plan.candidates.size())
    fail(error_code::kConstraint, "/results",
         "expected " + std::to_string(plan.candidates.size()) + " candidate results, got " + std::to_string(central.size()));
  DeploymentSearchResult out;
  out.show_tokens = !spec.max_num_batched_tokens.empty() || !spec.chunk_size.empty();
  out.show_weights = !spec.weights.empty();
  out.show_kv = !spec.kv_cache.empty();
  out.show_ratio = !spec.prefill_decode_ratio.empty();
  out.show_mixed = spec.mixed_pools;
  out.show_dp = !spec.attention_dp.empty();
  for (const GpuOption& g : spec.gpus) out.gpu_ids.push_back(g.gpu);
  out.target_qps = spec.target_qps;
  out.max_gpus = spec.max_gpus;
  out.space_size = plan.space_size;
  out.pruned = static_cast<int64_t>(plan.pruned.size());
  out.simulated = static_cast<int64_t>(central.size());
  out.pruned_layouts = plan.pruned;
  for (const auto& p : plan.pruned) out.pruned_labels.push_back(candidate_label(spec, p.layout));
  const std::vector<size_t> with_interval = interval_candidates(spec, plan, central);
  out.budget = spec.budget();
  const std::vector<size_t> front = pareto_front(spec.budget() ? priced_all(spec, plan, central) : central);
  for (size_t i = 0; i < central.size(); ++i) {
    RankedCandidate r;
    r.index = i;
    r.c = plan.candidates[i];
    r.label = candidate_label(spec, r.c);
    r.usd_per_hour = candidate_usd_per_hour(spec, r.c);
    r.central = priced(spec, plan, i, central[i]);
    out.requests_simulated += central[i].requests;
    r.on_front = std::find(front.begin(), front.end(), i) != front.end();
    const auto it = std::find(with_interval.begin(), with_interval.end(), i);
    if (it != with_interval.end()) {
      const size_t k = static_cast<size_t>(it - with_interval.begin());
      if (k < low.size() && k < high.size()) {
        r.has_interval = true;
        r.low = priced(spec, plan, i, low[k]);
        r.high = priced(spec, plan, i, high[k]);
        out.requests_simulated += low[k].requests + high[k].requests;
      }
    }
    out.ranked.push_back(r);
  }
  // Meeting the SLO first, then by $/Mtok, then fewer GPUs; the plan order breaks ties.
  std::stable_sort(out.ranked.begin(), out.ranked.end(), [](const RankedCandidate& a, const RankedCandidate& b) {
    if (a.central.ok != b.central.ok) return a.central.ok;
    if (a.central.meets_slo != b.central.meets_slo) return a.central.meets_slo;
    if (a.central.usd_per_million_tokens != b.central.usd_per_million_tokens)
      return a.central.usd_per_million_tokens < b.central.usd_per_million_tokens;
    return a.c.gpus() < b.c.gpus();
  });
  for (size_t k = 0; k < out.ranked.size(); ++k)
    if (out.ranked[k].on_front) out.front.push_back(k);
  if (!out.ranked.empty() && out.ranked.front().central.ok && out.ranked.front().central.meets_slo) out.cheapest = 0;
  // The accuracy block of the cost model behind the answer.
  const size_t gpu = out.cheapest >= 0 ? out.ranked.front().c.gpu : 0;
  const Scenario s = read_scenario(plan.scenarios.empty() ? spec.base : plan.scenarios.front());
  std::string provenance;
  const GpuSpec g = read_gpu(json(spec.gpus[gpu].gpu), pointer_append("/gpus", gpu));
  out.accuracy = make_kernel_cost_model(s.cost_model.tier, g, &provenance)->accuracy().to_json();
  const serve::SloSpec& slo = s.serving->simulation->slo;
  out.slo = serve::slo_to_json(slo);
  return out;
}

}  // namespace sightline::search
