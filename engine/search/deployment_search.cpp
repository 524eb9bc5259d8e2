#include "search/deployment_search.hpp"

#include <algorithm>
#include <cmath>

#include "api/api.hpp"
#include "core/error.hpp"
#include "perf/cost_setup.hpp"
#include "scenario/scenario.hpp"
#include "serve/simulation.hpp"
#include "serve/steady_state.hpp"

namespace sightline::search {

namespace {

json scenario_document(const json& base) {
  if (base.is_string()) {
    const json p = json::parse(api::get_preset("scenarios", base.get<std::string>()));
    if (!p.value("ok", false)) fail(error_code::kInvalidValue, "/base", "unknown scenario preset '" + base.get<std::string>() + "'");
    return p["result"];
  }
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
// of `replicas` x (tp, pp), the scheduler limits, and arrivals at the target rate.
json candidate_document(const DeploymentSearchSpec& spec, const Candidate& c) {
  const GpuOption& g = spec.gpus[c.gpu];
  json d = spec.base;
  const int total = c.gpus();
  const int per_node = std::min(total, g.gpus_per_node);
  d["hardware"] = {{"gpu", g.gpu}, {"gpus_per_node", per_node}};
  if (per_node > 1) d["hardware"]["intra_node"] = g.intra_node;
  if (total > per_node) {
    d["hardware"]["nodes"] = total / per_node;
    d["hardware"]["inter_node"] = g.inter_node;
  }
  if (!d.contains("cost_model") || !d["cost_model"].is_object()) d["cost_model"] = json::object();
  d["cost_model"]["gpu_hour_usd"] = g.usd_per_hour;
  json& sv = d["serving"];
  sv.erase("parallelism");
  sv.erase("max_qps_search");
  sv.erase("compare");
  sv.erase("key_metrics");
  sv.erase("outputs");
  json router = sv.contains("cluster") && sv["cluster"].contains("router") ? sv["cluster"]["router"] : json("least_outstanding");
  sv["cluster"] = {{"router", router}, {"pools", json::array({{{"name", "main"}, {"replicas", c.replicas}, {"tp", c.tp}, {"pp", c.pp}}})}};
  if (!sv.contains("scheduler") || !sv["scheduler"].is_object()) sv["scheduler"] = json::object();
  sv["scheduler"]["policy"] = c.chunked ? "chunked_prefill" : "continuous";
  sv["scheduler"]["max_num_seqs"] = c.max_num_seqs;
  sv["workload"]["arrival"] = {{"process", "poisson"}, {"rate_qps", spec.target_qps}};
  sv["workload"].erase("duration_s");
  sv["workload"]["num_requests"] = spec.requests;
  return d;
}

std::string layout_label(const DeploymentSearchSpec& spec, const Candidate& c) {
  return spec.gpus[c.gpu].gpu + " " + std::to_string(c.replicas) + "x(tp" + std::to_string(c.tp) +
         (c.pp > 1 ? " pp" + std::to_string(c.pp) : "") + ") seqs " + std::to_string(c.max_num_seqs) +
         (c.chunked ? " chunked" : "");
}

struct Simulated {
  serve::SteadyStateReport report;
  json metrics;
};

Simulated simulate(const Scenario& s) {
  serve::Simulation sim(s, serve::WorkloadOverride{}, false);
  while (!sim.run(1 << 20)) {
  }
  Simulated out;
  serve::SteadyStateOptions o;
  out.report = serve::judge_steady_state(sim.outcomes(), s.serving->simulation->slo, 0, 0, 0, o);
  out.metrics = sim.metrics();
  return out;
}

double number_at(const json& j, const char* pointer) {
  const json::json_pointer p(pointer);
  return j.contains(p) && j.at(p).is_number() ? j.at(p).get<double>() : 0.0;
}

json candidate_json(const DeploymentSearchSpec& spec, const CandidateResult& r) {
  json j = {{"deployment", layout_label(spec, r.c)},
            {"gpu", spec.gpus[r.c.gpu].gpu},
            {"gpus", r.c.gpus()},
            {"replicas", r.c.replicas},
            {"tp", r.c.tp},
            {"pp", r.c.pp},
            {"max_num_seqs", r.c.max_num_seqs},
            {"chunked_prefill", r.c.chunked}};
  if (!r.ok) {
    j["error"] = r.error;
    return j;
  }
  j["meets_slo"] = r.meets_slo;
  j["verdict"] = r.verdict;
  j["slo_attainment"] = r.attainment;
  j["slo_attainment_low"] = r.attainment_low;
  j["slo_attainment_high"] = r.attainment_high;
  j["ttft_p99_ms"] = r.ttft_p99_ms;
  j["tpot_p99_ms"] = r.tpot_p99_ms;
  j["output_tokens_per_s"] = r.output_tokens_per_s;
  j["usd_per_hour"] = r.usd_per_hour;
  j["usd_per_million_tokens"] = r.usd_per_million_tokens;
  return j;
}

}  // namespace

DeploymentSearchSpec read_deployment_search(const json& doc) {
  ObjectReader r(doc, "", {"base", "target_qps", "max_gpus", "gpus", "tp", "pp", "max_num_seqs", "chunked_prefill",
                           "requests", "replica_options"});
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
  spec.requests = r.integer("requests", 100, 200000, 2000);
  spec.replica_options = static_cast<int>(r.integer("replica_options", 1, 64, 3));
  // The base must be a valid serving simulation with an SLO.
  try {
    const Scenario s = read_scenario(spec.base);
    if (!s.serving || !s.serving->simulation) fail(error_code::kConstraint, "/base/serving/mode", "the base must be a serving \"simulate\" scenario");
    if (!s.serving->simulation->slo.enabled) fail(error_code::kMissingKey, "/base/serving/slo", "the search needs an slo");
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
            // Analytic bounds from the same cost model.
            const serve::SimulationSpec& sim = *s.serving->simulation;
            const double prompt = std::max(1.0, mean_length(sim.workload.prompt));
            const double output = std::max(1.0, mean_length(sim.workload.output));
            Scenario priced = s;
            priced.serving->parallelism = ParallelLayout{tp, pp};
            const CostSetup cost = make_cost_setup(priced);
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
            int r_min = std::max(1, static_cast<int>(std::ceil(spec.target_qps / replica_qps_bound)));
            int added = 0;
            for (int r = r_min; added < spec.replica_options && r * tp * pp <= spec.max_gpus; ++r) {
              const int total = r * tp * pp;
              const int per_node = spec.gpus[gi].gpus_per_node;
              if (total > per_node && total % per_node != 0) continue;  // whole nodes only
              if (added > 0 && r < static_cast<int>(std::ceil(r_min * (1.0 + 0.5 * added)))) continue;
              Candidate k = c;
              k.replicas = r;
              plan.candidates.push_back(k);
              ++added;
            }
            if (added == 0)
              plan.pruned.push_back({c, "needs at least " + std::to_string(r_min) + " replicas by the throughput bound: above max_gpus"});
          }
  return plan;
}

CandidateResult evaluate_candidate(const DeploymentSearchSpec& spec, const Candidate& c) {
  CandidateResult r;
  r.c = c;
  r.usd_per_hour = spec.gpus[c.gpu].usd_per_hour * c.gpus();
  try {
    const Scenario s = read_scenario(candidate_document(spec, c));
    const Simulated run = simulate(s);
    r.ok = true;
    r.verdict = serve::to_string(run.report.verdict);
    r.meets_slo = run.report.verdict == serve::Verdict::Meets;
    r.attainment = run.report.attainment;
    r.attainment_low = run.report.attainment_low;
    r.attainment_high = run.report.attainment_high;
    r.ttft_p99_ms = number_at(run.metrics, "/ttft_ms/p99");
    r.tpot_p99_ms = number_at(run.metrics, "/tpot_ms/p99");
    r.output_tokens_per_s = number_at(run.metrics, "/throughput/output_tokens_per_s");
    r.usd_per_million_tokens = number_at(run.metrics, "/cost/usd_per_million_tokens");
  } catch (const SightlineError& e) {
    r.error = std::string(e.code()) + " at '" + e.path() + "': " + e.what();
  }
  return r;
}

json summarize_deployment_search(const DeploymentSearchSpec& spec, const Plan& plan,
                                 const std::vector<CandidateResult>& results) {
  std::vector<const CandidateResult*> ranked;
  for (const auto& r : results) ranked.push_back(&r);
  // Meeting the SLO first, then by $/Mtok, then fewer GPUs; the layout breaks ties.
  std::stable_sort(ranked.begin(), ranked.end(), [](const CandidateResult* a, const CandidateResult* b) {
    if (a->ok != b->ok) return a->ok;
    if (a->meets_slo != b->meets_slo) return a->meets_slo;
    if (a->usd_per_million_tokens != b->usd_per_million_tokens) return a->usd_per_million_tokens < b->usd_per_million_tokens;
    return a->c.gpus() < b->c.gpus();
  });
  json table = json::array();
  for (const auto* r : ranked) table.push_back(candidate_json(spec, *r));
  // Pareto front over the simulated candidates: lower $/Mtok and lower P99 TTFT.
  json front = json::array();
  for (const auto* a : ranked) {
    if (!a->ok) continue;
    bool dominated = false;
    for (const auto* b : ranked) {
      if (!b->ok || a == b) continue;
      if (b->usd_per_million_tokens <= a->usd_per_million_tokens && b->ttft_p99_ms <= a->ttft_p99_ms &&
          (b->usd_per_million_tokens < a->usd_per_million_tokens || b->ttft_p99_ms < a->ttft_p99_ms)) {
        dominated = true;
        break;
      }
    }
    if (!dominated) front.push_back(candidate_json(spec, *a));
  }
  std::sort(front.begin(), front.end(), [](const json& a, const json& b) {
    return a["usd_per_million_tokens"].get<double>() < b["usd_per_million_tokens"].get<double>();
  });
  json best = nullptr;
  if (!ranked.empty() && ranked.front()->ok && ranked.front()->meets_slo) {
    const CandidateResult& b = *ranked.front();
    best = candidate_json(spec, b);
    // The cost model's 80% interval: the same run at the kernels' low and high bounds.
    json interval = json::object();
    for (CostBound bound : {CostBound::Low, CostBound::High}) {
      Scenario s = read_scenario(candidate_document(spec, b.c));
      s.cost_model.bound = bound;
      const Simulated run = simulate(s);
      const std::string name = cost_bound_name(bound);
      interval[name] = {{"ttft_p99_ms", number_at(run.metrics, "/ttft_ms/p99")},
                        {"tpot_p99_ms", number_at(run.metrics, "/tpot_ms/p99")},
                        {"usd_per_million_tokens", number_at(run.metrics, "/cost/usd_per_million_tokens")},
                        {"verdict", serve::to_string(run.report.verdict)}};
    }
    best["interval_80pct"] = interval;
  }
  json pruned = json::array();
  for (const auto& p : plan.pruned) {
    Candidate c = p.layout;
    pruned.push_back({{"layout", layout_label(spec, c)}, {"reason", p.reason}});
  }
  const Scenario base = read_scenario(candidate_document(spec, plan.candidates.empty() ? Candidate{} : plan.candidates.front()));
  const auto& slo = base.serving->simulation->slo;
  json slo_j = {{"attainment", slo.attainment}};
  if (slo.ttft_ms > 0) slo_j["ttft_ms"] = slo.ttft_ms;
  if (slo.tpot_ms > 0) slo_j["tpot_ms"] = slo.tpot_ms;
  if (slo.e2e_ms > 0) slo_j["e2e_ms"] = slo.e2e_ms;
  return {{"kind", "deployment_search"},
          {"target_qps", spec.target_qps},
          {"slo", slo_j},
          {"space", {{"layouts", plan.space_size}, {"pruned", plan.pruned.size()}, {"simulated", results.size()}}},
          {"cheapest_meeting_slo", best},
          {"pareto_front", front},
          {"ranked", table},
          {"pruned", pruned},
          {"criterion",
           "each candidate is simulated at target_qps for `requests` requests and meets the SLO when the steady-state "
           "verdict of the max-QPS search says so (stable, and the batch-means interval of the post-warm-up SLO "
           "attainment at or above the target); $/Mtok counts input and output tokens"}};
}

}  // namespace sightline::search
