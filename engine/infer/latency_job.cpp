#include "infer/latency_job.hpp"

#include "model/kv_footprint.hpp"

#include <algorithm>

#include "mem/inference_memory.hpp"
#include "model/param_count.hpp"
#include "perf/power.hpp"

namespace sightline {

LatencyJob::LatencyJob(Scenario scenario) : s_(std::move(scenario)), cost_(make_cost_setup(s_.cost_model, s_.hardware)) {
  // One unit for the prefill, one per decode step.
  total_units_ = 1 + (s_.serving->workload.output_tokens - 1);
}

StepCost LatencyJob::price(const BatchShape& batch) const {
  const auto& sv = *s_.serving;
  StepOptions options;
  options.attention = sv.attention;
  options.fusion = s_.cost_model.software_stack.fusion;
  // As the stack's engine runs it: a decode batch padded to its CUDA-graph size.
  return cost_.price(
      build_served_step(s_.model, s_.precision, sv.parallelism, batch, options, s_.cost_model.software_stack));
}

// The shared power model (perf/power.hpp), as the serving simulator applies it
// to each of its steps: the same step costs the same energy in both modes.
void LatencyJob::add_step_energy(const StepCost& c) {
  energy_J_ += step_energy_per_gpu_J(s_.hardware.gpu, s_.serving->parallelism.pp, c.compute_peak_s, c.memory_peak_s,
                                     c.time_s);
}

bool LatencyJob::step(int64_t max_units) {
  const auto& w = s_.serving->workload;
  // A step priced for batch_size sequences costs batch_size units: the budget
  // bounds time at any batch size.
  const int64_t per_step = std::max<int64_t>(1, w.batch_size);
  for (int64_t spent = 0; spent < max_units && done_units_ < total_units_; spent += per_step, ++done_units_) {
    BatchShape batch;
    if (done_units_ == 0) {
      batch.seqs.assign(static_cast<size_t>(w.batch_size), SeqChunk{w.prompt_tokens, 0});
      prefill_ = price(batch);
      add_step_energy(prefill_);
    } else {
      // Decode step i feeds the i-th generated token; the cache holds the prompt and the i-1 tokens before it.
      batch.seqs.assign(static_cast<size_t>(w.batch_size), SeqChunk{1, w.prompt_tokens + done_units_ - 1});
      StepCost c = price(batch);
      decode_time_s_ += c.time_s;
      decode_low_s_ += c.time_low_s;
      decode_high_s_ += c.time_high_s;
      decode_compute_peak_s_ += c.compute_peak_s;
      decode_memory_peak_s_ += c.memory_peak_s;
      add_step_energy(c);
      decode_breakdown_.add(c);
    }
  }
  return done_units_ >= total_units_;
}

double LatencyJob::progress() const {
  return total_units_ > 0 ? static_cast<double>(done_units_) / static_cast<double>(total_units_) : 1.0;
}

LatencyResult LatencyJob::typed_result() const {
  const auto& sv = *s_.serving;
  const auto& w = sv.workload;
  const double decode_steps = static_cast<double>(w.output_tokens - 1);
  const double ttft_s = prefill_.time_s;
  const double e2e_s = ttft_s + decode_time_s_;
  const double tpot_s = decode_steps > 0 ? decode_time_s_ / decode_steps : 0.0;
  const double batch = static_cast<double>(w.batch_size);

  LatencyResult x;
  InferenceMemory& mem = x.memory;
  mem.capacity_GiB = s_.hardware.gpu.memory_GiB;
  mem.weights_GiB = weight_bytes_per_gpu(s_.model, s_.precision, sv.parallelism) / kBytesPerGiB;
  mem.kv_cache_GiB = kv_footprint_per_gpu(s_.model, s_.precision, sv.parallelism.tp,
                                           static_cast<double>(s_.model.num_layers / sv.parallelism.pp) / s_.model.num_layers)
                         .bytes_for_tokens(w.prompt_tokens + w.output_tokens) *
                     batch / kBytesPerGiB;
  mem.activations_GiB = activation_peak_bytes(s_.model, s_.precision, sv.parallelism.tp,
                                              w.batch_size * w.prompt_tokens, w.batch_size,
                                              s_.cost_model.software_stack.sampler_bytes_per_logit) / kBytesPerGiB;
  mem.runtime_overhead_GiB = sv.runtime_overhead_GiB;
  mem.free_GiB = mem.capacity_GiB - mem.weights_GiB - mem.kv_cache_GiB - mem.activations_GiB - mem.runtime_overhead_GiB;

  // Physical floors for orientation: the weights a decode step of this batch
  // actually reads (an untied embedding table is only gathered by rows; an
  // MoE reads only the experts the batch hits), at full HBM bandwidth on
  // every pipeline stage in turn; all prefill FLOPs at dense peak.
  BatchShape decode_batch;
  decode_batch.seqs.assign(static_cast<size_t>(w.batch_size), SeqChunk{1, w.prompt_tokens});
  StepOptions decode_options;
  decode_options.attention = sv.attention;
  decode_options.fusion = s_.cost_model.software_stack.fusion;
  const double weight_read_floor_s =
      weight_bytes_read(build_forward_step(s_.model, s_.precision, sv.parallelism, decode_batch, decode_options)) /
      (s_.hardware.gpu.hbm_bandwidth_GBps * 1e9);
  double prefill_flops = 0;
  for (const auto& p : prefill_.parts) prefill_flops += p.flops;
  const double peak = s_.hardware.gpu.peak_tflops_for(s_.precision.activations);

  x.header = make_result_header(s_, "serving_latency", cost_.model->tier());
  x.gpu = s_.hardware.gpu.id;
  x.tp = sv.parallelism.tp;
  x.pp = sv.parallelism.pp;
  x.weights = s_.precision.weights;
  x.kv_cache = s_.precision.kv_cache;
  x.prompt_tokens = w.prompt_tokens;
  x.output_tokens = w.output_tokens;
  x.batch_size = w.batch_size;
  const double gpus = static_cast<double>(sv.parallelism.tp * sv.parallelism.pp);
  const double output_tokens = batch * static_cast<double>(w.output_tokens);
  const double joules_all_gpus = energy_J_ * gpus;
  LatencyResult::Metrics& m = x.metrics;
  m.ttft_ms = ttft_s * 1e3;
  m.tpot_ms = tpot_s * 1e3;
  m.e2e_ms = e2e_s * 1e3;
  m.output_tokens_per_s = output_tokens / e2e_s;
  m.output_tokens_per_s_per_gpu = output_tokens / e2e_s / gpus;
  m.decode_tokens_per_s = tpot_s > 0 ? batch / tpot_s : 0.0;
  m.prefill_tokens_per_s = batch * static_cast<double>(w.prompt_tokens) / ttft_s;
  m.energy_J_per_output_token = joules_all_gpus / output_tokens;
  const Utilization prefill_u = utilization(prefill_.compute_peak_s, prefill_.memory_peak_s, prefill_.time_s);
  const Utilization decode_u = utilization(decode_compute_peak_s_, decode_memory_peak_s_, decode_time_s_);
  m.prefill_mfu = prefill_u.compute;
  m.prefill_mbu = prefill_u.memory;
  m.decode_mfu = decode_u.compute;
  m.decode_mbu = decode_u.memory;
  m.has_cost = s_.cost_model.gpu_hour_usd > 0;
  if (m.has_cost)
    m.usd_per_million_output_tokens = s_.cost_model.gpu_hour_usd * gpus * (e2e_s / 3600.0) / output_tokens * 1e6;
  // 80% intervals from the calibration residuals (errors taken as fully
  // correlated within a step, so the band is conservative).
  x.ttft_interval = {prefill_.time_low_s * 1e3, prefill_.time_high_s * 1e3};
  x.tpot_interval = {decode_steps > 0 ? decode_low_s_ / decode_steps * 1e3 : 0.0,
                     decode_steps > 0 ? decode_high_s_ / decode_steps * 1e3 : 0.0};
  x.e2e_interval = {(prefill_.time_low_s + decode_low_s_) * 1e3, (prefill_.time_high_s + decode_high_s_) * 1e3};
  x.cost_tier = cost_.model->tier();
  x.provenance = cost_.provenance;
  x.software_stack = s_.cost_model.software_stack.id;
  x.peak_tflops = peak;
  x.hbm_bandwidth_GBps = s_.hardware.gpu.hbm_bandwidth_GBps;
  x.decode_weight_read_floor_ms = weight_read_floor_s * 1e3;
  x.prefill_compute_floor_ms = peak > 0 ? prefill_flops / (peak * 1e12) * 1e3 : 0.0;
  x.prefill_breakdown.add(prefill_);
  x.decode_breakdown = decode_breakdown_;
  x.decode_steps = decode_steps;
  return x;
}

json LatencyJob::result() const { return to_json(typed_result()); }

KeyMetrics LatencyJob::key_metrics() const { return sightline::key_metrics(typed_result()); }

}  // namespace sightline
