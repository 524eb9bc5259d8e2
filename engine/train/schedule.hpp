#pragma once
// Pipeline schedule simulation: every forward and backward pass of every
// micro-batch on every pipeline rank, in the order GPipe, 1F1B or interleaved
// 1F1B issues them, each starting when its rank is free and its input has
// arrived from the neighbouring stage. Bubble, warm-up and cool-down are what
// comes out; nothing is a closed formula. Each rank also has a communication
// stream for data-parallel gradient buckets, which overlap the backward passes
// that produce them.
#include <cstdint>
#include <vector>

#include "scenario/training_spec.hpp"

namespace sightline {

struct GradBucket {
  double ready_offset_s = 0;  // from the start of the backward pass that produces it
  double time_s = 0;          // on the communication stream
  double bytes = 0;           // its gradient bytes (for the report)
};

struct ScheduleInput {
  PipelineSchedule kind = PipelineSchedule::OneFOneB;
  int pp = 1;
  int virtual_stages = 1;
  int64_t micro_batches = 1;
  // Per model chunk j = c·pp + d (chunk c on rank d): pass durations and the
  // activation bytes one micro-batch leaves stored until its backward.
  std::vector<double> fwd_s, bwd_s, act_bytes;
  // Transfer delay between model chunk j and j+1 (forward activations) and
  // back (gradients); size chunks - 1.
  std::vector<double> p2p_fwd_s, p2p_bwd_s;
  // Gradient buckets of each chunk, issued when its backward produces them.
  std::vector<std::vector<GradBucket>> buckets;
  bool sync_every_micro_batch = false;  // ZeRO-2: reduce-scatter each micro-batch, not only the last
  bool overlap_grad_sync = true;        // false: buckets wait for the rank's last backward
};

// One simulated pass, kept for drawing the schedule.
struct PassRecord {
  int chunk = 0;      // local model chunk on the rank (interleaved schedules)
  int64_t micro = 0;
  bool forward = true;
  double start_s = 0, end_s = 0;
};

// Schedules up to this many passes keep every pass for the timeline; larger
// ones keep only the per-rank totals, so results stay small.
inline constexpr int64_t kMaxRecordedPasses = 4096;

struct RankTimeline {
  double busy_s = 0;         // forward + backward time
  double end_s = 0;          // last pass ends
  double comm_end_s = 0;     // gradient buckets done
  double comm_total_s = 0;   // gradient bucket time (overlapped or not)
  double peak_act_bytes = 0; // activations held at the worst moment
  int64_t peak_in_flight = 0;  // micro-batch chunks held at the worst moment
  // When the rank starts the first forward of each of its model chunks (the
  // first micro-batch): a distributed optimizer's parameter all-gather for
  // that chunk must have arrived by then. Per local chunk; -1 until it runs.
  std::vector<double> first_forward_start_s;
  std::vector<PassRecord> passes;  // empty when the schedule exceeds kMaxRecordedPasses
};

class PipelineSimulation {
 public:
  explicit PipelineSimulation(ScheduleInput in);
  // Simulates at most `max_passes` passes; returns true once the schedule is done.
  bool advance(int64_t max_passes);
  bool done() const { return scheduled_ == total_; }
  int64_t total_passes() const { return total_; }
  int64_t scheduled_passes() const { return scheduled_; }
  double makespan_s() const;  // last pass on any rank
  const std::vector<RankTimeline>& ranks() const { return ranks_; }
  const ScheduleInput& input() const { return in_; }

 private:
  struct Pass {
    int chunk = 0;  // local chunk index on the rank
    int64_t micro = 0;
    bool forward = true;
  };
  void build_orders();
  bool try_schedule(int rank);

  ScheduleInput in_;
  int chunks_ = 1;  // model chunks = pp · virtual_stages
  std::vector<std::vector<Pass>> order_;
  std::vector<size_t> next_;
  std::vector<double> rank_free_;
  std::vector<double> fwd_end_, bwd_end_;  // per (model chunk, micro-batch); < 0 until done
  std::vector<double> act_now_;
  std::vector<int64_t> in_flight_now_;
  std::vector<std::vector<int64_t>> bwd_count_;  // backward passes done per rank and local chunk
  std::vector<RankTimeline> ranks_;
  int64_t total_ = 0;
  int64_t scheduled_ = 0;
};

// Bubble fraction of the plain formula (pp - 1) / (m·v + pp - 1), for comparison.
double bubble_formula(int pp, int virtual_stages, int64_t micro_batches);

}  // namespace sightline
