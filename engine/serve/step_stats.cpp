// The serving simulator's step statistics (step_stats.hpp).
#include "serve/step_stats.hpp"

#include <algorithm>

namespace sightline::serve {

namespace {

double ratio_or_zero(double a, double b) { return b > 0 ? a / b : 0.0; }

}  // namespace

Utilization StepStats::on_step(const StepBatch& b, const PeakWork& work, double tp, double step_s) {
  // Achieved utilization over the whole step (host and scheduler time, swaps
  // and adapter loads included: they use the GPU's time, not its peaks).
  const Utilization u = utilization(work.compute_gpu_s / tp, work.memory_gpu_s / tp, step_s);
  step_mfu_.add(u.compute);
  step_mbu_.add(u.memory);
  compute_peak_gpu_s_ += work.compute_gpu_s;
  memory_peak_gpu_s_ += work.memory_gpu_s;
  busy_gpu_s_ += tp * step_s;  // tp x pp GPUs, each busy step_s / pp
  ++steps_;
  sum_batch_ += static_cast<double>(b.items.size());
  sum_tokens_ += static_cast<double>(b.prefill_tokens + b.decode_tokens);
  return u;
}

void StepStats::on_transfer(double bytes, double ms) {
  ++transfers_;
  transfer_bytes_ += bytes;
  transfer_ms_.push_back(ms);
}

double StepStats::mean_batch() const { return ratio_or_zero(sum_batch_, static_cast<double>(steps_)); }
double StepStats::mean_tokens() const { return ratio_or_zero(sum_tokens_, static_cast<double>(steps_)); }

// GPU-seconds the steps' work would take at peak over GPU-seconds of wall
// time (all GPUs, the run's duration) and of busy time (while a step runs on
// them), and the distribution of the steps' own values.
ServingMetrics::Utilization StepStats::utilization_over(double peak_gpu_s, const FractionHistogram& per_step,
                                                        double duration_s, int gpus) const {
  return ServingMetrics::Utilization{std::min(1.0, ratio_or_zero(peak_gpu_s, duration_s * gpus)),
                                     std::min(1.0, ratio_or_zero(peak_gpu_s, busy_gpu_s_)),
                                     per_step.summary("no step ran")};
}

ServingMetrics::Utilization StepStats::mfu(double duration_s, int gpus) const {
  return utilization_over(compute_peak_gpu_s_, step_mfu_, duration_s, gpus);
}

ServingMetrics::Utilization StepStats::mbu(double duration_s, int gpus) const {
  return utilization_over(memory_peak_gpu_s_, step_mbu_, duration_s, gpus);
}

Summary StepStats::itl_ms() const {
  return itl_.summary_ms("no request produced a second token (ITL is the gap between tokens)");
}

double StepStats::mean_transfer_MiB() const {
  return ratio_or_zero(transfer_bytes_, static_cast<double>(transfers_)) / (1024.0 * 1024.0);
}

Summary StepStats::transfer_ms() const {
  std::vector<double> t = transfer_ms_;
  return summarize(t, "no KV transfer completed");
}

}  // namespace sightline::serve
