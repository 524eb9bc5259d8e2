// The training metrics: one row per metric, the only place a training metric
// is defined. Each row holds its catalogue words (id, label, unit, the JSON
// pointer where the result writes it, the input it needs, a description, how
// the run's end-to-end speed reaches it) and how it is read from the typed
// result:
//
//   TRAINING_METRIC(id, label, unit, pointer, needs, description, speed, getter)
//
// speed: speed_time, speed_rate or not_speed (MetricInfo::speed: which figures
// the kind's measured end-to-end error band widens).
// getter: an expression of train/training_result.cpp's helpers (num, comm,
// per_layer, pipeline, memory, run_figure, first_variant over a field; real,
// whole, yes_no over a function of the run and the whole result; R =
// TrainRunResult).
//
// An X-macro table, with no include guard: the includer defines the macro and
// the table undefines it. scenario/metric_catalogue.cpp expands each row into
// its MetricInfo and drops the getter (the scenario layer sees no train type:
// the getter is never compiled there); train/training_result.cpp expands each
// row into its getter and drops the words. So a training metric cannot have
// words without a getter or a getter without words. Rows stay in this order:
// it is the catalogue's order (registries, CLI tables, "valid: ..." lists).
#ifndef TRAINING_METRIC
#error "define TRAINING_METRIC before including scenario/training_metric_table.hpp"
#endif

TRAINING_METRIC("step_time_ms", "Step time", "ms", "/metrics/step_time_ms", "", "one optimizer step, all micro-batches",
                speed_time, num(&R::Metrics::step_time_ms))
TRAINING_METRIC("tokens_per_s", "Throughput", "tokens/s", "/metrics/tokens_per_s", "", "tokens trained per second, all GPUs",
                speed_rate, num(&R::Metrics::tokens_per_s))
TRAINING_METRIC("tokens_per_s_per_gpu", "Throughput per GPU", "tokens/s/GPU", "/metrics/tokens_per_s_per_gpu", "", "",
                speed_rate, num(&R::Metrics::tokens_per_s_per_gpu))
TRAINING_METRIC("samples_per_s", "Sequences per second", "seq/s", "/metrics/samples_per_s", "", "",
                speed_rate, num(&R::Metrics::samples_per_s))
TRAINING_METRIC("mfu_pct", "MFU", "%", "/metrics/mfu_pct", "", "model FLOPs (see flop_convention) / (time × GPUs × bf16 peak)",
                speed_rate, num(&R::Metrics::mfu_pct))
TRAINING_METRIC("hfu_pct", "HFU", "%", "/metrics/hfu_pct", "", "model FLOPs plus recomputed FLOPs (MFU's convention, so HFU ≥ MFU) / (time × GPUs × bf16 peak)",
                speed_rate, num(&R::Metrics::hfu_pct))
TRAINING_METRIC("model_tflops_per_gpu", "Model TFLOP/s per GPU", "TFLOP/s", "/metrics/model_tflops_per_gpu", "", "",
                speed_rate, num(&R::Metrics::model_tflops_per_gpu))
TRAINING_METRIC("attention_fwd_bwd_ms", "Attention fwd+bwd (one layer)", "ms", "/per_layer/attention_core_fwd_bwd_ms", "", "attention kernels of one layer for one micro-batch: forward + backward",
                not_speed, per_layer(&R::PerLayer::attention_core_fwd_bwd_ms))
TRAINING_METRIC("attention_block_fwd_bwd_ms", "Attention block fwd+bwd (one layer)", "ms", "/per_layer/attention_block_fwd_bwd_ms", "", "norm, QKV, RoPE, attention, output projection, TP comm",
                not_speed, per_layer(&R::PerLayer::attention_block_fwd_bwd_ms))
TRAINING_METRIC("mlp_fwd_bwd_ms", "MLP fwd+bwd (one layer)", "ms", "/per_layer/mlp_block_fwd_bwd_ms", "", "norm, up/gate, activation, down projection, TP comm",
                not_speed, per_layer(&R::PerLayer::mlp_block_fwd_bwd_ms))
TRAINING_METRIC("mlp_achieved_tflops", "MLP achieved TFLOP/s", "TFLOP/s", "/per_layer/mlp_achieved_tflops", "", "",
                not_speed, per_layer(&R::PerLayer::mlp_achieved_tflops))
TRAINING_METRIC("layer_fwd_bwd_ms", "Layer fwd+bwd", "ms", "/per_layer/layer_fwd_bwd_ms", "", "one transformer layer",
                not_speed, per_layer(&R::PerLayer::layer_fwd_bwd_ms))
TRAINING_METRIC("layer_iteration_ms", "Layer training iteration", "ms", "/per_layer/layer_iteration_ms", "", "one layer: forward + backward (+ recompute) + its optimizer update",
                not_speed, per_layer(&R::PerLayer::layer_iteration_ms))
