#pragma once
// Data-parallel communication as Megatron-LM's distributed data parallel
// (DDP) and distributed optimizer schedule it around the pipeline's passes.
//
// Gradient buckets (megatron/core/distributed/param_and_grad_buffer.py,
// megatron/training/training.py get_model, NVIDIA/Megatron-LM commit
// 86df799d): parameters are laid into buckets in the order the backward
// produces their gradients, each bucket up to `bucket_size`; a bucket's
// reduce-scatter (all-reduce without ZeRO) is issued once every gradient in
// it is ready, so the buckets of a chunk leave one after another while its
// backward runs and only the last one (holding the chunk's first layers) is
// issued when the backward ends. With interleaving, bucketing is turned off
// for a rank's model chunks after its first ("disable_bucketing =
// (model_chunk_idx > 0)": their whole gradient is one bucket, issued when
// their last micro-batch's backward ends).
//
// Parameter all-gather (`overlap_param_gather`, megatron/core/pipeline_parallel/
// schedules.py, NVIDIA/Megatron-LM commit 4dabc623): the next step's
// parameters are gathered chunk by chunk. The gather of a rank's first chunk
// is issued at the start of the step; the gather of chunk c+1 is issued when
// the rank starts chunk c's first forward ("launch param synchronization for
// next model chunk"), and within a bucketed chunk each bucket's gather is
// waited on by the forward pre-hook of its first module, so the forward needs
// its first bucket before it starts and the last one only when it reaches it.
#include <vector>

namespace sightline {

// One unit that produces gradients during a backward pass (a layer, the
// embedding, the head), in the order the backward runs them.
struct GradProducer {
  double bwd_s = 0;  // its backward time
  double bytes = 0;  // its gradient bytes
};

// A bucket: its bytes and when it is ready, from the start of the backward.
struct ReadyBucket {
  double ready_offset_s = 0;
  double bytes = 0;
};

// The buckets of one model chunk's gradients, `producers` in backward order.
// Each producer's bytes are taken as produced evenly over its backward (its
// weight-gradient GEMMs run through it), so a bucket that fills inside a
// producer is ready part-way through it. `one_bucket`: bucketing disabled
// (every byte in one bucket, ready at the end of the backward).
std::vector<ReadyBucket> gradient_bucket_schedule(const std::vector<GradProducer>& producers, double bucket_bytes,
                                                  bool one_bucket);

// One model chunk of a rank, for the parameter all-gather.
struct ChunkGather {
  double gather_s = 0;               // all-gather of the chunk's parameters (all its buckets)
  int buckets = 1;                   // gathers it is split into (forward pre-hooks wait on each)
  double first_forward_start_s = 0;  // when the rank starts the chunk's first forward
  double forward_s = 0;              // that forward's duration
};

// Time the forward passes wait on the parameter all-gathers, for a rank's
// chunks in order: the gathers run one after another on the data-parallel
// stream, chunk 0's issued at the step's start, chunk c's when chunk c-1's
// first forward starts; a chunk's first forward waits for its first bucket,
// then runs its buckets in order as they arrive (the first bucket of a gather
// issued when its forward starts is always exposed).
double exposed_parameter_gather_s(const std::vector<ChunkGather>& chunks);

}  // namespace sightline
