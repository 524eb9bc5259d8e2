#include "train/training_job.hpp"

#include "scenario/metric_catalogue.hpp"

#include <cstdio>

namespace sightline {

namespace {

// The scenario's key metrics as a variant has them (those about compare/scaling left out).
json variant_key_metrics(const json& vr, const std::vector<std::string>& ids) {
  json out = json::array();
  for (const json& k : extract_key_metrics(vr, ids))
    if (!k["value"].is_null()) out.push_back(k);
  return out;
}

// A configuration that needs more memory than the GPU has is reported as
// loudly as serving's does_not_fit: a located block in the result and a
// warning, while the numbers stay to show why.
json does_not_fit_block(const json& memory, const std::string& what) {
  const double total = memory["total_GiB"].get<double>(), cap = memory["capacity_GiB"].get<double>();
  const int64_t max_mbs = memory["max_micro_batch"].get<int64_t>();
  const std::string path = max_mbs >= 1 ? "/training/batch/micro_batch_size" : "/training/parallelism";
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%s needs %.1f GiB per GPU (rank %d) but the GPU has %.1f GiB: %.1f GiB over. %s The step time "
                "and throughput shown assume memory that does not exist.",
                what.c_str(), total, memory["rank"].get<int>(), cap, total - cap,
                max_mbs >= 1 ? ("The largest micro-batch that fits is " + std::to_string(max_mbs) + ".").c_str()
                             : "Even one sequence per micro-batch does not fit: shard more (tp, pp, zero_stage) or recompute.");
  return {{"code", "does_not_fit"}, {"path", path}, {"message", std::string(buf)}};
}

}  // namespace

TrainingJob::TrainingJob(Scenario scenario) : s_(std::move(scenario)) {
  const TrainingSpec& t = *s_.training;
  runs_.push_back(std::make_unique<TrainRun>(s_));
  for (const auto& v : t.compare) runs_.push_back(std::make_unique<TrainRun>(*v.scenario));
  for (const auto& p : t.scaling.points) runs_.push_back(std::make_unique<TrainRun>(*p));
  for (const auto& r : runs_) total_units_ += r->total_units();
}

bool TrainingJob::step(int64_t max_units) {
  int64_t budget = max_units;
  for (auto& r : runs_) {
    if (budget <= 0) break;
    if (r->done()) continue;
    const int64_t before = r->done_units();
    r->advance(budget);
    done_units_ += r->done_units() - before;
  }
  for (const auto& r : runs_)
    if (!r->done()) return false;
  done_units_ = total_units_;
  return true;
}

double TrainingJob::progress() const {
  for (const auto& r : runs_)
    if (!r->done()) return total_units_ > 0 ? std::min(0.999, static_cast<double>(done_units_) / total_units_) : 0.0;
  return 1.0;
}

