#include "search/deployment_search.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "perf/cost_setup.hpp"
#include "presets/preset_store.hpp"
#include "scenario/scenario.hpp"
#include "serve/serving_job.hpp"

namespace sightline::search {

namespace {

constexpr int64_t kRunAllEvents = int64_t{1} << 40;

json scenario_document(const json& base) {
  if (base.is_string()) return require_preset("scenarios", base.get<std::string>(), "/base");
  require_object(base, "/base");
  return base;
}

template <class T>
std::vector<T> int_list(const ObjectReader& r, const std::string& key, std::vector<T> fallback, int64_t lo, int64_t hi) {
  const json* v = r.find(key);
  if (!v) return fallback;
  const std::string path = r.child_path(key);
  if (!v->is_array() || v->empty()) fail(error_code::kType, path, "expected a non-empty array of whole numbers");
  std::vector<T> out;
  for (size_t i = 0; i < v->size(); ++i) out.push_back(static_cast<T>(read_integer((*v)[i], pointer_append(path, i), lo, hi)));
  return out;
}

double mean_length(const serve::LengthSpec& l) {
  switch (l.dist) {
    case serve::LengthDist::Fixed: return l.value;
    case serve::LengthDist::Normal:
    case serve::LengthDist::Lognormal: return l.mean;
    default: return 0.5 * static_cast<double>(l.min + l.max_possible());
  }
}

// The candidate as a scenario document: the base with the hardware, one pool
// of `replicas` x (tp, pp), the scheduler limits, arrivals at the target rate,
// and the steady-state check that sizes and judges the run.
json candidate_document(const DeploymentSearchSpec& spec, const Candidate& c) {
  const GpuOption& g = spec.gpus[c.gpu];
  json d = spec.base;
  const int total = c.gpus();
  const int per_node = std::min(total, g.gpus_per_node);
  d["hardware"] = {{"gpu", g.gpu}, {"gpus_per_node", per_node}};
  if (per_node > 1) d["hardware"]["intra_node"] = g.intra_node;
  if (total > per_node) {
    d["hardware"]["nodes"] = (total + per_node - 1) / per_node;
    d["hardware"]["inter_node"] = g.inter_node;
  }
  if (!d.contains("cost_model") || !d["cost_model"].is_object()) d["cost_model"] = json::object();
  d["cost_model"]["gpu_hour_usd"] = g.usd_per_hour;
  json& sv = d["serving"];
  for (const char* k : {"parallelism", "max_qps_search", "compare", "key_metrics", "outputs"}) sv.erase(k);
  json router = sv.contains("cluster") && sv["cluster"].contains("router") ? sv["cluster"]["router"] : json("least_outstanding");
  sv["cluster"] = {{"router", router}, {"pools", json::array({{{"name", "main"}, {"replicas", c.replicas}, {"tp", c.tp}, {"pp", c.pp}}})}};
  if (!sv.contains("scheduler") || !sv["scheduler"].is_object()) sv["scheduler"] = json::object();
  sv["scheduler"]["policy"] = c.chunked ? "chunked_prefill" : "continuous";
  sv["scheduler"]["max_num_seqs"] = c.max_num_seqs;
  sv["workload"]["arrival"] = {{"process", "poisson"}, {"rate_qps", spec.target_qps}};
  sv["workload"].erase("duration_s");
  sv["workload"]["num_requests"] = spec.requests;
  sv["limits"] = {{"max_requests", spec.max_requests}};
  sv["steady_state"] = {{"max_requests", spec.max_requests}};
  sv["outputs"] = {{"max_request_records", 0}};
  return d;
}

double number_at(const json& j, const char* pointer) {
  const json::json_pointer p(pointer);
  return j.contains(p) && j.at(p).is_number() ? j.at(p).get<double>() : 0.0;
}

json outcome_json(const CandidateOutcome& o) {
  if (!o.ok) return {{"error", o.error}};
  return {{"meets_slo", o.meets_slo},
          {"verdict", o.verdict},
          {"slo_attainment", o.attainment},
          {"slo_attainment_low", o.attainment_low},
          {"slo_attainment_high", o.attainment_high},
          {"requests", o.requests},
          {"ttft_p99_ms", o.ttft_p99_ms},
          {"tpot_p99_ms", o.tpot_p99_ms},
          {"output_tokens_per_s", o.output_tokens_per_s},
          {"usd_per_million_tokens", o.usd_per_million_tokens}};
}

// A metric with its 80% interval (the low/high cost-bound runs) when it has
// one. The interval spans all three runs, as a single run's key metrics do:
// the bound runs have their own lengths and sampling noise, so a metric the
// cost bound barely moves (e.g. $/Mtok, set by the target rate) can land on
// either side of the central value.
json metric(const RankedCandidate& r, const char* id, double CandidateOutcome::*field) {
  json m = {{"id", id}, {"value", r.central.*field}};
  if (r.has_interval && r.low.ok && r.high.ok) {
    m["low"] = std::min({r.low.*field, r.high.*field, r.central.*field});
    m["high"] = std::max({r.low.*field, r.high.*field, r.central.*field});
  }
  return m;
}

json ranked_json(const RankedCandidate& r) {
  json j = {{"deployment", r.label},
            {"candidate", r.index},
            {"gpus", r.c.gpus()},
            {"replicas", r.c.replicas},
            {"tp", r.c.tp},
            {"pp", r.c.pp},
            {"max_num_seqs", r.c.max_num_seqs},
            {"chunked_prefill", r.c.chunked},
            {"usd_per_hour", r.usd_per_hour},
            {"pareto", r.on_front}};
  j.update(outcome_json(r.central));
  if (r.has_interval) {
    j["interval_80pct"] = {{"low_cost_bound", outcome_json(r.low)}, {"high_cost_bound", outcome_json(r.high)}};
    j["key_metrics"] = json::array({metric(r, "usd_per_million_tokens", &CandidateOutcome::usd_per_million_tokens),
                                    metric(r, "ttft_p99_ms", &CandidateOutcome::ttft_p99_ms),
                                    metric(r, "tpot_p99_ms", &CandidateOutcome::tpot_p99_ms)});
  }
  return j;
}

// Candidates (indices) meeting the SLO that no other meeting one beats on
// both $/Mtok and P99 TTFT, cheapest first.
std::vector<size_t> pareto_front(const std::vector<CandidateOutcome>& o) {
  std::vector<size_t> front;
  for (size_t a = 0; a < o.size(); ++a) {
    if (!o[a].ok || !o[a].meets_slo) continue;
    bool dominated = false;
    for (size_t b = 0; b < o.size() && !dominated; ++b) {
      if (b == a || !o[b].ok || !o[b].meets_slo) continue;
      const bool no_worse = o[b].usd_per_million_tokens <= o[a].usd_per_million_tokens && o[b].ttft_p99_ms <= o[a].ttft_p99_ms;
      const bool better = o[b].usd_per_million_tokens < o[a].usd_per_million_tokens || o[b].ttft_p99_ms < o[a].ttft_p99_ms;
      // Exact ties: the earlier candidate stays.
      dominated = no_worse && (better || b < a);
    }
    if (!dominated) front.push_back(a);
  }
  std::stable_sort(front.begin(), front.end(),
                   [&](size_t a, size_t b) { return o[a].usd_per_million_tokens < o[b].usd_per_million_tokens; });
  return front;
}

}  // namespace

std::string candidate_label(const DeploymentSearchSpec& spec, const Candidate& c) {
  return spec.gpus[c.gpu].gpu + " " + std::to_string(c.replicas) + "x(tp" + std::to_string(c.tp) +
         (c.pp > 1 ? " pp" + std::to_string(c.pp) : "") + ") seqs " + std::to_string(c.max_num_seqs) +
         (c.chunked ? " chunked" : "");
}

DeploymentSearchSpec read_deployment_search(const json& doc) {
  ObjectReader r(doc, "", {"base", "target_qps", "max_gpus", "gpus", "tp", "pp", "max_num_seqs", "chunked_prefill",
                           "requests", "max_requests", "replica_options", "max_interval_points"});
  DeploymentSearchSpec spec;
  spec.base = scenario_document(r.required("base"));
  spec.target_qps = r.number("target_qps", 1e-6, 1e6);
  spec.max_gpus = static_cast<int>(r.integer("max_gpus", 1, 4096, 64));
  const json& gl = r.required("gpus");
  if (!gl.is_array() || gl.empty()) fail(error_code::kType, "/gpus", "expected a non-empty array of GPU options");
  for (size_t i = 0; i < gl.size(); ++i) {
    const std::string path = pointer_append("/gpus", i);
    ObjectReader gr(gl[i], path, {"gpu", "usd_per_hour", "intra_node", "inter_node", "gpus_per_node"});
    GpuOption g;
    g.gpu = gr.string("gpu");
    require_preset("gpus", g.gpu, gr.child_path("gpu"));
    g.usd_per_hour = gr.number("usd_per_hour", 0.0, 1e6);
    g.intra_node = gr.string("intra_node", "nvlink4-nvswitch");
    g.inter_node = gr.string("inter_node", "ib-ndr");
    g.gpus_per_node = static_cast<int>(gr.integer("gpus_per_node", 1, 64, 8));
    spec.gpus.push_back(g);
  }
  spec.tp = int_list<int>(r, "tp", spec.tp, 1, 64);
  spec.pp = int_list<int>(r, "pp", spec.pp, 1, 64);
  spec.max_num_seqs = int_list<int64_t>(r, "max_num_seqs", spec.max_num_seqs, 1, 65536);
  if (const json* cv = r.find("chunked_prefill")) {
    if (!cv->is_array() || cv->empty()) fail(error_code::kType, "/chunked_prefill", "expected a non-empty array of true/false");
    spec.chunked_prefill.clear();
    for (size_t i = 0; i < cv->size(); ++i) {
      if (!(*cv)[i].is_boolean()) fail(error_code::kType, pointer_append("/chunked_prefill", i), "expected true or false");
      spec.chunked_prefill.push_back((*cv)[i].get<bool>());
    }
  }
  spec.requests = r.integer("requests", 100, 200000, 1000);
  spec.max_requests = r.integer("max_requests", spec.requests, 2000000, std::max<int64_t>(spec.requests, 20000));
  spec.replica_options = static_cast<int>(r.integer("replica_options", 1, 64, 3));
  spec.max_interval_points = static_cast<int>(r.integer("max_interval_points", 0, 64, 8));
  // The base must be a valid serving simulation with an SLO.
  try {
    const Scenario s = read_scenario(spec.base);
    if (!s.serving || !s.serving->simulation) fail(error_code::kConstraint, "/serving/mode", "the base must be a serving \"simulate\" scenario");
    if (!s.serving->simulation->slo.enabled) fail(error_code::kMissingKey, "/serving/slo", "the search needs an slo");
  } catch (const SightlineError& e) {
    fail(e.code().c_str(), std::string("/base") + e.path(), e.what());
  }
  return spec;
}

Plan plan_deployment_search(const DeploymentSearchSpec& spec) {
  Plan plan;
  for (size_t gi = 0; gi < spec.gpus.size(); ++gi)
    for (int tp : spec.tp)
      for (int pp : spec.pp)
        for (int64_t seqs : spec.max_num_seqs)
          for (bool chunked : spec.chunked_prefill) {
            Candidate c;
            c.gpu = gi;
            c.tp = tp;
            c.pp = pp;
            c.max_num_seqs = seqs;
            c.chunked = chunked;
            ++plan.space_size;
            if (c.gpus() > spec.max_gpus) {
              plan.pruned.push_back({c, "tp x pp above max_gpus"});
              continue;
            }
            // One replica through every scenario check (memory fit included).
            Scenario s;
            try {
              s = read_scenario(candidate_document(spec, c));
            } catch (const SightlineError& e) {
              plan.pruned.push_back({c, std::string(e.code()) + ": " + e.what()});
              continue;
            }
            // Analytic bounds from the same cost model, at its central bound.
            const serve::SimulationSpec& sim = *s.serving->simulation;
            const double prompt = std::max(1.0, mean_length(sim.workload.prompt));
            const double output = std::max(1.0, mean_length(sim.workload.output));
            const CostSetup cost = make_cost_setup(s.cost_model, s.hardware);
            StepOptions options;
            options.attention = s.serving->attention;
            const ParallelLayout layout{tp, pp};
            BatchShape one;
            one.seqs.push_back(SeqChunk{1, static_cast<int64_t>(prompt)});
            const double decode1_s = cost.price(build_forward_step(s.model, s.precision, layout, one, options)).time_s;
            BatchShape pre;
            pre.seqs.push_back(SeqChunk{static_cast<int64_t>(prompt), 0});
            const double prefill_s = cost.price(build_forward_step(s.model, s.precision, layout, pre, options)).time_s;
            const auto& slo = sim.slo;
            if (slo.tpot_ms > 0 && decode1_s * 1e3 > slo.tpot_ms && slo.attainment > 0.5) {
              plan.pruned.push_back({c, "a batch-1 decode step (" + std::to_string(decode1_s * 1e3) + " ms) is above the TPOT SLO"});
              continue;
            }
            if (slo.ttft_ms > 0 && prefill_s * 1e3 > slo.ttft_ms && slo.attainment > 0.5) {
              plan.pruned.push_back({c, "a lone prefill of the mean prompt (" + std::to_string(prefill_s * 1e3) + " ms) is above the TTFT SLO"});
              continue;
            }
            BatchShape full;
            const int64_t ctx = static_cast<int64_t>(prompt + output / 2);
            for (int64_t i = 0; i < seqs; ++i) full.seqs.push_back(SeqChunk{1, ctx});
            const double decode_full_s = cost.price(build_forward_step(s.model, s.precision, layout, full, options)).time_s;
            // Decode alone at a full batch: an upper bound on a replica's requests per second.
            const double replica_qps_bound = static_cast<double>(seqs) / decode_full_s / output;
            const int r_min = std::max(1, static_cast<int>(std::ceil(spec.target_qps / replica_qps_bound)));
            int added = 0;
            for (int r = r_min; added < spec.replica_options && r * tp * pp <= spec.max_gpus; ++r) {
              const int total = r * tp * pp;
              const int per_node = spec.gpus[gi].gpus_per_node;
              if (total > per_node && total % per_node != 0) continue;  // whole nodes only
              if (added > 0 && r < static_cast<int>(std::ceil(r_min * (1.0 + 0.5 * added)))) continue;
              Candidate k = c;
              k.replicas = r;
              plan.candidates.push_back(k);
              plan.scenarios.push_back(candidate_document(spec, k));
              ++added;
            }
            if (added == 0)
              plan.pruned.push_back({c, "needs at least " + std::to_string(r_min) + " replicas by the throughput bound: above max_gpus"});
          }
  return plan;
}

CandidateOutcome read_candidate_outcome(const json& result) {
  CandidateOutcome o;
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

CandidateOutcome evaluate_candidate(const json& scenario, CostBound bound) {
  try {
    Scenario s = read_scenario(scenario);
    s.cost_model.bound = bound;
    serve::ServingJob job(s);
    while (!job.step(kRunAllEvents)) {
    }
    return read_candidate_outcome(job.result());
  } catch (const SightlineError& e) {
    CandidateOutcome o;
    o.error = std::string(e.code()) + " at '" + e.path() + "': " + e.what();
    return o;
  }
}

std::vector<size_t> interval_candidates(const DeploymentSearchSpec& spec, const Plan&,
                                        const std::vector<CandidateOutcome>& central) {
  std::vector<size_t> front = pareto_front(central);
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
  out.target_qps = spec.target_qps;
  out.max_gpus = spec.max_gpus;
  out.space_size = plan.space_size;
  out.pruned = static_cast<int64_t>(plan.pruned.size());
  out.simulated = static_cast<int64_t>(central.size());
  out.pruned_layouts = plan.pruned;
  for (const auto& p : plan.pruned) out.pruned_labels.push_back(candidate_label(spec, p.layout));
  const std::vector<size_t> with_interval = interval_candidates(spec, plan, central);
  const std::vector<size_t> front = pareto_front(central);
  for (size_t i = 0; i < central.size(); ++i) {
    RankedCandidate r;
    r.index = i;
    r.c = plan.candidates[i];
    r.label = candidate_label(spec, r.c);
    r.usd_per_hour = spec.gpus[r.c.gpu].usd_per_hour * r.c.gpus();
    r.central = central[i];
    out.requests_simulated += central[i].requests;
    r.on_front = std::find(front.begin(), front.end(), i) != front.end();
    const auto it = std::find(with_interval.begin(), with_interval.end(), i);
    if (it != with_interval.end()) {
      const size_t k = static_cast<size_t>(it - with_interval.begin());
      if (k < low.size() && k < high.size()) {
        r.has_interval = true;
        r.low = low[k];
        r.high = high[k];
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
  out.slo = {{"attainment", slo.attainment}};
  if (slo.ttft_ms > 0) out.slo["ttft_ms"] = slo.ttft_ms;
  if (slo.tpot_ms > 0) out.slo["tpot_ms"] = slo.tpot_ms;
  if (slo.e2e_ms > 0) out.slo["e2e_ms"] = slo.e2e_ms;
  return out;
}

json DeploymentSearchResult::to_json() const {
  json table = json::array();
  for (const auto& r : ranked) table.push_back(ranked_json(r));
  json front_j = json::array();
  for (size_t k : front) front_j.push_back(ranked_json(ranked[k]));
  json pruned_j = json::array();
  for (size_t i = 0; i < pruned_layouts.size(); ++i)
    pruned_j.push_back({{"layout", pruned_labels[i]}, {"reason", pruned_layouts[i].reason}});
  const json best = cheapest >= 0 ? ranked_json(ranked[static_cast<size_t>(cheapest)]) : json(nullptr);
  json key_metrics = json::array();
  if (cheapest >= 0) {
    const RankedCandidate& b = ranked[static_cast<size_t>(cheapest)];
    key_metrics.push_back(metric(b, "usd_per_million_tokens", &CandidateOutcome::usd_per_million_tokens));
    key_metrics.push_back(metric(b, "ttft_p99_ms", &CandidateOutcome::ttft_p99_ms));
    key_metrics.push_back(metric(b, "tpot_p99_ms", &CandidateOutcome::tpot_p99_ms));
    key_metrics.push_back({{"id", "gpus"}, {"value", b.c.gpus()}});
  }
  key_metrics.push_back({{"id", "deployments_simulated"}, {"value", simulated}});
  return {{"kind", "deployment_search"},
          {"target_qps", target_qps},
          {"max_gpus", max_gpus},
          {"slo", slo},
          {"accuracy", accuracy},
          {"key_metrics", key_metrics},
          {"space", {{"layouts", space_size}, {"pruned", pruned}, {"simulated", simulated}, {"requests_simulated", requests_simulated}}},
          {"cheapest_meeting_slo", best},
          {"pareto_axes", {"usd_per_million_tokens", "ttft_p99_ms"}},
          {"pareto_front", front_j},
          {"ranked", table},
          {"pruned", pruned_j},
          {"criterion",
           "each candidate runs at target_qps with serving.steady_state: the capacity search's run sizing and growth, "
           "and its verdict (stable, and the batch-means interval of the post-warm-up SLO attainment at or above the "
           "target; undecided counts as a miss); ranked at the cost model's central bound; the Pareto points re-run "
           "at the kernels' low and high cost bounds give the 80% interval; $/Mtok counts input and output tokens"}};
}

}  // namespace sightline::search
