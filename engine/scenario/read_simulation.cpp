#include "scenario/simulation_spec.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/error.hpp"
#include "core/parameter_schema.hpp"
#include "mem/inference_memory.hpp"
#include "scenario/checks.hpp"
#include "scenario/scenario.hpp"
#include "scenario/memory_plan.hpp"
#include "scenario/metric_catalogue.hpp"
#include "scenario/policy_registry.hpp"
#include "scenario/simulation_sections.hpp"

namespace sightline::serve {

const char* to_string(ArrivalProcess v) {
  switch (v) {
    case ArrivalProcess::Poisson: return "poisson";
    case ArrivalProcess::Gamma: return "gamma";
    case ArrivalProcess::Fixed: return "fixed";
    case ArrivalProcess::AllAtOnce: return "all_at_once";
    case ArrivalProcess::Trace: return "trace";
    case ArrivalProcess::ClosedLoop: return "closed_loop";
  }
  return "?";
}
const char* to_string(LengthDist v) {
  switch (v) {
    case LengthDist::Fixed: return "fixed";
    case LengthDist::Uniform: return "uniform";
    case LengthDist::Normal: return "normal";
    case LengthDist::Lognormal: return "lognormal";
    case LengthDist::Zipf: return "zipf";
  }
  return "?";
}
const char* to_string(RouterKind v) {
  switch (v) {
    case RouterKind::RoundRobin: return "round_robin";
    case RouterKind::LeastOutstanding: return "least_outstanding";
    case RouterKind::LeastKvLoad: return "least_kv_load";
    case RouterKind::PrefixAffinity: return "prefix_affinity";
    case RouterKind::SessionAffinity: return "session_affinity";
    case RouterKind::KvAware: return "kv_aware";
  }
  return "?";
}
const char* to_string(PoolRole v) {
  switch (v) {
    case PoolRole::Mixed: return "mixed";
    case PoolRole::Prefill: return "prefill";
    case PoolRole::Decode: return "decode";
  }
  return "?";
}
const char* to_string(SchedulerPolicy v) {
  switch (v) {
    case SchedulerPolicy::Continuous: return "continuous";
    case SchedulerPolicy::ChunkedPrefill: return "chunked_prefill";
    case SchedulerPolicy::Static: return "static";
  }
  return "?";
}
const char* to_string(Priority v) {
  switch (v) {
    case Priority::PrefillFirst: return "prefill_first";
    case Priority::DecodeFirst: return "decode_first";
    case Priority::PrefillAlone: return "prefill_alone";
    case Priority::Fcfs: return "fcfs";
  }
  return "?";
}
const char* to_string(KvAllocation v) { return v == KvAllocation::Paged ? "paged" : "contiguous"; }
const char* to_string(PreemptionMode v) { return v == PreemptionMode::Recompute ? "recompute" : "swap"; }
const char* to_string(KvAdmission v) { return v == KvAdmission::OnDemand ? "on_demand" : "to_completion"; }
const char* to_string(SpecMethod v) {
  switch (v) {
    case SpecMethod::None: return "none";
    case SpecMethod::Draft: return "draft";
    case SpecMethod::Ngram: return "ngram";
    case SpecMethod::Mtp: return "mtp";
    case SpecMethod::Eagle3: return "eagle3";
  }
  return "?";
}

int64_t LengthSpec::max_possible() const {
  switch (dist) {
    case LengthDist::Fixed: return static_cast<int64_t>(value);
    default: return max;
  }
}

std::optional<double> LengthSpec::typical() const {
  switch (dist) {
    case LengthDist::Fixed: return value;
    case LengthDist::Normal:
    case LengthDist::Lognormal: return mean;
    case LengthDist::Uniform: return 0.5 * static_cast<double>(min + max);
    default: return std::nullopt;
  }
}

double TimeSpec::typical_s() const {
  switch (dist) {
    case TimeDist::Fixed: return value_s;
    case TimeDist::Uniform: return 0.5 * (min_s + max_s);
    default: return mean_s;
  }
}

std::string peek_string(const json& v, const char* key) {
  if (v.is_object()) {
    auto it = v.find(key);
    if (it != v.end() && it->is_string()) return it->get<std::string>();
  }
  return "";
}

namespace {

LimitSpec read_limits(const json* v, const std::string& path) {
  LimitSpec l;
  if (!v) return l;
  ObjectReader r(*v, path, {"max_requests", "max_events", "max_sim_time_s"});
  l.max_requests = r.integer("max_requests", 1, 2000000, l.max_requests);
  l.max_events = r.integer("max_events", 1000, 1000000000, l.max_events);
  l.max_sim_time_s = r.number("max_sim_time_s", 1e-3, 1e7, l.max_sim_time_s);
  return l;
}

}  // namespace

namespace {

constexpr size_t kMaxCompareVariants = 16;

// One comparison variant: the scenario with `serving` = `serving` (less its
// compare) and the merge patch applied, read and checked like any scenario.
SimulationSpec::CompareVariant read_compare_variant(const json& item, const std::string& cpath, const Scenario& s,
                                                    const json& serving) {
  SimulationSpec::CompareVariant out;
  ObjectReader cr(item, cpath, {"label", "patch"});
  out.label = cr.string("label", "baseline");
  const json& patch = cr.required("patch");
  const std::string patch_path = cr.child_path("patch");
  require_object(patch, patch_path);
  if (patch.contains("serving") && patch["serving"].is_object() && patch["serving"].contains("compare"))
    fail(error_code::kConstraint, pointer_append(pointer_append(patch_path, "serving"), "compare"),
         "a comparison variant cannot itself have a comparison");
  json doc = scenario_to_json(s);
  doc["serving"] = serving;
  doc["serving"].erase("compare");
  doc.merge_patch(patch);
  try {
    auto variant = std::make_shared<Scenario>(read_scenario(doc));
    if (!variant->serving || variant->serving->mode != "simulate")
      fail(error_code::kConstraint, patch_path, "the comparison variant must stay in serving mode \"simulate\"");
    out.scenario = variant;
  } catch (const SightlineError& e) {
    // Point into the patch when the offending value came from it.
    std::string p = e.path();
    bool in_patch = false;
    try {
      in_patch = !p.empty() && patch.contains(json::json_pointer(p));
    } catch (...) {
      in_patch = false;
    }
    fail(e.code().c_str(), in_patch ? patch_path + p : patch_path,
         "comparison variant: " + std::string(e.what()) + (in_patch || p.empty() ? "" : " (at " + p + ")"));
  }
  out.patch = patch;
  return out;
}

}  // namespace

namespace {

// serving.lora: multi-LoRA serving (not with speculative decoding).
void read_serving_lora(const ObjectReader& r, SimulationSpec& sp) {
  record_parameter(r.child_path("lora"), "object");
  if (const json* lv = r.find("lora")) {
    ObjectReader lr(*lv, r.child_path("lora"),
                    {"adapters", "rank", "max_adapters_per_batch", "load_time_ms", "popularity_zipf", "targets"});
    sp.lora.enabled = true;
    sp.lora.adapters = static_cast<int>(lr.integer("adapters", 1, 100000));
    sp.lora.rank = static_cast<int>(lr.integer("rank", 1, 4096, 16));
    sp.lora.max_adapters_per_batch = static_cast<int>(lr.integer("max_adapters_per_batch", 1, 4096, 4));
    if (lr.has("load_time_ms")) sp.lora.load_time_ms = lr.number("load_time_ms", 0.0, 1e6);
    sp.lora.popularity_zipf = lr.number("popularity_zipf", 0.0, 10.0, 0.0);
    sp.lora.targets = lr.choice("targets", registry_names(lora_targets()), "all_linear") == "attention"
                          ? LoraTargets::Attention
                          : LoraTargets::AllLinear;
    if (sp.speculative.method != SpecMethod::None)
      fail(error_code::kConstraint, r.child_path("lora"), "multi-LoRA serving with speculative decoding is not modelled");
  }
}

// serving.moe: expert parallelism and its fit with every pool's layout; sets the pools' (and the default) ep.
void read_serving_moe(const ObjectReader& r, const Scenario& s, SimulationSpec& sp, ParallelLayout& default_layout) {
  if (const json* mv = r.find("moe")) {
    ObjectReader mr(*mv, r.child_path("moe"),
                    {"load_imbalance", "expert_parallel", "attention_data_parallel", "redundant_experts", "all_to_all",
                     "two_batch_overlap"});
    if (!s.model.is_moe())
      fail(error_code::kConstraint, r.child_path("moe"), "serving.moe needs a mixture-of-experts model");
    // No schema default: absent, it depends on the placement (serve/moe_step.hpp, serving_load_imbalance).
    if (mr.has("load_imbalance")) {
      sp.moe.load_imbalance = mr.number("load_imbalance", 1.0, 64.0);
      sp.moe.load_imbalance_given = true;
    }
    sp.moe.expert_parallel = static_cast<int>(mr.integer("expert_parallel", 1, 1024, 1));
    sp.moe.attention_data_parallel = static_cast<int>(mr.integer("attention_data_parallel", 1, 1024, 1));
    sp.moe.redundant_experts = static_cast<int>(mr.integer("redundant_experts", 0, 4096, 0));
    sp.moe.all_to_all = pick<AllToAllMode>(mr.choice("all_to_all", registry_names(all_to_all_modes()), "auto"),
                                           {{"auto", AllToAllMode::Auto},
                                            {"low_latency", AllToAllMode::LowLatency},
                                            {"high_throughput", AllToAllMode::HighThroughput}});
    sp.moe.two_batch_overlap = mr.boolean("two_batch_overlap", false);
    const int ep = sp.moe.expert_parallel, dp = sp.moe.attention_data_parallel;
    const int slots = s.model.moe.num_experts + sp.moe.redundant_experts;
    if (slots % ep != 0)
      fail(error_code::kConstraint, mr.child_path(sp.moe.redundant_experts > 0 ? "redundant_experts" : "expert_parallel"),
           "expert_parallel (" + std::to_string(ep) + ") must divide num_experts" +
               (sp.moe.redundant_experts > 0 ? " + redundant_experts (" : " (") + std::to_string(slots) + ")");
    if (sp.moe.redundant_experts > 0 && ep == 1)
      fail(error_code::kConstraint, mr.child_path("redundant_experts"),
           "redundant experts balance an expert-parallel group; set expert_parallel > 1");
    if (sp.moe.two_batch_overlap && ep == 1)
      fail(error_code::kConstraint, mr.child_path("two_batch_overlap"),
           "two-batch overlap hides the expert-parallel all-to-all; set expert_parallel > 1");
    for (const auto& p : sp.cluster.pools) {
      if (dp == 1 && p.layout.tp % ep != 0)
        fail(error_code::kConstraint, mr.child_path("expert_parallel"),
             "expert_parallel (" + std::to_string(ep) + ") must divide every pool's tp (" +
                 std::to_string(p.layout.tp) +
                 "): experts are spread over the tensor-parallel GPUs (or set attention_data_parallel for wide EP)");
      if (dp > 1 && ep != dp * p.layout.tp)
        fail(error_code::kConstraint, mr.child_path("expert_parallel"),
             "with attention_data_parallel " + std::to_string(dp) + " the experts are spread over all its GPUs: " +
                 "expert_parallel must be attention_data_parallel × tp (" + std::to_string(dp * p.layout.tp) +
                 " for pool '" + p.name + "')");
      if (dp > 1 && p.replicas % dp != 0)
        fail(error_code::kConstraint, mr.child_path("attention_data_parallel"),
             "attention_data_parallel (" + std::to_string(dp) + ") must divide pool '" + p.name + "''s replicas (" +
                 std::to_string(p.replicas) + "): each data-parallel group is that many replicas");
    }
    for (auto& p : sp.cluster.pools) {
      p.layout.ep = ep;
      p.layout.expert_slots = slots;
    }
    default_layout.ep = ep;
    default_layout.expert_slots = slots;
  }
}

// serving.colocated_model: a second model sharing the GPUs.
void read_colocated(const ObjectReader& r, SimulationSpec& sp) {
  if (const json* cv = r.find("colocated_model")) {
    const std::string cpath = r.child_path("colocated_model");
    ObjectReader cr(*cv, cpath, {"model", "memory_fraction", "traffic_fraction"});
    sp.colocated.enabled = true;
    sp.colocated.model = read_model(cr.required("model"), cr.child_path("model"));
    sp.colocated.memory_fraction = cr.number("memory_fraction", 0.01, 0.99, 0.5);
    sp.colocated.traffic_fraction = cr.number("traffic_fraction", 0.0, 1.0, 0.5);
    for (const auto& p : sp.cluster.pools) {
      check_tensor_parallel(*sp.colocated.model, p.layout.tp, cr.child_path("model"));
      if (sp.colocated.model->num_layers % p.layout.pp != 0)
        fail(error_code::kConstraint, cr.child_path("model"), "the pools' pp must divide the co-located model's layers");
    }
    if (sp.cluster.disaggregated || sp.speculative.method != SpecMethod::None || sp.lora.enabled)
      fail(error_code::kConstraint, cpath,
           "a co-located second model cannot be combined with disaggregation, speculative decoding or LoRA");
    if (sp.workload.arrival.process != ArrivalProcess::Trace && sp.colocated.model->max_context < sp.kv.max_model_len)
      fail(error_code::kConstraint, cr.child_path("model"),
           "the co-located model's max_context (" + std::to_string(sp.colocated.model->max_context) +
               ") is below max_model_len (" + std::to_string(sp.kv.max_model_len) + "); lower kv_cache.max_model_len");
  }
}

// An interval level of the steady-state judge (max_qps_search, steady_state):
// one of the levels its Student-t quantiles are tabled at.
double read_confidence_level(const ObjectReader& r, double default_level) {
  const double conf = r.number("confidence", 0.8, 0.99, default_level);
  if (conf != 0.8 && conf != 0.9 && conf != 0.95 && conf != 0.99)
    fail(error_code::kInvalidValue, r.child_path("confidence"), "confidence must be one of 0.8, 0.9, 0.95, 0.99");
  return conf;
}

// serving.max_qps_search (needs an slo and arrivals with a rate).
void read_max_qps_search(const ObjectReader& r, SimulationSpec& sp) {
  record_parameter(r.child_path("max_qps_search"), "object");
  if (const json* qv = r.find("max_qps_search")) {
    const std::string qpath = r.child_path("max_qps_search");
    ObjectReader qr(*qv, qpath,
                    {"min_qps", "max_qps", "iterations", "num_requests", "precision", "max_requests_per_run", "confidence"});
    const SearchSpec d;  // the defaults, written once in the spec (simulation_spec.hpp)
    sp.search.enabled = true;
    sp.search.min_qps = qr.number("min_qps", 1e-6, 1e6, d.min_qps);
    sp.search.max_qps = qr.number("max_qps", 0.0, 1e6, d.max_qps);
    sp.search.iterations = static_cast<int>(qr.integer("iterations", 1, 30, d.iterations));
    sp.search.precision = qr.number("precision", 0.001, 1.0, d.precision);
    sp.search.num_requests = qr.integer("num_requests", std::min<int64_t>(100, sp.limits.max_requests), sp.limits.max_requests,
                                        std::min<int64_t>(d.num_requests, sp.limits.max_requests));
    sp.search.max_requests_per_run =
        qr.integer("max_requests_per_run", sp.search.num_requests, sp.limits.max_requests,
                   std::max(sp.search.num_requests, std::min<int64_t>(d.max_requests_per_run, sp.limits.max_requests)));
    sp.search.confidence = read_confidence_level(qr, d.confidence);
    if (sp.search.max_qps > 0 && sp.search.max_qps <= sp.search.min_qps)
      fail(error_code::kConstraint, qr.child_path("max_qps"), "max_qps must exceed min_qps");
    if (!sp.slo.enabled)
      fail(error_code::kMissingKey, r.child_path("slo"), "max_qps_search needs an slo to search against");
    if (!arrival_process_rules(to_string(sp.workload.arrival.process))->steady_state_judged)
      fail(error_code::kConstraint, qpath,
           std::string("max_qps_search needs arrivals with a rate (not ") +
               to_string(sp.workload.arrival.process) + ")");
    if (sp.workload.arrival.max_concurrency > 0)
      fail(error_code::kConstraint, qpath,
           "max_qps_search needs an open-loop rate: arrival.max_concurrency holds requests back at the client, so "
           "the server never sees the rate searched");
  }
}

// serving.steady_state (needs an slo and arrivals with a rate).
void read_steady_state_check(const ObjectReader& r, SimulationSpec& sp) {
  record_parameter(r.child_path("steady_state"), "object");
  if (const json* cv = r.find("steady_state")) {
    const std::string cpath = r.child_path("steady_state");
    ObjectReader cr(*cv, cpath, {"max_requests", "confidence"});
    const SteadyStateCheckSpec d;  // the defaults, written once in the spec (simulation_spec.hpp)
    sp.steady_state.enabled = true;
    sp.steady_state.max_requests =
        cr.integer("max_requests", sp.workload.num_requests, sp.limits.max_requests,
                   std::max(sp.workload.num_requests, std::min<int64_t>(d.max_requests, sp.limits.max_requests)));
    sp.steady_state.confidence = read_confidence_level(cr, d.confidence);
    if (!sp.slo.enabled) fail(error_code::kMissingKey, r.child_path("slo"), "steady_state needs an slo to judge against");
    if (!arrival_process_rules(to_string(sp.workload.arrival.process))->steady_state_judged)
      fail(error_code::kConstraint, cpath,
           std::string("steady_state needs arrivals with a rate (not ") + to_string(sp.workload.arrival.process) + ")");
    if (sp.workload.arrival.max_concurrency > 0)
      fail(error_code::kConstraint, cpath,
           "steady_state needs an open-loop rate: with arrival.max_concurrency a backlog waits at the client, "
           "where the judge cannot see it");
  }
}

// serving.key_metrics: ids of the metric catalogue's serving metrics.
void read_serving_key_metrics(const ObjectReader& r, SimulationSpec& sp) {
  if (const json* kv = r.find("key_metrics")) {
    const std::string kpath = r.child_path("key_metrics");
    if (!kv->is_array()) fail(error_code::kType, kpath, "expected an array of key metric ids");
    for (size_t i = 0; i < kv->size(); ++i) {
      const json& item = (*kv)[i];
      const std::string ip = pointer_append(kpath, i);
      if (!item.is_string()) fail(error_code::kType, ip, "expected a key metric id (string)");
      if (!find_metric(MetricKind::kServing, item.get<std::string>())) {
        std::string names;
        for (const auto& id : metric_ids(MetricKind::kServing)) names += (names.empty() ? "" : ", ") + id;
        fail(error_code::kInvalidValue, ip, "unknown key metric '" + item.get<std::string>() + "'; valid: " + names);
      }
      sp.key_metrics.push_back(item.get<std::string>());
    }
  }
}

// serving.outputs: what the result keeps (trace, request records, time series).
void read_outputs(const ObjectReader& r, SimulationSpec& sp) {
  if (const json* ov = r.find("outputs")) {
    ObjectReader orr(*ov, r.child_path("outputs"), {"trace", "trace_max_steps", "max_request_records", "time_series_points"});
    sp.outputs.trace = orr.boolean("trace", false);
    sp.outputs.trace_max_steps = orr.integer("trace_max_steps", 1, 10000000, 20000);
    sp.outputs.max_request_records = orr.integer("max_request_records", 0, 1000000, 1000);
    sp.outputs.time_series_points = static_cast<int>(orr.integer("time_series_points", 2, 10000, 500));
  }
}

// serving.runtime_overhead_GiB: the CUDA context and framework reserve of every GPU.
double runtime_overhead_GiB(const ObjectReader& r) { return r.number("runtime_overhead_GiB", 0, 1e4, 1.0); }

// Memory: every pool's replicas must hold the weights and leave room for KV blocks.
void check_pools_fit(const ObjectReader& r, const Scenario& s, const SimulationSpec& sp, double runtime) {
  for (size_t i = 0; i < sp.cluster.pools.size(); ++i) {
    const PoolSpec& p = sp.cluster.pools[i];
    const GpuSpec& gpu = p.gpu ? *p.gpu : s.hardware.gpu;
    const ReplicaMemoryPlan plan = plan_replica_memory(s.model, s.precision, p.layout, gpu, runtime,
                                                       s.cost_model.software_stack.sampler_bytes_per_logit, sp);
    const json* cluster = r.find("cluster");
    const std::string where = cluster && cluster->contains("pools") ? pointer_append(pointer_append(r.child_path("cluster"), "pools"), i)
                                               : pointer_append(r.child_path("parallelism"), "tp");
    const double fixed = plan.weights_GiB + plan.draft_weights_GiB + plan.lora_GiB + plan.activations_GiB + plan.runtime_GiB;
    for (size_t e = 0; e < plan.engines.size(); ++e) {
      // Like vLLM at start-up, the KV cache must hold one max_model_len
      // sequence (paged or contiguous); otherwise the engine refuses to serve.
      const EngineMemory& em = plan.engines[e];
      const int64_t need =
          kv_blocks_for(windowed_pages(em.kv_bytes_per_token, em.windowed), sp.kv.block_size, sp.kv.max_model_len);
      if (plan.engines[e].blocks < need) {
        std::ostringstream m;
        m << "a " << gpu.name << " with tp=" << p.layout.tp << " pp=" << p.layout.pp << " cannot serve "
          << (e == 0 ? s.model.name : sp.colocated.model->name) << ": of " << plan.usable_GiB
          << " GiB usable (gpu_memory_utilization " << sp.kv.gpu_memory_utilization << "), weights take "
          << plan.weights_GiB + plan.draft_weights_GiB << " GiB, LoRA " << plan.lora_GiB << " GiB, activations "
          << plan.activations_GiB << " GiB and runtime " << plan.runtime_GiB << " GiB (" << fixed
          << " GiB), leaving " << plan.engines[e].kv_budget_GiB << " GiB for the KV cache"
          << ", less than one max_model_len (" << sp.kv.max_model_len << "-token) sequence"
          << "; raise tp/pp, quantize, or lower max_model_len/max_num_batched_tokens";
        fail(error_code::kDoesNotFit, where, m.str());
      }
    }
  }
}

// serving.compare: one variant or an array of them, each read as a whole scenario.
void read_compares(const ObjectReader& r, const json& v, const Scenario& s, SimulationSpec& sp) {
  if (const json* cv = r.find("compare")) {
    const std::string cpath = r.child_path("compare");
    sp.compare_is_array = cv->is_array();
    if (sp.compare_is_array && (cv->empty() || cv->size() > kMaxCompareVariants))
      fail(error_code::kRange, cpath, "compare takes 1 to " + std::to_string(kMaxCompareVariants) + " variants");
    const size_t n = sp.compare_is_array ? cv->size() : 1;
    for (size_t i = 0; i < n; ++i)
      sp.compares.push_back(read_compare_variant(sp.compare_is_array ? (*cv)[i] : *cv,
                                                 sp.compare_is_array ? pointer_append(cpath, i) : cpath, s, v));
  }
}

}  // namespace

std::shared_ptr<const SimulationSpec> read_simulation(const json& v, const std::string& path, const Scenario& s,
                                                      ParallelLayout& default_layout) {
  ObjectReader r(v, path,
                 {"mode", "parallelism", "attention", "runtime_overhead_GiB", "workload", "cluster", "scheduler",
                  "kv_cache", "speculative", "lora", "moe", "colocated_model", "slo", "max_qps_search",
                  "steady_state", "compare", "key_metrics", "outputs", "limits"});
  auto spec = std::make_shared<SimulationSpec>();
  SimulationSpec& sp = *spec;
  if (const json* par = r.find("parallelism")) {
    ObjectReader pr(*par, r.child_path("parallelism"), {"tp", "pp"});
    default_layout.tp = static_cast<int>(pr.integer("tp", 1, 1024, 1));
    default_layout.pp = static_cast<int>(pr.integer("pp", 1, 1024, 1));
  }
  sp.limits = read_limits(r.find("limits"), r.child_path("limits"));
  sp.kv = read_kv(r.find("kv_cache"), r.child_path("kv_cache"), s.model, s.cost_model.software_stack);
  sp.workload = read_workload(r.required("workload"), r.child_path("workload"), sp.kv.max_model_len, sp.limits);
  sp.cluster = read_cluster(r.find("cluster"), r.child_path("cluster"), s, default_layout, r.has("parallelism"),
                            r.child_path("parallelism"));
  if (r.has("cluster")) default_layout = sp.cluster.pools.front().layout;
  sp.scheduler = read_scheduler(r.find("scheduler"), r.child_path("scheduler"), sp.kv.max_model_len,
                                stack_scheduler_default(s, sp.cluster));
  record_parameter(r.child_path("speculative"), "object");
  sp.speculative = read_speculative(r.find("speculative"), r.child_path("speculative"), s, sp.cluster, sp.scheduler);

  read_serving_lora(r, sp);
  read_serving_moe(r, s, sp, default_layout);
  read_colocated(r, sp);
  read_slo(r, sp);
  // One place for the price of a GPU-hour: the scenario's cost_model.
  if (s.cost_model.gpu_hour_usd > 0) sp.usd_per_gpu_hour = s.cost_model.gpu_hour_usd;
  if (sp.workload.sessions.enabled)
    for (const char* k : {"max_qps_search", "steady_state"})
      if (r.has(k))
        fail(error_code::kConstraint, r.child_path(k),
             std::string(k) + " judges a rate of independent requests; it does not support a sessions workload yet");
  read_max_qps_search(r, sp);
  read_steady_state_check(r, sp);
  read_serving_key_metrics(r, sp);
  read_outputs(r, sp);
  const double runtime = runtime_overhead_GiB(r);
  apply_stack_running_limit(r.find("scheduler"), r.child_path("scheduler"), s, runtime, sp);
  check_pools_fit(r, s, sp, runtime);

  read_compares(r, v, s, sp);
  return spec;
}

json simulation_to_json(const SimulationSpec& sp) {
  json j;
  j["workload"] = workload_to_json(sp.workload);
  json pools = json::array();
  for (const auto& p : sp.cluster.pools) {
    json pj = {{"name", p.name},
               {"replicas", p.replicas},
               {"tp", p.layout.tp},
               {"pp", p.layout.pp},
               {"role", to_string(p.role)}};
    if (p.gpu) pj["gpu"] = p.gpu->to_json();
    if (p.intra_node) pj["intra_node"] = p.intra_node->to_json();
    pools.push_back(pj);
  }
  j["cluster"] = {{"router", to_string(sp.cluster.router)}, {"pools", pools}};
  if (sp.cluster.router_load_bound_given) j["cluster"]["router_load_bound"] = sp.cluster.router_load_bound;
  if (sp.cluster.kv_transfer_link) j["cluster"]["kv_transfer_link"] = sp.cluster.kv_transfer_link->to_json();
  j["scheduler"] = scheduler_to_json(sp.scheduler);
  j["kv_cache"] = {{"allocation", to_string(sp.kv.allocation)},
                   {"block_size", sp.kv.block_size},
                   {"gpu_memory_utilization", sp.kv.gpu_memory_utilization},
                   {"watermark", sp.kv.watermark},
                   {"preemption", to_string(sp.kv.preemption)},
                   {"swap_space_GiB", sp.kv.swap_space_GiB},
                   {"prefix_caching", sp.kv.prefix_caching},
                   {"max_model_len", sp.kv.max_model_len}};
  if (sp.kv.admission != KvAdmission::OnDemand) j["kv_cache"]["admission"] = to_string(sp.kv.admission);
  if (!sp.kv.offload_tiers.empty()) j["kv_cache"]["offload"] = kv_offload_to_json(sp.kv);
  if (sp.speculative.method != SpecMethod::None) j["speculative"] = speculative_to_json(sp.speculative);
  if (sp.lora.enabled) {
    j["lora"] = {{"adapters", sp.lora.adapters},
                 {"rank", sp.lora.rank},
                 {"max_adapters_per_batch", sp.lora.max_adapters_per_batch},
                 {"popularity_zipf", sp.lora.popularity_zipf},
                 {"targets", sp.lora.targets == LoraTargets::Attention ? "attention" : "all_linear"}};
    if (sp.lora.load_time_ms >= 0) j["lora"]["load_time_ms"] = sp.lora.load_time_ms;
  }
  if (sp.moe.load_imbalance_given || sp.moe.expert_parallel != 1) {
    j["moe"] = {{"expert_parallel", sp.moe.expert_parallel}};
    if (sp.moe.load_imbalance_given) j["moe"]["load_imbalance"] = sp.moe.load_imbalance;
    if (sp.moe.attention_data_parallel != 1) j["moe"]["attention_data_parallel"] = sp.moe.attention_data_parallel;
    if (sp.moe.redundant_experts != 0) j["moe"]["redundant_experts"] = sp.moe.redundant_experts;
    if (sp.moe.all_to_all != AllToAllMode::Auto)
      j["moe"]["all_to_all"] = sp.moe.all_to_all == AllToAllMode::LowLatency ? "low_latency" : "high_throughput";
    if (sp.moe.two_batch_overlap) j["moe"]["two_batch_overlap"] = true;
  }
  if (sp.colocated.enabled)
    j["colocated_model"] = {{"model", sp.colocated.model->to_json()},
                            {"memory_fraction", sp.colocated.memory_fraction},
                            {"traffic_fraction", sp.colocated.traffic_fraction}};
  if (sp.slo.enabled) j["slo"] = slo_to_json(sp.slo);
  if (sp.search.enabled) {
    j["max_qps_search"] = {{"min_qps", sp.search.min_qps},
                           {"iterations", sp.search.iterations},
                           {"precision", sp.search.precision},
                           {"num_requests", sp.search.num_requests},
                           {"max_requests_per_run", sp.search.max_requests_per_run},
                           {"confidence", sp.search.confidence}};
    if (sp.search.max_qps > 0) j["max_qps_search"]["max_qps"] = sp.search.max_qps;
  }
  if (sp.steady_state.enabled)
    j["steady_state"] = {{"max_requests", sp.steady_state.max_requests}, {"confidence", sp.steady_state.confidence}};
  if (!sp.key_metrics.empty()) j["key_metrics"] = sp.key_metrics;
  if (!sp.compares.empty()) {
    json list = json::array();
    for (const auto& c : sp.compares) list.push_back({{"label", c.label}, {"patch", c.patch}});
    j["compare"] = sp.compare_is_array ? list : list.front();
  }
  j["outputs"] = {{"trace", sp.outputs.trace},
                  {"trace_max_steps", sp.outputs.trace_max_steps},
                  {"max_request_records", sp.outputs.max_request_records},
                  {"time_series_points", sp.outputs.time_series_points}};
  j["limits"] = {{"max_requests", sp.limits.max_requests},
                 {"max_events", sp.limits.max_events},
                 {"max_sim_time_s", sp.limits.max_sim_time_s}};
  return j;
}

}  // namespace sightline::serve