json TrainingJob::result() const {
  const TrainingSpec& t = *s_.training;
  json r = runs_[0]->result();
  const TrainSummary& base = runs_[0]->summary();
  size_t next = 1;
  json cmp = json::array();
  for (const auto& v : t.compare) {
    const TrainRun& run = *runs_[next++];
    const TrainSummary& x = run.summary();
    const json vr = run.result();
    cmp.push_back({{"label", v.label},
                   {"gpu", vr["deployment"]["gpu"]},
                   {"gpus", x.gpus},
                   {"step_time_ms", x.step_time_s * 1e3},
                   {"tokens_per_s", x.tokens_per_s},
                   {"tokens_per_s_per_gpu", x.tokens_per_s_per_gpu},
                   {"mfu_pct", 100.0 * x.mfu},
                   {"memory_per_gpu_GiB", x.memory_GiB},
                   {"activations_GiB", x.activations_GiB},
                   {"fits", x.fits},
                   {"base_over_variant_throughput", x.tokens_per_s > 0 ? base.tokens_per_s / x.tokens_per_s : 0.0},
                   {"variant_over_base_memory", base.memory_GiB > 0 ? x.memory_GiB / base.memory_GiB : 0.0},
                   {"variant_over_base_activations",
                    base.activations_GiB > 0 ? x.activations_GiB / base.activations_GiB : 0.0},
                   {"deployment", vr["deployment"]},
                   {"metrics", vr["metrics"]},
                   {"step_breakdown_ms", vr["step_breakdown_ms"]},
                   {"communication", vr["communication"]},
                   {"per_layer", vr["per_layer"]},
                   {"memory_per_gpu", vr["memory_per_gpu"]},
                   {"model", vr["model"]},
                   {"key_metrics", variant_key_metrics(vr, t.key_metrics)}});
  }
  r["compare"] = cmp;
  json warnings = json::array();
  if (!base.fits) {
    r["does_not_fit"] = does_not_fit_block(r["memory_per_gpu"], "this configuration");
    warnings.push_back("does_not_fit at " + r["does_not_fit"]["path"].get<std::string>() + ": " +
                       r["does_not_fit"]["message"].get<std::string>());
  }
  for (size_t i = 0; i < cmp.size(); ++i)
    if (!cmp[i]["fits"].get<bool>())
      warnings.push_back("does_not_fit at /training/compare/" + std::to_string(i) + ": " +
                         does_not_fit_block(cmp[i]["memory_per_gpu"], "variant '" + t.compare[i].label + "'")["message"]
                             .get<std::string>());
  if (!t.scaling.values.empty()) {
    json pts = json::array();
    double first = 0, first_tput = 0;
    int first_gpus = 0;
    double last_eff = 0;
    for (size_t i = 0; i < t.scaling.values.size(); ++i) {
      const TrainRun& run = *runs_[next++];
      const TrainSummary& x = run.summary();
      const json vr = run.result();
      if (i == 0) {
        first = x.tokens_per_s_per_gpu;
        first_tput = x.tokens_per_s;
        first_gpus = x.gpus;
      }
      last_eff = first > 0 ? 100.0 * x.tokens_per_s_per_gpu / first : 0.0;
      pts.push_back({{"dp", t.scaling.values[i]},
                     {"gpus", x.gpus},
                     {"nodes", vr["deployment"]["nodes"]},
                     {"micro_batches_per_step", vr["batch"]["micro_batches_per_step"]},
                     {"global_batch_size", vr["batch"]["global_batch_size"]},
                     {"step_time_ms", x.step_time_s * 1e3},
                     {"tokens_per_s", x.tokens_per_s},
                     {"tokens_per_s_per_gpu", x.tokens_per_s_per_gpu},
                     {"speedup", first_tput > 0 ? x.tokens_per_s / first_tput : 0.0},
                     {"ideal_speedup", first_gpus > 0 ? static_cast<double>(x.gpus) / first_gpus : 0.0},
                     {"efficiency_pct", last_eff},
                     {"mfu_pct", 100.0 * x.mfu},
                     {"exposed_dp_comm_ms", vr["step_breakdown_ms"]["exposed_comm"]["dp"]},
                     {"bubble_ms", vr["step_breakdown_ms"]["pipeline_bubble"]},
                     {"memory_per_gpu_GiB", x.memory_GiB},
                     {"fits", x.fits}});
    }
    r["scaling"] = {{"axis", t.scaling.axis},
                    {"mode", t.scaling.mode},
                    {"points", pts},
                    {"final_efficiency_pct", last_eff},
                    {"efficiency_definition",
                     "tokens/s per GPU at each point relative to the first point (strong scaling: global batch fixed; "
                     "weak: micro-batches per replica fixed)"}};
  } else {
    r["scaling"] = nullptr;
  }
  if (r["scaling"].is_object())
    for (const json& pt : r["scaling"]["points"])
      if (!pt["fits"].get<bool>()) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "the point dp=%d needs %.1f GiB per GPU, more than the GPU has",
                      pt["dp"].get<int>(), pt["memory_per_gpu_GiB"].get<double>());
        warnings.push_back(std::string("does_not_fit at /training/scaling: ") + buf);
      }
  r["warnings"] = warnings;
  r["key_metrics"] = extract_key_metrics(r, t.key_metrics);
  return r;
}

}  // namespace sightline