TRAINING_METRIC("dp_allreduce_one_shot_ms", "DP gradient all-reduce (one message)", "ms", "/communication/dp/allreduce_one_shot_ms", "", "all gradients of one GPU all-reduced as a single message",
                not_speed, comm(&R::Communication::dp_allreduce_one_shot_ms))
TRAINING_METRIC("dp_allreduce_intra_node_ms", "Same all-reduce inside one NVLink domain", "ms", "/communication/dp/allreduce_one_shot_intra_node_ms", "", "",
                not_speed, comm(&R::Communication::dp_allreduce_one_shot_intra_node_ms))
TRAINING_METRIC("dp_inter_over_intra", "DP all-reduce: topology / NVLink-only", "x", "/communication/dp/inter_over_intra", "", "",
                not_speed, comm(&R::Communication::dp_inter_over_intra))
TRAINING_METRIC("dp_grad_sync_ms", "DP gradient sync per step", "ms", "/communication/dp/sync_ms", "", "bucketed all-reduce, or reduce-scatter + parameter all-gather under ZeRO",
                not_speed, comm(&R::Communication::dp_sync_ms))
TRAINING_METRIC("dp_grad_sync_exposed_ms", "DP gradient sync exposed", "ms", "/communication/dp/exposed_ms", "", "",
                not_speed, comm(&R::Communication::dp_exposed_ms))
TRAINING_METRIC("dp_comm_overlap_pct", "DP/FSDP communication hidden behind compute", "%", "/communication/dp/overlap_pct", "", "share of the data-parallel (DDP or FSDP) communication time overlapped with compute",
                not_speed, comm(&R::Communication::dp_overlap_pct))
TRAINING_METRIC("dp_comm_to_compute_ratio", "DP/FSDP communication / compute", "x", "/communication/dp/comm_to_compute_ratio", "", "time of the data-parallel communication over compute time; above 1 when communication takes longer",
                not_speed, comm(&R::Communication::dp_comm_to_compute_ratio))
TRAINING_METRIC("tp_all_gather_ms", "TP all-gather per step", "ms", "/communication/tp/all_gather_ms", "", "",
                not_speed, comm(&R::Communication::tp_all_gather_ms))
TRAINING_METRIC("tp_all_gather_call_us", "TP all-gather (one call)", "us", "/communication/tp/all_gather_call_us", "", "",
                not_speed, comm(&R::Communication::tp_all_gather_call_us))
TRAINING_METRIC("tp_comm_ms", "TP communication per step", "ms", "/communication/tp/total_ms", "", "",
                not_speed, comm(&R::Communication::tp_total_ms))
TRAINING_METRIC("tp_comm_exposed_pct", "TP communication exposed (share of step)", "%", "/communication/tp/exposed_pct", "", "",
                not_speed, comm(&R::Communication::tp_exposed_pct))
TRAINING_METRIC("ep_all_to_all_ms", "EP all-to-all per step", "ms", "/communication/ep/all_to_all_ms", "", "",
                not_speed, comm(&R::Communication::ep_all_to_all_ms))
TRAINING_METRIC("ep_all_to_all_call_us", "EP all-to-all (one call)", "us", "/communication/ep/all_to_all_call_us", "", "",
                not_speed, comm(&R::Communication::ep_all_to_all_call_us))
TRAINING_METRIC("cp_ring_ms", "CP ring exchange per step", "ms", "/communication/cp/total_ms", "", "",
                not_speed, comm(&R::Communication::cp_total_ms))
TRAINING_METRIC("pp_bubble_pct", "Pipeline bubble", "%", "/pipeline/bubble_pct", "", "idle share of the pipeline schedule",
                not_speed, real([](const R& r, const TrainingResult*) { return r.pipeline.bubble_pct; }))
TRAINING_METRIC("max_micro_batch", "Max micro-batch before OOM", "seq", "/memory_per_gpu/max_micro_batch", "", "",
                not_speed, whole([](const R& r, const TrainingResult*) { return static_cast<double>(r.memory_per_gpu.max_micro_batch); }))
TRAINING_METRIC("memory_per_gpu_GiB", "Memory per GPU", "GiB", "/memory_per_gpu/total_GiB", "", "peak, most loaded GPU",
                not_speed, memory(&R::Memory::total_GiB))
TRAINING_METRIC("memory_overflow_GiB", "Memory overflow", "GiB", "/memory_per_gpu/overflow_GiB", "", "",
                not_speed, memory(&R::Memory::overflow_GiB))
TRAINING_METRIC("activations_GiB", "Activation memory per GPU", "GiB", "/memory_per_gpu/activations_GiB", "", "",
                not_speed, memory(&R::Memory::activations_GiB))
TRAINING_METRIC("fits", "Fits in GPU memory", "", "/memory_per_gpu/fits", "", "",
                not_speed, yes_no([](const R& r, const TrainingResult*) { return r.memory_per_gpu.fits ? 1.0 : 0.0; }))
TRAINING_METRIC("trainable_params_M", "Trainable parameters", "M", "/model/trainable_params_M", "", "",
                not_speed, real([](const R& r, const TrainingResult*) { return r.trainable_params_M; }))
