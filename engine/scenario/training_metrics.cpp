#include "scenario/training_metrics.hpp"

namespace sightline {

const std::vector<TrainingMetricInfo>& training_metrics() {
  static const std::vector<TrainingMetricInfo> list = {
      {"step_time_ms", "Step time", "ms", "/metrics/step_time_ms", "", "one optimizer step, all micro-batches"},
      {"tokens_per_s", "Throughput", "tokens/s", "/metrics/tokens_per_s", "", "tokens trained per second, all GPUs"},
      {"tokens_per_s_per_gpu", "Throughput per GPU", "tokens/s/GPU", "/metrics/tokens_per_s_per_gpu", "", ""},
      {"samples_per_s", "Sequences per second", "seq/s", "/metrics/samples_per_s", "", ""},
      {"mfu_pct", "MFU", "%", "/metrics/mfu_pct", "", "model FLOPs (see flop_convention) / (time × GPUs × bf16 peak)"},
      {"hfu_pct", "HFU", "%", "/metrics/hfu_pct", "", "executed FLOPs incl. recomputation / (time × GPUs × bf16 peak)"},
      {"model_tflops_per_gpu", "Model TFLOP/s per GPU", "TFLOP/s", "/metrics/model_tflops_per_gpu", "", ""},
      {"attention_fwd_bwd_ms", "Attention fwd+bwd (one layer)", "ms", "/per_layer/attention_core_fwd_bwd_ms", "",
       "attention kernels of one layer for one micro-batch: forward + backward"},
      {"attention_block_fwd_bwd_ms", "Attention block fwd+bwd (one layer)", "ms",
       "/per_layer/attention_block_fwd_bwd_ms", "", "norm, QKV, RoPE, attention, output projection, TP comm"},
      {"mlp_fwd_bwd_ms", "MLP fwd+bwd (one layer)", "ms", "/per_layer/mlp_block_fwd_bwd_ms", "",
       "norm, up/gate, activation, down projection, TP comm"},
      {"mlp_achieved_tflops", "MLP achieved TFLOP/s", "TFLOP/s", "/per_layer/mlp_achieved_tflops", "", ""},
      {"layer_fwd_bwd_ms", "Layer fwd+bwd", "ms", "/per_layer/layer_fwd_bwd_ms", "", "one transformer layer"},
      {"layer_iteration_ms", "Layer training iteration", "ms", "/per_layer/layer_iteration_ms", "",
       "one layer: forward + backward (+ recompute) + its optimizer update"},
      {"dp_allreduce_one_shot_ms", "DP gradient all-reduce (one message)", "ms",
       "/communication/dp/allreduce_one_shot_ms", "", "all gradients of one GPU all-reduced as a single message"},
      {"dp_allreduce_intra_node_ms", "Same all-reduce inside one NVLink domain", "ms",
       "/communication/dp/allreduce_one_shot_intra_node_ms", "", ""},
      {"dp_inter_over_intra", "DP all-reduce: topology / NVLink-only", "x", "/communication/dp/inter_over_intra", "",
       ""},
      {"dp_grad_sync_ms", "DP gradient sync per step", "ms", "/communication/dp/sync_ms", "",
       "bucketed all-reduce, or reduce-scatter + parameter all-gather under ZeRO"},
      {"dp_grad_sync_exposed_ms", "DP gradient sync exposed", "ms", "/communication/dp/exposed_ms", "", ""},
      {"dp_comm_overlap_pct", "DP/FSDP communication hidden behind compute", "%", "/communication/dp/overlap_pct", "",
       "share of the data-parallel (DDP or FSDP) communication time overlapped with compute"},
      {"dp_comm_to_compute_ratio", "DP/FSDP communication / compute", "x", "/communication/dp/comm_to_compute_ratio",
       "", "time of the data-parallel communication over compute time; above 1 when communication takes longer"},
      {"tp_all_gather_ms", "TP all-gather per step", "ms", "/communication/tp/all_gather_ms", "", ""},
      {"tp_all_gather_call_us", "TP all-gather (one call)", "us", "/communication/tp/all_gather_call_us", "", ""},
      {"tp_comm_ms", "TP communication per step", "ms", "/communication/tp/total_ms", "", ""},
      {"tp_comm_exposed_pct", "TP communication exposed (share of step)", "%", "/communication/tp/exposed_pct", "",
       ""},
      {"ep_all_to_all_ms", "EP all-to-all per step", "ms", "/communication/ep/all_to_all_ms", "", ""},
      {"ep_all_to_all_call_us", "EP all-to-all (one call)", "us", "/communication/ep/all_to_all_call_us", "", ""},
      {"cp_ring_ms", "CP ring exchange per step", "ms", "/communication/cp/total_ms", "", ""},
      {"pp_bubble_pct", "Pipeline bubble", "%", "/pipeline/bubble_pct", "", "idle share of the pipeline schedule"},
      {"max_micro_batch", "Max micro-batch before OOM", "seq", "/memory_per_gpu/max_micro_batch", "", ""},
      {"memory_per_gpu_GiB", "Memory per GPU", "GiB", "/memory_per_gpu/total_GiB", "", "peak, most loaded GPU"},
      {"memory_overflow_GiB", "Memory overflow", "GiB", "/memory_per_gpu/overflow_GiB", "", ""},
      {"activations_GiB", "Activation memory per GPU", "GiB", "/memory_per_gpu/activations_GiB", "", ""},
      {"fits", "Fits in GPU memory", "", "/memory_per_gpu/fits", "", ""},
      {"trainable_params_M", "Trainable parameters", "M", "/model/trainable_params_M", "", ""},
      {"global_batch_size", "Global batch", "seq", "/batch/global_batch_size", "", ""},
      {"global_batch_tokens", "Global batch", "tokens", "/batch/global_batch_tokens", "", ""},
      {"attention_compute_pct", "Attention share of compute", "%", "/per_layer/attention_share_of_compute_pct", "",
       ""},
      {"time_to_train_hours", "Time to train", "hours", "/training_run/time_hours", "tokens_to_train", ""},
      {"time_to_train_days", "Time to train", "days", "/training_run/time_days", "tokens_to_train", ""},
      {"gpu_hours", "GPU-hours", "GPU·h", "/training_run/gpu_hours", "tokens_to_train", ""},
      {"energy_MWh", "Energy", "MWh", "/training_run/energy_MWh", "tokens_to_train", ""},
      {"cost_usd", "Cost", "USD", "/training_run/cost_usd", "gpu_hour_usd", ""},
      {"scaling_efficiency_pct", "Scaling efficiency (last point)", "%", "/scaling/final_efficiency_pct", "scaling",
       "tokens/s/GPU at the last point / at the first"},
      {"compare_throughput_ratio", "Throughput: this / first variant", "x", "/compare/0/base_over_variant_throughput",
       "compare", ""},
      {"compare_memory_ratio", "Memory: first variant / this", "x", "/compare/0/variant_over_base_memory", "compare",
       ""},
      {"compare_activation_ratio", "Activations: first variant / this", "x",
       "/compare/0/variant_over_base_activations", "compare", ""},
  };
  return list;
}

const TrainingMetricInfo* find_training_metric(const std::string& id) {
  for (const auto& m : training_metrics())
    if (id == m.id) return &m;
  return nullptr;
}

const std::vector<std::string>& default_training_key_metrics() {
  static const std::vector<std::string> ids = {"tokens_per_s_per_gpu", "mfu_pct", "step_time_ms",
                                               "memory_per_gpu_GiB"};
  return ids;
}

json extract_key_metrics(const json& result, const std::vector<std::string>& ids) {
  json out = json::array();
  for (const auto& id : ids) {
    const TrainingMetricInfo* m = find_training_metric(id);
    if (!m) continue;
    const json::json_pointer ptr(m->pointer);
    json value = result.contains(ptr) ? result.at(ptr) : json(nullptr);
    out.push_back({{"id", m->id}, {"label", m->label}, {"value", value}, {"unit", m->unit},
                   {"description", m->description}});
  }
  return out;
}

}  // namespace sightline
