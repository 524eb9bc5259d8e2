#include "serve/serving_job.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "run/result_header.hpp"
#include "serve/headline.hpp"
#include "serve/serving_key_metrics.hpp"
#include "scenario/metric_catalogue.hpp"
#include "mem/inference_memory.hpp"
#include "model/param_count.hpp"
#include "scenario/policy_registry.hpp"

namespace sightline::serve {

namespace {

using Figure = std::optional<double>;

}  // namespace

ServingJob::ServingJob(Scenario scenario) : s_(std::move(scenario)) {
  main_ = std::make_unique<Simulation>(s_, WorkloadOverride{}, true);
}

ServingJob::~ServingJob() = default;

LimitFacts ServingJob::limit_facts() const {
  LimitFacts f = earlier_facts_;
  f.merge(main_->limit_facts());
  // The compare variants and the max-QPS search run other scenarios.
  f.opaque = f.opaque || !compares_.empty() || search_ != nullptr;
  return f;
}

bool ServingJob::step(int64_t max_units) {
  const SimulationSpec& spec = *s_.serving->simulation;
  // Each simulation counts its work in its own units (Simulation::units_done:
  // an event's grow with its step's sequences), so a step of max_units runs
  // events of whichever simulation is current until that many units are done
  // (run_units), not max_units events.
  int64_t left = std::max<int64_t>(1, max_units);
  while (left > 0 && phase_ < 3) {
    if (phase_ == 2) {
      if (!search_) {
        search_ = std::make_unique<CapacitySearch>(s_);
        search_->limit_work(work_limit_ - units_);
      }
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
    const int64_t before = sim->units_done();
    const bool finished = sim->run_units(left);
    const int64_t units = sim->units_done() - before;
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
  if (phase_ >= 3 && !outcome_) finish();
  return phase_ >= 3;
}

// serving.steady_state: the same growth rule as the capacity search's runs at
// one rate (capacity_search.cpp): judge, and while undecided rerun longer.
bool ServingJob::extend_steady_state_run() {
  const SimulationSpec& spec = *s_.serving->simulation;
  SteadyStateOptions o;
  o.confidence = spec.steady_state.confidence;
  judge_as_workload(o, spec.workload);
  double in_system = 0, correlation = 0;
  if (!steady_runs_.empty()) {
    in_system = steady_runs_.back().report.in_system_mean;
    correlation = steady_runs_.back().report.correlation_requests;
  }
  SteadyStateRun run;
  run.requests = main_->num_requests();
  run.report = judge_steady_state(main_->outcome_view(), spec.slo, in_system, correlation, 0.0, o);
  steady_runs_.push_back(run);
  if (run.report.verdict != Verdict::Uncertain || run.requests >= spec.steady_state.max_requests ||
      steady_runs_.size() > static_cast<size_t>(kMaxRunExtensions))
    return false;
  WorkloadOverride longer;
  longer.num_requests = extended_run_requests(run.report, run.requests, spec.steady_state.max_requests);
  earlier_facts_.merge(main_->limit_facts());
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
  if (phase_ == 0 && spec.steady_state.enabled) {
    // A run grown by serving.steady_state starts again from its first request:
    // run k takes [1 - 2^-k, 1 - 2^-(k+1)) of the main run's share, so the
    // progress never goes back (and a run decided at once jumps the rest).
    double left = 1.0;
    for (size_t k = 0; k < steady_runs_.size(); ++k) left *= 0.5;
    done = 1.0 - left + 0.5 * left * main_->progress();
  } else if (phase_ == 0) done = main_->progress();
  else if (phase_ == 1) done = static_cast<double>(compares_.size()) + (compares_.empty() ? 0.0 : compares_.back()->progress());
  else done = 1.0 + variants + (search_ ? search_->progress() : 0.0);
  return std::min(0.999, done / phases);
}

std::optional<QuantizationFigures> ServingJob::quantization() const {
  const Precision& p = s_.precision;
  const Dtype full = p.activations == Dtype::FP8 ? Dtype::BF16 : p.activations;
  const bool quantized = p.weights != full && p.weights != Dtype::FP32;
  if (!quantized) return std::nullopt;
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
  options.fusion = s_.cost_model.software_stack.fusion;
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
      plan_replica_memory(s_.model, u.precision, pool.layout, gpu, s_.serving->runtime_overhead_GiB,
                          s_.cost_model.software_stack.sampler_bytes_per_logit, spec);
  QuantizationFigures f;
  f.weights = dtype_name(p.weights);
  f.unquantized_weights = dtype_name(full);
  f.context_tokens = ctx;
  f.decode_step_ms = dq * 1e3;
  f.decode_step_ms_unquantized = du * 1e3;
  f.decode_speedup = dq > 0 ? du / dq : 0.0;
  f.prefill_ms = pq * 1e3;
  f.prefill_ms_unquantized = pu * 1e3;
  f.prefill_speedup = pq > 0 ? pu / pq : 0.0;
  f.weights_GiB = wq;
  f.weights_GiB_unquantized = wu;
  f.weight_reduction = wq > 0 ? wu / wq : 0.0;
  f.unquantized_fits = plan_u.engines.front().blocks > 0;
  f.unquantized_kv_blocks = plan_u.engines.front().blocks;
  return f;
}

// Pools on another GPU are priced at that GPU's own tier: "mixed" when they differ.
std::string ServingJob::result_tier() const {
  std::string tier = make_cost_setup(s_.cost_model, s_.hardware).model->tier();
  for (const PoolSpec& p : s_.serving->simulation->cluster.pools) {
    if (!p.gpu) continue;
    HardwareSpec h = s_.hardware;
    h.gpu = *p.gpu;
    if (make_cost_setup(s_.cost_model, h).model->tier() != tier) tier = "mixed";
  }
  return tier;
}

json ServingJob::workload_block() const {
  const auto& w = s_.serving->simulation->workload;
  json wl = {{"arrival", to_string(w.arrival.process)}, {"requests", main_->num_requests()}};
  if (w.arrival.process == ArrivalProcess::ClosedLoop) {
    wl["concurrency"] = w.arrival.concurrency;
    wl["think_time_s"] = w.arrival.think_time_s;
  } else if (w.arrival.process != ArrivalProcess::AllAtOnce && w.arrival.process != ArrivalProcess::Trace) {
    wl["rate_qps"] = w.arrival.rate_qps;
    if (w.arrival.max_concurrency > 0) {
      wl["max_concurrency"] = w.arrival.max_concurrency;
      wl["requests_waited_at_client"] = main_->requests_waited_at_client();
    }
  }
  if (w.arrival.process == ArrivalProcess::Gamma) wl["cv"] = w.arrival.cv;
  if (w.arrival.process != ArrivalProcess::Trace) {
    wl["prompt_tokens"] = to_string(w.prompt.dist);
    wl["output_tokens"] = to_string(w.output.dist);
  }
  if (w.prefix.enabled) wl["shared_prefix_tokens"] = w.prefix.tokens;
  return wl;
}

// The simulation stopped at one of serving.limits: the result stays (it
// describes what was simulated) and says so at a path the user can raise.
json ServingJob::limit_exceeded_block(const ServingOutcome& o) const {
  const ServingLimits& l = o.details.limits;
  const ServingMetrics::Requests& req = o.metrics.requests;
  char what[240];
  std::snprintf(what, sizeof what, "after %lld events and %.3f s of simulated time, with %lld of %lld requests completed",
                static_cast<long long>(l.events), l.simulated_s, static_cast<long long>(req.completed),
                static_cast<long long>(req.total));
  return {{"code", "limit_exceeded"},
          {"path", "/serving/limits/" + l.limit_hit},
          {"message", "the simulation stopped at serving.limits." + l.limit_hit + " " + what +
                          "; the metrics cover only what was simulated. Raise /serving/limits/" + l.limit_hit +
                          " to simulate further."},
          {"simulated",
           {{"events", l.events}, {"simulated_s", l.simulated_s}, {"requests_completed", req.completed}, {"requests_total", req.total}}}};
}

// serving.compare variant `ci` against this run (`metrics`, `details`): its
// own figures, and the ratios (this / baseline) and speedups (baseline / this)
// of every figure compared by name. A ratio over a zero is null, and
// `undefined` says why, so a null is never left unexplained.
ComparedVariant ServingJob::compare_variant(size_t ci, const ServingMetrics& metrics, const SimDetails& details) const {
  const Simulation& baseline = *compares_[ci];
  ComparedVariant v;
  v.metrics = baseline.serving_metrics();
  v.details = baseline.details();
  // Every figure compared by name (serve/serving_key_metrics.cpp's rows).
  ServingFigures run, base;
  run.metrics = &metrics;
  run.details = &details;
  base.metrics = &v.metrics;
  base.details = &v.details;
  for_each_compared_figure(run, base, [&](const char* group, const std::string& name, double num, double den,
                                          const char* why) {
    auto& into = std::string(group) == "ratio" ? v.figures.ratio : v.figures.speedup;
    into[name] = den != 0 ? Figure(num / den) : Figure();
    if (den == 0) v.undefined[std::string(group) + "/" + name] = why;
  });
  return v;
}

// The compare block of variant `ci` in the result.
json ServingJob::compare_block(size_t ci, const ComparedVariant& v) const {
  auto figures_json = [](const std::map<std::string, Figure>& m) {
    json o = json::object();
    for (const auto& [name, f] : m) o[name] = f ? json(*f) : json(nullptr);
    return o;
  };
  json undefined = json::object();
  for (const auto& [name, why] : v.undefined) undefined[name] = why;
  // The patch itself is not echoed: the result must not depend on how the
  // caller spelled its numbers (1 vs 1.0), so native and wasm stay byte-identical.
  return {{"label", s_.serving->simulation->compares[ci].label},
          {"baseline",
           {{"metrics", v.metrics.to_json()},
            {"deployment", v.details.deployment},
            {"memory_per_gpu", v.details.memory_per_gpu},
            {"capacity", v.details.capacity.to_json()},
            {"tokens", v.details.tokens}}},
          {"ratio", figures_json(v.figures.ratio)},
          {"speedup", figures_json(v.figures.speedup)},
          {"undefined", undefined},
          {"ratio_meaning", "this scenario / baseline; speedup = baseline / this; a ratio over 0 is "
                            "null and `undefined` gives the reason"}};
}

ServingFigures ServingJob::figures(const ServingOutcome& o) const {
  const SimulationSpec& spec = *s_.serving->simulation;
  ServingFigures f;
  f.metrics = &o.metrics;
  f.details = &o.details;
  f.quantization = o.quantization ? &*o.quantization : nullptr;
  if (spec.search.enabled && search_) f.max_qps = search_->qps();
  // A compare ratio is a key metric only against one baseline (not an array of them).
  f.compare = !o.compared.empty() && !spec.compare_is_array ? &o.compared.front().figures : nullptr;
  f.headline = o.headline ? &*o.headline : nullptr;
  return f;
}

const ServingOutcome& ServingJob::outcome() const {
  if (!outcome_) throw std::logic_error("a serving run's figures were asked for before the run finished");
  return *outcome_;
}

void ServingJob::finish() {
  outcome_ = compute_outcome();
  result_ = write_result(*outcome_);
}

KeyMetric ServingJob::key_metric(const std::string& id) const { return serving_key_metric(id, figures(outcome())); }

ServingOutcome ServingJob::compute_outcome() const {
  const SimulationSpec& spec = *s_.serving->simulation;
  ServingOutcome o;
  o.details = main_->details();
  o.metrics = main_->serving_metrics();
  o.quantization = quantization();
  // An offline batch (all at once) has no arrival window to be steady in.
  if (spec.workload.arrival.process != ArrivalProcess::AllAtOnce)
    o.headline = serving_headline(main_->outcome_view(), spec.slo, spec.workload);
  const size_t variants = std::min(compares_.size(), spec.compares.size());
  for (size_t ci = 0; ci < variants; ++ci) o.compared.push_back(compare_variant(ci, o.metrics, o.details));
  // Key metrics: the scenario's choice, or the catalogue's default set, in that order.
  const ServingFigures f = figures(o);
  const std::vector<std::string>& ids =
      spec.key_metrics.empty() ? default_key_metrics(MetricKind::kServing) : spec.key_metrics;
  for (const std::string& id : ids)
    if (find_metric(MetricKind::kServing, id)) o.key_metrics.push_back(serving_key_metric(id, f));
  // The headline cards; max_qps among them where the capacity search ran.
  const bool searched = spec.search.enabled && search_;
  o.headline_ids = headline_metrics(MetricKind::kServing, [&](const std::string& id) {
    if (id == "max_qps") return searched;
    return find_metric(MetricKind::kServing, id) &&
           serving_key_metric(id, f).kind != KeyMetric::Kind::Missing;  // a steady-window figure
  });
  return o;
}

json ServingJob::write_result(const ServingOutcome& o) const {
  const SimulationSpec& spec = *s_.serving->simulation;
  json r = result_header(s_, "serving_simulation", result_tier());
  r["deployment"] = o.details.deployment;
  r["workload"] = workload_block();
  r["metrics"] = o.metrics.to_json();
  json warnings = json::array();
  for (const std::string& w : o.details.warnings) warnings.push_back(w);
  if (o.headline) r["headline"] = o.headline->to_json();
  r["memory_per_gpu"] = o.details.memory_per_gpu;
  r["capacity"] = o.details.capacity.to_json();
  r["tokens"] = o.details.tokens;
  if (o.quantization) r["quantization"] = o.quantization->to_json();
  if (o.headline && o.headline->overloaded) warnings.push_back(o.headline->warning);
  if (!o.details.limits.limit_hit.empty()) {
    r["limit_exceeded"] = limit_exceeded_block(o);
    warnings.push_back("limit_exceeded at /serving/limits/" + o.details.limits.limit_hit + ": " +
                       r["limit_exceeded"]["message"].get<std::string>());
  }
  json compare_blocks = json::array();
  for (size_t ci = 0; ci < o.compared.size(); ++ci) {
    const std::string prefix = spec.compare_is_array ? "baseline " + std::to_string(ci) + ": " : "baseline: ";
    for (const std::string& w : o.compared[ci].details.warnings) warnings.push_back(prefix + w);
    compare_blocks.push_back(compare_block(ci, o.compared[ci]));
  }
  if (!compare_blocks.empty()) r["compare"] = spec.compare_is_array ? compare_blocks : compare_blocks.front();
  if (spec.search.enabled && search_) r["max_qps"] = search_->to_json();
  if (spec.steady_state.enabled && !steady_runs_.empty()) r["steady_state"] = steady_state_block();
  r["key_metrics"] = key_metrics_to_json(o.key_metrics);
  r["headline_metrics"] = o.headline_ids;
  if (!o.details.time_series.is_null()) r["time_series"] = o.details.time_series;
  if (!o.details.requests.is_null()) r["requests"] = o.details.requests;
  if (!o.details.trace.is_null()) r["trace"] = o.details.trace;
  r["limits"] = o.details.limits.to_json();
  append_warnings(r, warnings);
  return r;
}

json ServingJob::result() const {
  outcome();  // finished
  return result_;
}

KeyMetrics ServingJob::interval_figures() const {
  const std::optional<ServingHeadline>& h = outcome().headline;
  KeyMetrics f;
  if (h && h->judged) {
    KeyMetric t = KeyMetric::number("/headline/throughput_qps", "steady-window throughput", "req/s", h->throughput_qps);
    t.has_interval = throughput_sampling_interval(*h, t.low, t.high);
    f.push_back(t);
    if (h->has_slo) {
      KeyMetric g = KeyMetric::number("/headline/goodput_qps", "steady-window goodput", "req/s", h->goodput_qps);
      g.has_interval = goodput_sampling_interval(*h, g.low, g.high);
      f.push_back(g);
      KeyMetric a = KeyMetric::number("/headline/slo_attainment", "steady-window SLO attainment", "fraction",
                                      h->slo_attainment);
      a.has_interval = attainment_sampling_interval(*h, a.low, a.high);
      f.push_back(a);
    }
  }
  if (search_ && search_->qps() > 0)
    f.push_back(KeyMetric::number("/max_qps/qps", "max sustainable QPS under the SLO", "req/s", search_->qps()));
  return f;
}

KeyMetrics ServingJob::headline_figures() const {
  const ServingOutcome& o = outcome();
  const KeyMetrics with_interval = interval_figures();  // by JSON pointer
  KeyMetrics out;
  for (const std::string& id : o.headline_ids) {
    const MetricInfo* info = find_metric(MetricKind::kServing, id);
    if (!info || find_by_id(o.key_metrics, id) || find_by_id(with_interval, info->pointer)) continue;
    out.push_back(serving_key_metric(id, figures(o)));
  }
  return out;
}

int64_t ServingJob::requests_run() const { return main_ ? main_->num_requests() : 0; }

bool ServingJob::overloaded() const {
  const std::optional<ServingHeadline>& h = outcome().headline;
  return h && h->overloaded;
}

KeyMetrics ServingJob::key_metrics() const { return outcome().key_metrics; }

}  // namespace sightline::serve
