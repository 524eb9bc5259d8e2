#pragma once
// The training results, typed. TrainRun fills a TrainRunResult for one
// configuration while it finishes (no JSON is written while it computes);
// TrainingJob adds the compare variants and the scaling curve into a
// TrainingResult. One to_json per type writes them; key metrics are read from
// these fields (training_key_metric_value), not out of the JSON.
#include <optional>
#include <string>
#include <vector>

#include "perf/step_cost.hpp"
#include "run/key_metric.hpp"
#include "run/result_header.hpp"
#include "train/micro_batch.hpp"
#include "train/schedule.hpp"

namespace sightline {

// One configuration estimated end to end (kind "training").
struct TrainRunResult {
  ResultHeader header;
  double trainable_params_M = 0, trainable_pct = 0;

  struct Placement {
    std::string axis;
    int size = 1, gpus_per_node = 1, nodes = 1;
    std::string link;
  };
  struct Lora {
    int rank = 0;
    std::vector<std::string> targets;
    std::string base_dtype;
  };
  struct Deployment {
    std::string gpu;
    int gpus = 0, gpus_per_node = 0, nodes = 0;
    int dp = 1, tp = 1, pp = 1, cp = 1, ep = 1;
    bool sequence_parallel = false;
    int virtual_stages = 1, zero_stage = 0;
    std::string schedule, recompute, fp8, optimizer;
    bool cpu_offload = false;
    std::optional<Lora> lora;
    std::vector<Placement> placement;
  } deployment;

  struct Batch {
    int64_t seq_len = 0, micro_batch_size = 0, micro_batches_per_step = 0, global_batch_size = 0;
    double global_batch_tokens = 0;
  } batch;

  std::string flop_convention;

  struct Metrics {
    double step_time_ms = 0, tokens_per_s = 0, tokens_per_s_per_gpu = 0, samples_per_s = 0;
    double mfu_pct = 0, hfu_pct = 0, model_tflops_per_gpu = 0, hardware_tflops_per_gpu = 0;
    double hardware_flops_per_step = 0, recompute_flops_per_step = 0, model_flops_per_token = 0;
  } metrics;

  // The bottleneck rank's step, in ms.
  struct StepBreakdown {
    CatTimes cats_ms{};  // compute categories (is_compute_time_cat), recompute, exposed TP/EP/CP/FSDP, overhead
    double exposed_dp_ms = 0, pipeline_bubble_ms = 0, optimizer_ms = 0, cpu_offload_ms = 0;
    double framework_ms = 0;  // train/framework_costs.hpp: the three parts below
    struct FrameworkParts {
      double grad_norm_allreduce = 0, fp8_amax_allreduce = 0, input_copy = 0;
    } framework_parts_ms;
    int rank = 0;
  } step_breakdown_ms;

  struct Stage {
    int rank = 0;
    double fwd_ms = 0, bwd_ms = 0, busy_ms = 0, idle_ms = 0;
    int64_t peak_micro_batches_in_flight = 0;
    double dp_comm_ms = 0, step_end_ms = 0;
    std::vector<PassRecord> passes;  // for the page's timeline
  };
  struct Pipeline {
    std::string schedule;
    int stages = 1, virtual_stages = 1;
    int64_t micro_batches = 0;
    std::vector<int> layers_per_chunk;
    double bubble_pct = 0, mean_idle_pct = 0, bubble_formula_pct = 0, makespan_ms = 0, p2p_transfer_us = 0;
    std::vector<Stage> per_rank;
  } pipeline;

  struct Communication {
    int tp_group = 1;
    double tp_total_ms = 0, tp_all_gather_ms = 0, tp_all_gather_call_us = 0, tp_exposed_ms = 0, tp_exposed_pct = 0;
    int ep_group = 1;
    double ep_all_to_all_ms = 0, ep_all_to_all_call_us = 0, ep_load_imbalance = 1, ep_exposed_ms = 0;
    int cp_group = 1;
    double cp_total_ms = 0, cp_exposed_ms = 0;
    int pp_stages = 1;
    double pp_transfer_us = 0, pp_transfers_per_step = 0;
    int dp_group = 1, dp_expert_group = 1;
    double dp_gradient_bytes_per_gpu = 0;
    std::string dp_mode;
    double dp_allreduce_one_shot_ms = 0, dp_allreduce_one_shot_intra_node_ms = 0, dp_inter_over_intra = 1;
    double dp_sync_ms = 0, dp_exposed_ms = 0, dp_overlap_pct = 0, dp_comm_to_compute_ratio = 0;
  } communication;

