#include "search/deployment_search.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "jobs/client_request_latency.hpp"
#include "jobs/run_job.hpp"
#include "presets/preset_store.hpp"
#include "scenario/scenario.hpp"
#include "search/candidate_reuse.hpp"
#include "search/explorer.hpp"
#include "search/pareto.hpp"
#include "serve/serving_job.hpp"
#include "serve/workload.hpp"

namespace sightline::search {

namespace {

constexpr int64_t kRunAllEvents = int64_t{1} << 40;

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
  // The search sets its own judge below (max_qps_search or steady_state): the base's are left out.
  for (const char* k : {"parallelism", "max_qps_search", "steady_state", "compare", "key_metrics", "outputs"}) sv.erase(k);
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
// both $/Mtok and the second axis, cheapest first. The second axis: TTFT at
// the question's percentile at the target rate, or (the budget question) the
// highest rate within the SLO, negated so lower is better on both.
std::vector<size_t> pareto_front(const DeploymentSearchSpec& spec, const std::vector<CandidateOutcome>& o) {
  const auto second_axis = [&](const CandidateOutcome& c) { return c.capacity ? -c.max_qps : c.ttft_ms(spec.ttft_percentile); };
  std::vector<ParetoPoint> points;
  for (size_t i = 0; i < o.size(); ++i)
    if (o[i].ok && o[i].meets_slo) points.push_back({i, o[i].usd_per_million_tokens, second_axis(o[i])});
  std::vector<size_t> front = search::pareto_front(points);
  std::stable_sort(front.begin(), front.end(),
                   [&](size_t a, size_t b) { return o[a].usd_per_million_tokens < o[b].usd_per_million_tokens; });
  return front;
}

}  // namespace

const char* percentile_name(LatencyPercentile p) {
  switch (p) {
    case LatencyPercentile::P50: return "p50";
    case LatencyPercentile::P90: return "p90";
    case LatencyPercentile::P99: return "p99";
  }
  return "p99";
}

LatencyPercentile question_percentile(const serve::SloSpec& slo, serve::SloMetric m) {
  if (slo.bound_ms(m) <= 0) return LatencyPercentile::P99;
  const double share = slo.percentile(m) > 0 ? slo.percentile(m) : slo.attainment;
  if (share <= 0.5) return LatencyPercentile::P50;
  if (share <= 0.9) return LatencyPercentile::P90;
  return LatencyPercentile::P99;
}

namespace {

// A latency's figure at a reported percentile, from its three figures.
double at_reported_percentile(LatencyPercentile p, double p50, double p90, double p99) {
  switch (p) {
    case LatencyPercentile::P50: return p50;
    case LatencyPercentile::P90: return p90;
    case LatencyPercentile::P99: return p99;
  }
  return p99;
}

}  // namespace

double CandidateOutcome::ttft_ms(LatencyPercentile p) const {
  return at_reported_percentile(p, ttft_p50_ms, ttft_p90_ms, ttft_p99_ms);
}

double CandidateOutcome::tpot_ms(LatencyPercentile p) const {
  return at_reported_percentile(p, tpot_p50_ms, tpot_p90_ms, tpot_p99_ms);
}

std::string latency_id(const char* metric, LatencyPercentile p) {
  return std::string(metric) + "_" + percentile_name(p) + "_ms";
}

std::string latency_words(const char* metric, LatencyPercentile p) {
  std::string s = std::string(percentile_name(p)) + " " + metric;
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

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
  auto tokens_axis = [&](bool chunked) -> const std::vector<int64_t>& {
    return chunked ? (spec.chunk_size.empty() ? base_tokens : spec.chunk_size)
                   : (spec.max_num_batched_tokens.empty() ? base_tokens : spec.max_num_batched_tokens);
  };
  enum Axis : size_t { kGpu, kTp, kPp, kSeqs, kChunked, kTokens, kWeights, kKv, kRatio, kDp, kDecodePool, kAxes };
  // The last axis: the candidate's own decode pool (0), then mixed pools'
  // other decode (GPU, tp) pairs, in (GPU, tp) order.
  const size_t decode_pools = spec.gpus.size() * spec.tp.size();
  const std::vector<size_t> sizes = {spec.gpus.size(), spec.tp.size(), spec.pp.size(), spec.max_num_seqs.size(),
                                     spec.chunked_prefill.size(), 0, weights_axis.size(), kv_axis.size(),
                                     ratio_axis.size(), dp_axis.size(), 0};
  auto values = [&](size_t axis, const std::vector<size_t>& at) -> size_t {
    if (axis == kTokens) return tokens_axis(spec.chunked_prefill[at[kChunked]]).size();
    if (axis != kDecodePool) return sizes[axis];
    const bool disaggregated = ratio_axis[at[kRatio]].disaggregated();
    return spec.mixed_pools && disaggregated && dp_axis[at[kDp]] == 1 ? 1 + decode_pools : 1;
  };
  for_each_combination(kAxes, values, [&](const std::vector<size_t>& at) {
    const PoolRatio& ratio = ratio_axis[at[kRatio]];
    // Wide EP groups colocated replicas; disaggregated pools keep the base's serving.moe.
    if (dp_axis[at[kDp]] > 1 && ratio.disaggregated()) return;
    Candidate c;
    c.gpu = at[kGpu];
    c.tp = spec.tp[at[kTp]];
    c.pp = spec.pp[at[kPp]];
    c.max_num_seqs = spec.max_num_seqs[at[kSeqs]];
    c.chunked = spec.chunked_prefill[at[kChunked]];
    c.batched_tokens = tokens_axis(c.chunked)[at[kTokens]];
    c.weights = weights_axis[at[kWeights]];
    c.kv_cache = kv_axis[at[kKv]];
    c.ratio = ratio;
    c.attention_dp = dp_axis[at[kDp]];
    c.replicas = c.unit_replicas();
    if (at[kDecodePool] > 0) {
      // Mixed pools: the same prefill pool with every other decode (GPU, tp).
      const size_t dgi = (at[kDecodePool] - 1) / spec.tp.size();
      const int dtp = spec.tp[(at[kDecodePool] - 1) % spec.tp.size()];
      if (dgi == c.gpu && dtp == c.tp) return;
      c.decode_gpu_option = static_cast<int>(dgi);
      c.decode_tp_value = dtp;
    }
    ++plan.space_size;
    plan_layout(spec, c, plan);
  });
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
  o.ttft_p50_ms = number_at(m, "/ttft_ms/p50");
  o.ttft_p90_ms = number_at(m, "/ttft_ms/p90");
  o.ttft_p99_ms = number_at(m, "/ttft_ms/p99");
  o.tpot_p50_ms = number_at(m, "/tpot_ms/p50");
  o.tpot_p90_ms = number_at(m, "/tpot_ms/p90");
  o.tpot_p99_ms = number_at(m, "/tpot_ms/p99");
  o.output_tokens_per_s = number_at(m, "/throughput/output_tokens_per_s");
  o.usd_per_million_tokens = number_at(m, "/cost/usd_per_million_tokens");
  return o;
}

namespace {

// A finished candidate run's outcome, from the job's typed figures (the same
// figures read_candidate_outcome reads from its written result).
CandidateOutcome outcome_of(const serve::ServingJob& job, double request_latency_ms) {
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
  // The latencies as the run's result writes them: with a cluster
  // calibration's per-request client latency (jobs/client_request_latency),
  // which the page's candidates read from that result.
  serve::ServingMetrics m = job.metrics();
  add_request_latency(m, request_latency_ms);
  o.ok = true;
  o.verdict = serve::to_string(ss->verdict);
  o.meets_slo = ss->verdict == serve::Verdict::Meets;
  o.attainment = ss->attainment;
  o.attainment_low = ss->attainment_low;
  o.attainment_high = ss->attainment_high;
  o.requests = job.steady_state_requests();
  o.ttft_p50_ms = m.ttft_ms.empty() ? 0.0 : m.ttft_ms.p50;
  o.ttft_p90_ms = m.ttft_ms.empty() ? 0.0 : m.ttft_ms.p90;
  o.ttft_p99_ms = m.ttft_ms.empty() ? 0.0 : m.ttft_ms.p99;
  o.tpot_p50_ms = m.tpot_ms.empty() ? 0.0 : m.tpot_ms.p50;
  o.tpot_p90_ms = m.tpot_ms.empty() ? 0.0 : m.tpot_ms.p90;
  o.tpot_p99_ms = m.tpot_ms.empty() ? 0.0 : m.tpot_ms.p99;
  o.output_tokens_per_s = m.throughput.output_tokens_per_s;
  o.usd_per_million_tokens = m.cost ? m.cost->usd_per_million_tokens : 0.0;
  return o;
}

}  // namespace

CandidateRun run_candidate(const json& scenario, CostBound bound) {
  CandidateRun r;
  try {
    // As the page runs it (jobs/run_job start_single_run): within its work
    // budget, with a cluster calibration applied.
    const SingleRun run = start_single_run(scenario, bound, true);
    r.limits = serve::run_limits(run.scenario);
    while (!run.job->step(kRunAllEvents)) {
    }
    run.job->check_within_budget();
    r.outcome = outcome_of(*run.serving, calibration_request_latency_ms(run.scenario));
    r.facts = run.serving->limit_facts();
  } catch (const SightlineError& e) {
    r.outcome.error = std::string(e.code()) + " at '" + e.path() + "': " + e.what();
    r.facts.opaque = true;
  }
  return r;
}

CandidateOutcome evaluate_candidate(const json& scenario, CostBound bound) { return run_candidate(scenario, bound).outcome; }

ExplorerRuns<CandidateOutcome> run_deployment_plan(const DeploymentSearchSpec& spec, const Plan& plan,
                                                   const ForEach& for_each, const RunOptions& options) {
  const std::function<CandidateOutcome(size_t, CostBound)> evaluate = [&](size_t k, CostBound bound) {
    return evaluate_candidate(plan.scenarios[k], bound);
  };
  const std::function<std::vector<size_t>(const std::vector<CandidateOutcome>&)> pick =
      [&](const std::vector<CandidateOutcome>& central) { return interval_candidates(spec, plan, central); };
  if (!options.reuse_runs || !reuses_runs(spec)) return run_plan<CandidateOutcome>(plan.candidates.size(), for_each, evaluate, pick);
  ExplorerRuns<CandidateOutcome> runs;
  runs.central = run_central_reusing(plan, for_each, options.reused_from);
  run_intervals(runs, for_each, evaluate, pick);
  return runs;
}

std::vector<size_t> interval_candidates(const DeploymentSearchSpec& spec, const Plan& plan,
                                        const std::vector<CandidateOutcome>& central) {
  std::vector<size_t> front = pareto_front(spec, spec.budget() ? priced_all(spec, plan, central) : central);
  if (front.size() > static_cast<size_t>(spec.max_interval_points)) front.resize(static_cast<size_t>(spec.max_interval_points));
  return front;
}

DeploymentSearchResult rank_deployment_search(const DeploymentSearchSpec& spec, const Plan& plan,
                                              const std::vector<CandidateOutcome>& central,
                                              const std::vector<CandidateOutcome>& low,
                                              const std::vector<CandidateOutcome>& high) {
  DeploymentSearchResult out;
  out.space = space_counts(plan.space_size, plan.pruned.size(), plan.candidates.size(), central.size());
  out.show_tokens = !spec.max_num_batched_tokens.empty() || !spec.chunk_size.empty();
  out.show_weights = !spec.weights.empty();
  out.show_kv = !spec.kv_cache.empty();
  out.show_ratio = !spec.prefill_decode_ratio.empty();
  out.show_mixed = spec.mixed_pools;
  out.show_dp = !spec.attention_dp.empty();
  for (const GpuOption& g : spec.gpus) out.gpu_ids.push_back(g.gpu);
  out.ttft_percentile = spec.ttft_percentile;
  out.tpot_percentile = spec.tpot_percentile;
  out.target_qps = spec.target_qps;
  out.max_gpus = spec.max_gpus;
  out.pruned_layouts = plan.pruned;
  for (const auto& p : plan.pruned) out.pruned_labels.push_back(candidate_label(spec, p.layout));
  const std::vector<size_t> with_interval = interval_candidates(spec, plan, central);
  out.budget = spec.budget();
  const std::vector<size_t> front = pareto_front(spec, spec.budget() ? priced_all(spec, plan, central) : central);
  for (size_t i = 0; i < central.size(); ++i) {
    RankedCandidate r;
    r.index = i;
    r.c = plan.candidates[i];
    r.label = candidate_label(spec, r.c);
    r.usd_per_hour = candidate_usd_per_hour(spec, r.c);
    r.central = priced(spec, plan, i, central[i]);
    out.requests_simulated += central[i].requests;
    r.on_front = std::find(front.begin(), front.end(), i) != front.end();
    const CandidateOutcome* lo = nullptr;
    const CandidateOutcome* hi = nullptr;
    if (interval_runs_of(i, with_interval, low, high, lo, hi)) {
      r.has_interval = true;
      r.low = priced(spec, plan, i, *lo);
      r.high = priced(spec, plan, i, *hi);
      out.requests_simulated += lo->requests + hi->requests;
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
