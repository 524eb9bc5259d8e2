#include "serve/serving_job.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "run/result_header.hpp"
#include "serve/headline.hpp"
#include "scenario/metric_catalogue.hpp"
#include "mem/inference_memory.hpp"
#include "model/param_count.hpp"
#include "scenario/policy_registry.hpp"

namespace sightline::serve {

namespace {

using Figure = std::optional<double>;

Figure figure_of(const Summary& s, double Summary::*field) { return s.empty() ? Figure() : Figure(s.*field); }

// Scalar metrics compared between a run and its baseline, read from the typed
// metrics (none: the run has no such figure, and the pair is skipped).
struct ComparedMetric {
  const char* name;
  Figure (*get)(const ServingMetrics&);
};

const std::vector<ComparedMetric>& compared_metrics() {
  using M = ServingMetrics;
  static const std::vector<ComparedMetric> m = {
      {"output_tokens_per_s", [](const M& x) { return Figure(x.throughput.output_tokens_per_s); }},
      {"requests_per_s", [](const M& x) { return Figure(x.throughput.requests_per_s); }},
      {"output_tokens_per_s_per_gpu", [](const M& x) { return Figure(x.throughput.output_tokens_per_s_per_gpu); }},
      {"goodput_requests_per_s", [](const M& x) { return x.goodput ? Figure(x.goodput->requests_per_s) : Figure(); }},
      {"ttft_mean_ms", [](const M& x) { return figure_of(x.ttft_ms, &Summary::mean); }},
      {"ttft_p50_ms", [](const M& x) { return figure_of(x.ttft_ms, &Summary::p50); }},
      {"ttft_p99_ms", [](const M& x) { return figure_of(x.ttft_ms, &Summary::p99); }},
      {"ttft_stddev_ms", [](const M& x) { return figure_of(x.ttft_ms, &Summary::stddev); }},
      {"tpot_mean_ms", [](const M& x) { return figure_of(x.tpot_ms, &Summary::mean); }},
      {"tpot_p50_ms", [](const M& x) { return figure_of(x.tpot_ms, &Summary::p50); }},
      {"tpot_p99_ms", [](const M& x) { return figure_of(x.tpot_ms, &Summary::p99); }},
      {"itl_p99_ms", [](const M& x) { return figure_of(x.itl_ms, &Summary::p99); }},
      {"e2e_mean_s", [](const M& x) { return figure_of(x.e2e_s, &Summary::mean); }},
      {"e2e_p50_s", [](const M& x) { return figure_of(x.e2e_s, &Summary::p50); }},
      {"e2e_p99_s", [](const M& x) { return figure_of(x.e2e_s, &Summary::p99); }},
      {"running_mean", [](const M& x) { return Figure(x.concurrency.running_mean); }},
      {"running_max", [](const M& x) { return Figure(static_cast<double>(x.concurrency.running_max)); }},
      {"kv_token_utilization", [](const M& x) { return Figure(x.kv_cache.token_utilization); }},
      {"kv_peak_blocks_used", [](const M& x) { return Figure(static_cast<double>(x.kv_cache.peak_blocks_used)); }},
      {"preemptions", [](const M& x) { return Figure(static_cast<double>(x.kv_cache.preemptions)); }},
      {"energy_per_output_token_J", [](const M& x) { return Figure(x.energy.per_output_token_J); }},
  };
  return m;
}

}  // namespace

ServingJob::ServingJob(Scenario scenario) : s_(std::move(scenario)) {
  main_ = std::make_unique<Simulation>(s_, WorkloadOverride{}, true);
}

ServingJob::~ServingJob() = default;

bool ServingJob::step(int64_t max_units) {
  const SimulationSpec& spec = *s_.serving->simulation;
  // Each simulation counts its events in its own units (a speculative event is
  // k + 1 units), so a step of max_units runs that many units' worth of events
  // of whichever simulation is current, not max_units events.
  int64_t left = std::max<int64_t>(1, max_units);
  while (left > 0 && phase_ < 3) {
    if (phase_ == 2) {
      if (!search_) search_ = std::make_unique<CapacitySearch>(s_);
      const bool done = search_->step(left);
      left = 0;
      if (done) phase_ = 3;
      continue;
    }
    Simulation* sim = phase_ == 0 ? main_.get() : compares_.empty() ? nullptr : compares_.back().get();
    if (!sim) {  // no compare variant
      phase_ = spec.search.enabled ? 2 : 3;
      continue;
    }
    const int64_t per_event = sim->units_per_event();
    const int64_t before = sim->events_processed();
    const bool finished = sim->run(std::max<int64_t>(1, (left + per_event - 1) / per_event));
    const int64_t units = (sim->events_processed() - before) * per_event;
    units_ += units;
    left -= std::max<int64_t>(1, units);
    if (!finished) continue;
    if (phase_ == 0 && spec.steady_state.enabled && extend_steady_state_run()) continue;
    if (phase_ == 0) phase_ = 1;
    if (compares_.size() < spec.compares.size()) {
      compares_.push_back(
          std::make_unique<Simulation>(*spec.compares[compares_.size()].scenario, WorkloadOverride{}, false));
    } else {
      phase_ = spec.search.enabled ? 2 : 3;
    }
  }
  return phase_ >= 3;
}

// serving.steady_state: the same growth rule as the capacity search's runs at
// one rate (capacity_search.cpp): judge, and while undecided rerun longer.
bool ServingJob::extend_steady_state_run() {
  const SimulationSpec& spec = *s_.serving->simulation;
  SteadyStateOptions o;
  o.confidence = spec.steady_state.confidence;
  double in_system = 0, correlation = 0;
  if (!steady_runs_.empty()) {
    in_system = steady_runs_.back().report.in_system_mean;
    correlation = steady_runs_.back().report.correlation_requests;
  }
  SteadyStateRun run;
  run.requests = main_->num_requests();
  run.report = judge_steady_state(main_->outcomes(), spec.slo, in_system, correlation, 0.0, o);
  steady_runs_.push_back(run);
  if (run.report.verdict != Verdict::Uncertain || run.requests >= spec.steady_state.max_requests ||
      steady_runs_.size() > static_cast<size_t>(kMaxRunExtensions))
    return false;
  WorkloadOverride longer;
  longer.num_requests = extended_run_requests(run.report, run.requests, spec.steady_state.max_requests);
  main_ = std::make_unique<Simulation>(s_, longer, true);
  return true;
}

json ServingJob::steady_state_block() const {
  const SteadyStateRun& last = steady_runs_.back();
  const SteadyStateReport& r = last.report;
  json runs = json::array();
  for (const auto& run : steady_runs_)
    runs.push_back({{"requests", run.requests}, {"verdict", to_string(run.report.verdict)}, {"needed_requests", run.report.needed_requests}});
  const bool meets = r.verdict == Verdict::Meets;
  return {{"verdict", to_string(r.verdict)},
          {"meets_slo", meets},
          {"undecided_counted_as_miss", r.verdict == Verdict::Uncertain},
          {"stable", r.stable},
          {"unstable_reason", r.unstable_reason ? json(r.unstable_reason) : json(nullptr)},
          {"slo_attainment", r.attainment},
          {"slo_attainment_low", r.attainment_low},
          {"slo_attainment_high", r.attainment_high},
          {"confidence", s_.serving->simulation->steady_state.confidence},
          {"requests", last.requests},
          {"warmup_requests", r.warmup_requests},
          {"measured_requests", r.measured_requests},
          {"in_system_mean", r.in_system_mean},
          {"arrival_rate_qps", r.arrival_rate_qps},
          {"completion_rate_qps", r.completion_rate_qps},
          {"runs", runs},
          {"criterion", "the capacity search's verdict at this one rate: stable, and the batch-means interval of the "
                        "post-warm-up SLO attainment at or above slo.attainment; the run grows while undecided, and a "
                        "verdict still undecided counts as a miss; the metrics are those of the last (longest) run"}};
}

double ServingJob::progress() const {
  if (phase_ >= 3) return 1.0;
  const SimulationSpec& spec = *s_.serving->simulation;
  const double variants = static_cast<double>(spec.compares.size());
  const double phases = 1.0 + variants + (spec.search.enabled ? 1.0 : 0.0);
  double done = 0;
  if (phase_ == 0) done = main_->progress();
  else if (phase_ == 1) done = static_cast<double>(compares_.size()) + (compares_.empty() ? 0.0 : compares_.back()->progress());
  else done = 1.0 + variants + (search_ ? search_->progress() : 0.0);
  return std::min(0.999, done / phases);
}

json ServingJob::quantization_block() const {
  const Precision& p = s_.precision;
  const Dtype full = p.activations == Dtype::FP8 ? Dtype::BF16 : p.activations;
  const bool quantized = p.weights != full && p.weights != Dtype::FP32;
  if (!quantized) return nullptr;
  const SimulationSpec& spec = *s_.serving->simulation;
  const PoolSpec& pool = spec.cluster.pools.front();
  const GpuSpec& gpu = pool.gpu ? *pool.gpu : s_.hardware.gpu;
  Scenario q = s_;
  q.hardware.gpu = gpu;
  q.serving->parallelism = pool.layout;
  Scenario u = q;
  u.precision.weights = full;
  const CostSetup cq = make_cost_setup(q.cost_model, q.hardware);
  const CostSetup cu = make_cost_setup(u.cost_model, u.hardware);
  StepOptions options;
  options.attention = s_.serving->attention;
  const int64_t ctx = std::min<int64_t>(1024, spec.kv.max_model_len / 2);
  BatchShape decode;
  decode.seqs.push_back(SeqChunk{1, ctx});
  BatchShape prefill;
  prefill.seqs.push_back(SeqChunk{ctx, 0});
  const double dq = cq.price(build_forward_step(s_.model, q.precision, pool.layout, decode, options)).time_s;
  const double du = cu.price(build_forward_step(s_.model, u.precision, pool.layout, decode, options)).time_s;
  const double pq = cq.price(build_forward_step(s_.model, q.precision, pool.layout, prefill, options)).time_s;
  const double pu = cu.price(build_forward_step(s_.model, u.precision, pool.layout, prefill, options)).time_s;
  const double wq = weight_bytes_per_gpu(s_.model, q.precision, pool.layout) / kBytesPerGiB;
  const double wu = weight_bytes_per_gpu(s_.model, u.precision, pool.layout) / kBytesPerGiB;
  const ReplicaMemoryPlan plan_u =
      plan_replica_memory(s_.model, u.precision, pool.layout, gpu, s_.serving->runtime_overhead_GiB, spec);
  return {{"weights", dtype_name(p.weights)},
          {"unquantized_weights", dtype_name(full)},
          {"context_tokens", ctx},
          {"decode_step_ms", dq * 1e3},
          {"decode_step_ms_unquantized", du * 1e3},
          {"decode_speedup", dq > 0 ? du / dq : 0.0},
          {"prefill_ms", pq * 1e3},
          {"prefill_ms_unquantized", pu * 1e3},
          {"prefill_speedup", pq > 0 ? pu / pq : 0.0},
          {"weights_GiB", wq},
          {"weights_GiB_unquantized", wu},
          {"weight_reduction", wq > 0 ? wu / wq : 0.0},
          {"unquantized_fits", plan_u.engines.front().blocks > 0},
          {"unquantized_kv_blocks", plan_u.engines.front().blocks},
          {"note", "batch-1 steps priced on the first pool's GPUs with the same tp/pp"}};
}

json ServingJob::build_result() const {
  const SimulationSpec& spec = *s_.serving->simulation;
  json d = main_->details();
  const CostSetup tier_setup = make_cost_setup(s_.cost_model, s_.hardware);
  std::string tier = tier_setup.model->tier();
  // Pools on another GPU are priced at that GPU's own tier: say "mixed" when they differ.
  for (const PoolSpec& p : spec.cluster.pools) {
    if (!p.gpu) continue;
    HardwareSpec h = s_.hardware;
    h.gpu = *p.gpu;
    if (make_cost_setup(s_.cost_model, h).model->tier() != tier) tier = "mixed";
  }
  json r = result_header(s_, "serving_simulation", tier);
  r["deployment"] = d["deployment"];
  const auto& w = spec.workload;
  json wl = {{"arrival", to_string(w.arrival.process)}, {"requests", main_->num_requests()}};
  if (w.arrival.process != ArrivalProcess::AllAtOnce && w.arrival.process != ArrivalProcess::Trace)
    wl["rate_qps"] = w.arrival.rate_qps;
  if (w.arrival.process == ArrivalProcess::Gamma) wl["cv"] = w.arrival.cv;
  if (w.arrival.process != ArrivalProcess::Trace) {
    wl["prompt_tokens"] = to_string(w.prompt.dist);
    wl["output_tokens"] = to_string(w.output.dist);
  }
  if (w.prefix.enabled) wl["shared_prefix_tokens"] = w.prefix.tokens;
  r["workload"] = wl;
  const ServingMetrics main_m = main_->serving_metrics();
  r["metrics"] = main_m.to_json();
  json headline_warning;
  if (w.arrival.process != ArrivalProcess::AllAtOnce) {
    // An offline batch (all at once) has no arrival window to be steady in.
    const ServingHeadline h = serving_headline(main_->outcomes(), spec.slo,
                                               w.arrival.process != ArrivalProcess::Trace ? w.arrival.rate_qps : 0.0);
    r["headline"] = h.to_json();
    if (h.overloaded) headline_warning = h.warning;
    headline_ = h;
  }
  r["memory_per_gpu"] = d["memory_per_gpu"];
  r["capacity"] = d["capacity"];
  r["tokens"] = d["tokens"];
  if (json quant = quantization_block(); !quant.is_null()) r["quantization"] = quant;
  json warnings = d["warnings"];
  if (headline_warning.is_string()) warnings.push_back(headline_warning);
  if (!d["limits"]["limit_hit"].is_null()) {
    // The simulation stopped at one of serving.limits: the result stays (it
    // describes what was simulated) and says so at a path the user can raise.
    const std::string limit = d["limits"]["limit_hit"].get<std::string>();
    const ServingMetrics::Requests& req = main_m.requests;
    char what[240];
    std::snprintf(what, sizeof what, "after %lld events and %.3f s of simulated time, with %lld of %lld requests completed",
                  static_cast<long long>(d["limits"]["events"].get<int64_t>()), d["limits"]["simulated_s"].get<double>(),
                  static_cast<long long>(req.completed), static_cast<long long>(req.total));
    r["limit_exceeded"] = {{"code", "limit_exceeded"},
                           {"path", "/serving/limits/" + limit},
                           {"message", "the simulation stopped at serving.limits." + limit + " " + what +
                                           "; the metrics cover only what was simulated. Raise /serving/limits/" + limit +
                                           " to simulate further."},
                           {"simulated",
                            {{"events", d["limits"]["events"]},
                             {"simulated_s", d["limits"]["simulated_s"]},
                             {"requests_completed", req.completed},
                             {"requests_total", req.total}}}};
    warnings.push_back("limit_exceeded at /serving/limits/" + limit + ": " + r["limit_exceeded"]["message"].get<std::string>());
  }

  json compare_blocks = json::array();
  for (size_t ci = 0; ci < compares_.size() && ci < spec.compares.size(); ++ci) {
    const Simulation& baseline = *compares_[ci];
    const ServingMetrics base_m = baseline.serving_metrics();
    const json base = base_m.to_json();
    const json base_d = baseline.details();
    // A ratio over a zero is null, and `undefined` says why, so a null is
    // never left unexplained.
    json ratio = json::object(), speedup = json::object(), undefined = json::object();
    for (const ComparedMetric& c : compared_metrics()) {
      const Figure a = c.get(main_m), b = c.get(base_m);
      if (!a || !b) continue;
      ratio[c.name] = *b != 0 ? json(*a / *b) : json(nullptr);
      if (*b == 0) undefined["ratio/" + std::string(c.name)] = "the baseline's value is 0";
    }
    for (const char* key : {"kv_tokens_per_replica", "kv_KiB_per_token", "max_concurrent_at_max_len"}) {
      const json& a = r["capacity"][key];
      const json& b = base_d["capacity"][key];
      if (!a.is_number() || !b.is_number()) continue;
      ratio[key] = b.get<double>() != 0 ? json(a.get<double>() / b.get<double>()) : json(nullptr);
      if (b.get<double>() == 0) undefined["ratio/" + std::string(key)] = "the baseline's value is 0";
    }
    for (const auto& [name, field] : std::vector<std::pair<const char*, const Summary ServingMetrics::*>>{
             {"tpot_mean", &ServingMetrics::tpot_ms}, {"e2e_mean", &ServingMetrics::e2e_s}, {"ttft_mean", &ServingMetrics::ttft_ms}}) {
      const Figure a = figure_of(main_m.*field, &Summary::mean), b = figure_of(base_m.*field, &Summary::mean);
      if (!a || !b) continue;
      speedup[name] = *a != 0 ? json(*b / *a) : json(nullptr);
      if (*a == 0) undefined["speedup/" + std::string(name)] = "this scenario's value is 0";
    }
    // The patch itself is not echoed: the result must not depend on how the
    // caller spelled its numbers (1 vs 1.0), so native and wasm stay byte-identical.
    compare_blocks.push_back({{"label", spec.compares[ci].label},
                              {"baseline",
                               {{"metrics", base},
                                {"deployment", base_d["deployment"]},
                                {"memory_per_gpu", base_d["memory_per_gpu"]},
                                {"capacity", base_d["capacity"]},
                                {"tokens", base_d["tokens"]}}},
                              {"ratio", ratio},
                              {"speedup", speedup},
                              {"undefined", undefined},
                              {"ratio_meaning", "this scenario / baseline; speedup = baseline / this; a ratio over 0 is "
                                                "null and `undefined` gives the reason"}});
    const std::string prefix = spec.compare_is_array ? "baseline " + std::to_string(ci) + ": " : "baseline: ";
    for (const auto& wmsg : base_d["warnings"]) warnings.push_back(prefix + wmsg.get<std::string>());
  }
  if (!compare_blocks.empty()) r["compare"] = spec.compare_is_array ? compare_blocks : compare_blocks.front();
  if (spec.search.enabled && search_) r["max_qps"] = search_->to_json();
  if (spec.steady_state.enabled && !steady_runs_.empty()) r["steady_state"] = steady_state_block();

  // Key metrics: the scenario's choice, or the catalogue's default set, in that order.
  const std::vector<std::string>& ids =
      spec.key_metrics.empty() ? default_key_metrics(MetricKind::kServing) : spec.key_metrics;
  key_metrics_.clear();
  for (const std::string& id : ids) {
    const MetricInfo* e = find_metric(MetricKind::kServing, id);
    if (!e) continue;
    KeyMetric k;
    k.id = id;
    k.label = e->label;
    k.unit = e->unit;
    const json* v = metric_value(*e, r);
    if (v && v->is_null()) {
      // A statistic that does not exist for this run carries its reason beside it.
      const std::string ptr = e->pointer;
      const json::json_pointer parent = json::json_pointer(ptr).parent_pointer();
      if (r.contains(parent) && r.at(parent).is_object() && r.at(parent).contains("reason") &&
          r.at(parent)["reason"].is_string())
        k.reason = r.at(parent)["reason"].get<std::string>();
      v = nullptr;
    }
    k.kind = v ? key_metric_kind(*v) : KeyMetric::Kind::Missing;
    if (k.kind == KeyMetric::Kind::Bool) k.value = v->get<bool>() ? 1.0 : 0.0;
    else if (k.numeric()) k.value = v->get<double>();
    key_metrics_.push_back(std::move(k));
  }
  r["key_metrics"] = key_metrics_to_json(key_metrics_);
  if (d.contains("time_series")) r["time_series"] = d["time_series"];
  if (d.contains("requests")) r["requests"] = d["requests"];
  if (d.contains("trace")) r["trace"] = d["trace"];
  r["limits"] = d["limits"];
  append_warnings(r, warnings);
  return r;
}

json ServingJob::result() const {
  if (result_.is_null()) result_ = build_result();
  return result_;
}

KeyMetrics ServingJob::interval_figures() const {
  if (result_.is_null()) result_ = build_result();
  KeyMetrics f;
  if (headline_ && headline_->judged) {
    f.push_back(KeyMetric::number("/headline/throughput_qps", "steady-window throughput", "req/s", headline_->throughput_qps));
    if (headline_->has_slo)
      f.push_back(KeyMetric::number("/headline/goodput_qps", "steady-window goodput", "req/s", headline_->goodput_qps));
  }
  if (search_ && search_->qps() > 0)
    f.push_back(KeyMetric::number("/max_qps/qps", "max sustainable QPS under the SLO", "req/s", search_->qps()));
  return f;
}

bool ServingJob::overloaded() const {
  if (result_.is_null()) result_ = build_result();
  return headline_ && headline_->overloaded;
}

KeyMetrics ServingJob::key_metrics() const {
  if (result_.is_null()) result_ = build_result();
  return key_metrics_;
}

}  // namespace sightline::serve