  struct PerLayer {
    double attention_core_fwd_ms = 0, attention_core_bwd_ms = 0, attention_core_fwd_bwd_ms = 0;
    double attention_block_fwd_bwd_ms = 0, mlp_block_fwd_bwd_ms = 0, mlp_flops = 0, mlp_achieved_tflops = 0;
    double layer_fwd_bwd_ms = 0, layer_iteration_ms = 0, attention_share_of_compute_pct = 0;
  } per_layer;

  struct Memory {
    int rank = 0;
    double capacity_GiB = 0, params_GiB = 0, grads_GiB = 0, optimizer_states_GiB = 0;
    double activations_GiB = 0, activations_stored_GiB = 0, activations_working_GiB = 0;
    double temporary_GiB = 0, logits_GiB = 0, runtime_overhead_GiB = 0, total_GiB = 0, free_GiB = 0;
    bool fits = false;
    double overflow_GiB = 0;
    int64_t max_micro_batch = 0;
    int64_t max_micro_batch_none = 0, max_micro_batch_selective = 0, max_micro_batch_full = 0;  // by recompute policy
    double host_optimizer_states_GiB = 0;
    int64_t peak_micro_batches_in_flight = 0;
  } memory_per_gpu;

  // Time, energy and cost to train (when training.tokens_to_train is given).
  struct Run {
    double tokens_to_train = 0, time_s = 0, time_hours = 0, time_days = 0, gpu_hours = 0;
    double average_power_W_per_gpu = 0, energy_MWh = 0, pue = 1, gpu_hour_usd = 0;
    std::optional<double> cost_usd;  // with a GPU-hour price
  };
  std::optional<Run> training_run;

  // Operator breakdown of one micro-batch (whole model, one GPU's shard).
  BreakdownAccumulator forward, backward, recompute;
  std::vector<PricedOperator> communication_parts;
};

// A compare variant: the variant's own run and its ratios to the base.
struct TrainCompareVariant {
  std::string label;
  TrainRunResult run;
  double base_over_variant_throughput = 0, variant_over_base_memory = 0, variant_over_base_activations = 0;
};

// One point of the scaling curve.
struct TrainScalingPoint {
  int dp = 1, gpus = 0, nodes = 1;
  int64_t micro_batches_per_step = 0, global_batch_size = 0;
  double step_time_ms = 0, tokens_per_s = 0, tokens_per_s_per_gpu = 0, speedup = 0, ideal_speedup = 0;
  double efficiency_pct = 0, mfu_pct = 0, exposed_dp_comm_ms = 0, bubble_ms = 0, memory_per_gpu_GiB = 0;
  bool fits = false;
};

struct TrainingResult {
  TrainRunResult base;
  std::vector<TrainCompareVariant> compare;
  struct Scaling {
    std::string axis, mode;
    std::vector<TrainScalingPoint> points;
    double final_efficiency_pct = 0;
  };
  std::optional<Scaling> scaling;
  std::optional<std::string> does_not_fit_path, does_not_fit_message;  // the base configuration's
  std::vector<std::string> warnings;
  KeyMetrics key_metrics;
};

// The value of training metric `id` (scenario/metric_catalogue.hpp names them)
// in a result, or Missing when the result has no such figure. `run` alone
// (whole == nullptr) answers for a compare variant, which has no compare or
// scaling figures.
KeyMetric training_key_metric(const std::string& id, const TrainRunResult& run, const TrainingResult* whole);
KeyMetrics training_key_metrics(const std::vector<std::string>& ids, const TrainRunResult& run,
                                const TrainingResult* whole);

// The scenario's key metrics as a compare variant has them (those about
// compare/scaling, which a variant lacks, left out).
KeyMetrics variant_key_metrics(const TrainingResult& whole, const TrainCompareVariant& variant);

// The result's headline cards (catalogue ids, in order): the time to train
// among them where the scenario gives tokens to train.
std::vector<std::string> training_headline_ids(const TrainingResult& t);

json to_json(const TrainRunResult& r);
json to_json(const TrainingResult& r);

}  // namespace sightline
