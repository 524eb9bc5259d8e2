#pragma once
// One training configuration estimated end to end: the micro-batch priced per
// layer, model chunks composed (with FSDP all-gathers / reduce-scatters
// overlapped layer by layer), the pipeline schedule simulated with gradient
// buckets overlapping the backward passes, then the optimizer step, memory per
// GPU by category, throughput, MFU/HFU and time-to-train. Sliced: setup, the
// schedule in chunks of passes, and a final unit.
#include <memory>

#include "core/json_reader.hpp"
#include "perf/cost_setup.hpp"
#include "scenario/scenario.hpp"
#include "train/activations.hpp"
#include "train/micro_batch.hpp"
#include "train/placement.hpp"
#include "train/schedule.hpp"
#include "train/step_explained.hpp"
#include "train/training_result.hpp"

namespace sightline {

class TrainRun {
 public:
  // `scenario` must stay alive and unmoved while the run exists.
  explicit TrainRun(const Scenario& scenario);
  ~TrainRun();
  int64_t total_units() const;
  int64_t done_units() const { return done_units_; }
  // Does at most `budget` units (decremented); returns true once finished.
  bool advance(int64_t& budget);
  bool done() const { return finished_; }
  // The configuration's typed result (kind "training"); valid once done.
  const TrainRunResult& result() const { return result_; }
  // The step taken apart by mechanism (train/step_explained.hpp); valid once done.
  const TrainStepExplained& explained() const { return explained_; }

 private:
  // The work unit before the schedule (estimator.cpp): the micro-batch priced
  // per layer, composed into model chunks, and the pipeline schedule set up.
  void setup();
  void lay_out_chunks();
  std::vector<const ItemCost*> chunk_items(int j, const LayerActivations (&la)[2], double head_act_bytes);
  void add_item_totals(int j, const std::vector<const ItemCost*>& items);
  void compose_with_fsdp(int j, const std::vector<const ItemCost*>& items);
  std::vector<GradBucket> gradient_buckets(const std::vector<const ItemCost*>& items, bool bucketed) const;
  void add_pipeline_transfers(ScheduleInput& in) const;

  // The work unit after the schedule (estimator_finish.cpp): each rank's
  // step, the step's figures, then the typed result written section by section.
  struct OptimizerPricer;
  struct RankSummary;
  struct StepFigures;
  void finish();
  RankSummary summarize_rank(int d, const OptimizerPricer& opt) const;
  void price_rank_step(RankSummary& r, int d, double n_local, const OptimizerPricer& opt) const;
  void add_rank_memory(RankSummary& r, int d, double n_local, const OptimizerPricer& opt) const;
  StepFigures step_figures(const std::vector<RankSummary>& rs, double step, const OptimizerPricer& opt) const;
  void add_throughput(StepFigures& f, const std::vector<RankSummary>& rs) const;
  void add_memory_headroom(StepFigures& f, const RankSummary& rm) const;
  void add_comm_summary(StepFigures& f, const RankSummary& rb) const;
  void write_deployment();
  void write_metrics_and_breakdown(const StepFigures& f, const RankSummary& rb);
  void write_pipeline(const StepFigures& f, const std::vector<RankSummary>& rs);
  void write_communication(const StepFigures& f, const RankSummary& rb);
  void write_per_layer(const StepFigures& f, const RankSummary& rb);
  void write_memory(const StepFigures& f, const RankSummary& rm);
  void write_training_run(const StepFigures& f);
  // estimator_explain.cpp: the step by mechanism, while the schedule is still held.
  void explain_step(const StepFigures& f, const RankSummary& rb);
  void explain_compute(const RankSummary& rb, double mb);
  void explain_data_parallel(const StepFigures& f, const RankSummary& rb);
  void explain_network(const RankSummary& rb);

  struct Chunk {
    double fwd_s = 0, bwd_s = 0;
    CatTimes fwd_cat{}, bwd_cat{};
    double flops = 0, recompute_flops = 0, model_flops = 0;
    double act_bytes = 0, transient_bytes = 0;
    double params_dense = 0, params_expert = 0, frozen_bytes = 0, fp8_params = 0;
    double largest_item_params = 0, largest_item_grads = 0;
    double tp_s = 0, tp_ag_s = 0, ep_s = 0, cp_s = 0;
    double fsdp_s = 0;  // FSDP all-gather + reduce-scatter time of one micro-batch (before overlap)
    int layers = 0;
    bool has_head = false, has_embedding = false;
  };

  const Scenario& s_;
  CostSetup setup_;
  std::unique_ptr<CommPricer> comm_;
  TrainGroups groups_;
  std::unique_ptr<MicroBatchModel> mb_;
  std::unique_ptr<PipelineSimulation> sim_;
  std::vector<Chunk> chunks_;
  std::vector<int> chunk_first_layer_, chunk_layers_;  // per model chunk
  int64_t done_units_ = 0;
  bool setup_done_ = false;
  bool finished_ = false;
  TrainRunResult result_;
  TrainStepExplained explained_;
};

}  // namespace sightline