TRAINING_METRIC("global_batch_size", "Global batch", "seq", "/batch/global_batch_size", "", "",
                not_speed, whole([](const R& r, const TrainingResult*) { return static_cast<double>(r.batch.global_batch_size); }))
TRAINING_METRIC("global_batch_tokens", "Global batch", "tokens", "/batch/global_batch_tokens", "", "",
                not_speed, real([](const R& r, const TrainingResult*) { return r.batch.global_batch_tokens; }))
TRAINING_METRIC("attention_compute_pct", "Attention share of compute", "%", "/per_layer/attention_share_of_compute_pct", "", "",
                not_speed, per_layer(&R::PerLayer::attention_share_of_compute_pct))
TRAINING_METRIC("time_to_train_hours", "Time to train", "hours", "/training_run/time_hours", "tokens_to_train", "",
                speed_time, run_figure(&R::Run::time_hours))
TRAINING_METRIC("time_to_train_days", "Time to train", "days", "/training_run/time_days", "tokens_to_train", "",
                speed_time, run_figure(&R::Run::time_days))
TRAINING_METRIC("gpu_hours", "GPU-hours", "GPU·h", "/training_run/gpu_hours", "tokens_to_train", "",
                speed_time, run_figure(&R::Run::gpu_hours))
TRAINING_METRIC("energy_MWh", "Energy", "MWh", "/training_run/energy_MWh", "tokens_to_train", "",
                not_speed, run_figure(&R::Run::energy_MWh))
TRAINING_METRIC("cost_usd", "Cost", "USD", "/training_run/cost_usd", "gpu_hour_usd", "",
                not_speed, real([](const R& r, const TrainingResult*) -> std::optional<double> { if (!r.training_run) return std::nullopt; return r.training_run->cost_usd; }))
TRAINING_METRIC("scaling_efficiency_pct", "Scaling efficiency (last point)", "%", "/scaling/final_efficiency_pct", "scaling", "tokens/s/GPU at the last point / at the first",
                not_speed, real([](const R&, const TrainingResult* w) -> std::optional<double> { if (!w || !w->scaling) return std::nullopt; return w->scaling->final_efficiency_pct; }))
TRAINING_METRIC("compare_throughput_ratio", "Throughput: this / first variant", "x", "/compare/0/base_over_variant_throughput", "compare", "",
                not_speed, first_variant(&TrainCompareVariant::base_over_variant_throughput))
TRAINING_METRIC("compare_memory_ratio", "Memory: first variant / this", "x", "/compare/0/variant_over_base_memory", "compare", "",
                not_speed, first_variant(&TrainCompareVariant::variant_over_base_memory))
TRAINING_METRIC("compare_activation_ratio", "Activations: first variant / this", "x", "/compare/0/variant_over_base_activations", "compare", "",
                not_speed, first_variant(&TrainCompareVariant::variant_over_base_activations))
// Shown by the CLI table and the page's training view beside the headline metrics.
TRAINING_METRIC("hardware_tflops_per_gpu", "Hardware TFLOP/s per GPU", "TFLOP/s", "/metrics/hardware_tflops_per_gpu", "", "model FLOPs plus the FLOPs recomputation runs again (MFU's convention), the HFU basis",
                speed_rate, num(&R::Metrics::hardware_tflops_per_gpu))
TRAINING_METRIC("tp_comm_exposed_ms", "TP communication exposed per step", "ms", "/communication/tp/exposed_ms", "", "",
                not_speed, comm(&R::Communication::tp_exposed_ms))
TRAINING_METRIC("cp_ring_exposed_ms", "CP ring exchange exposed per step", "ms", "/communication/cp/exposed_ms", "", "",
                not_speed, comm(&R::Communication::cp_exposed_ms))
TRAINING_METRIC("pp_bubble_formula_pct", "Pipeline bubble (formula)", "%", "/pipeline/bubble_formula_pct", "", "(PP - 1) / (m·v + PP - 1), for comparison",
                not_speed, pipeline(&R::Pipeline::bubble_formula_pct))
TRAINING_METRIC("pp_mean_idle_pct", "Pipeline idle, mean of all ranks", "%", "/pipeline/mean_idle_pct", "", "adds the idle time of less loaded stages",
                not_speed, pipeline(&R::Pipeline::mean_idle_pct))
TRAINING_METRIC("pp_makespan_ms", "Pipeline makespan", "ms", "/pipeline/makespan_ms", "", "from the first pass to the last pass on any rank",
                not_speed, pipeline(&R::Pipeline::makespan_ms))
TRAINING_METRIC("pp_p2p_transfer_us", "Stage-to-stage transfer", "us", "/pipeline/p2p_transfer_us", "", "one activation (or gradient) transfer between neighbouring stages",
                not_speed, pipeline(&R::Pipeline::p2p_transfer_us))
// The searches headline their answer (cheapest_meeting_slo, best); each
// ranked row carries the same metrics of its own configuration.

#undef TRAINING_METRIC
