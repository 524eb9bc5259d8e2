#include "train/training_job.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace sightline {

namespace {

// A configuration that needs more memory than the GPU has is reported as
// loudly as serving's does_not_fit: a located block in the result and a
// warning, while the numbers stay to show why. Returns {path, message}.
std::pair<std::string, std::string> does_not_fit(const TrainRunResult::Memory& memory, const std::string& what) {
  const double total = memory.total_GiB, cap = memory.capacity_GiB;
  const int64_t max_mbs = memory.max_micro_batch;
  const std::string path = max_mbs >= 1 ? "/training/batch/micro_batch_size" : "/training/parallelism";
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%s needs %.1f GiB per GPU (rank %d) but the GPU has %.1f GiB: %.1f GiB over. %s The step time "
                "and throughput shown assume memory that does not exist.",
                what.c_str(), total, memory.rank, cap, total - cap,
                max_mbs >= 1 ? ("The largest micro-batch that fits is " + std::to_string(max_mbs) + ".").c_str()
                             : "Even one sequence per micro-batch does not fit: shard more (tp, pp, zero_stage) or recompute.");
  return {path, std::string(buf)};
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

TrainingResult TrainingJob::typed_result() const {
  const TrainingSpec& t = *s_.training;
  TrainingResult out;
  out.base = runs_[0]->result();
  const TrainRunResult& base = out.base;
  size_t next = 1;
  for (const auto& v : t.compare) {
    const TrainRunResult& x = runs_[next++]->result();
    const double base_tput = base.metrics.tokens_per_s, tput = x.metrics.tokens_per_s;
    const double base_mem = base.memory_per_gpu.total_GiB, mem = x.memory_per_gpu.total_GiB;
    const double base_act = base.memory_per_gpu.activations_GiB, act = x.memory_per_gpu.activations_GiB;
    out.compare.push_back({v.label, x, tput > 0 ? base_tput / tput : 0.0, base_mem > 0 ? mem / base_mem : 0.0,
                           base_act > 0 ? act / base_act : 0.0});
  }
  if (!base.memory_per_gpu.fits) {
    const auto [path, message] = does_not_fit(out.base.memory_per_gpu, "this configuration");
    out.does_not_fit_path = path;
    out.does_not_fit_message = message;
    out.warnings.push_back("does_not_fit at " + path + ": " + message);
  }
  for (size_t i = 0; i < out.compare.size(); ++i)
    if (!out.compare[i].run.memory_per_gpu.fits)
      out.warnings.push_back("does_not_fit at /training/compare/" + std::to_string(i) + ": " +
                             does_not_fit(out.compare[i].run.memory_per_gpu, "variant '" + t.compare[i].label + "'").second);
  if (!t.scaling.values.empty()) {
    TrainingResult::Scaling sc;
    sc.axis = t.scaling.axis;
    sc.mode = t.scaling.mode;
    double first = 0, first_tput = 0;
    int first_gpus = 0;
    double last_eff = 0;
    for (size_t i = 0; i < t.scaling.values.size(); ++i) {
      const TrainRunResult& vr = runs_[next++]->result();
      const TrainRunResult::Metrics& x = vr.metrics;
      if (i == 0) {
        first = x.tokens_per_s_per_gpu;
        first_tput = x.tokens_per_s;
        first_gpus = vr.deployment.gpus;
      }
      last_eff = first > 0 ? 100.0 * x.tokens_per_s_per_gpu / first : 0.0;
      TrainScalingPoint p;
      p.dp = t.scaling.values[i];
      p.gpus = vr.deployment.gpus;
      p.nodes = vr.deployment.nodes;
      p.micro_batches_per_step = vr.batch.micro_batches_per_step;
      p.global_batch_size = vr.batch.global_batch_size;
      p.step_time_ms = x.step_time_ms;
      p.tokens_per_s = x.tokens_per_s;
      p.tokens_per_s_per_gpu = x.tokens_per_s_per_gpu;
      p.speedup = first_tput > 0 ? x.tokens_per_s / first_tput : 0.0;
      p.ideal_speedup = first_gpus > 0 ? static_cast<double>(p.gpus) / first_gpus : 0.0;
      p.efficiency_pct = last_eff;
      p.mfu_pct = x.mfu_pct;
      p.exposed_dp_comm_ms = vr.step_breakdown_ms.exposed_dp_ms;
      p.bubble_ms = vr.step_breakdown_ms.pipeline_bubble_ms;
      p.memory_per_gpu_GiB = vr.memory_per_gpu.total_GiB;
      p.fits = vr.memory_per_gpu.fits;
      sc.points.push_back(p);
    }
    sc.final_efficiency_pct = last_eff;
    for (const TrainScalingPoint& p : sc.points)
      if (!p.fits) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "the point dp=%d needs %.1f GiB per GPU, more than the GPU has", p.dp,
                      p.memory_per_gpu_GiB);
        out.warnings.push_back(std::string("does_not_fit at /training/scaling: ") + buf);
      }
    out.scaling = std::move(sc);
  }
  out.key_metrics = training_key_metrics(t.key_metrics, out.base, &out);
  return out;
}

json TrainingJob::result() const { return to_json(typed_result()); }

// The key metrics alone, for the interval's bound runs: no JSON is written.
KeyMetrics TrainingJob::key_metrics() const { return typed_result().key_metrics; }

KeyMetrics TrainingJob::headline_figures() const {
  const TrainingResult r = typed_result();
  std::vector<std::string> ids;
  for (const std::string& id : training_headline_ids(r))
    if (!find_by_id(r.key_metrics, id)) ids.push_back(id);
  return training_key_metrics(ids, r.base, &r);
}

std::vector<KeyMetrics> TrainingJob::variant_key_metrics() const {
  const TrainingResult r = typed_result();
  std::vector<KeyMetrics> out;
  for (const TrainCompareVariant& v : r.compare) out.push_back(sightline::variant_key_metrics(r, v));
  return out;
}

}  // namespace sightline
