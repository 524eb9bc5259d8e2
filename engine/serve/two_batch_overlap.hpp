#pragma once
// Two-batch overlap (SGLang --enable-two-batch-overlap; the scenario's
// serving.moe.two_batch_overlap): how a step splits into two micro-batches,
// and the step's GPU time when one micro-batch's EP all-to-all travels while
// the other computes. The simulator's step pricing and the CLI's step
// decomposition (explain-step) both price it here.
#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "model/operators.hpp"
#include "perf/step_cost.hpp"

namespace sightline::serve {

// The two micro-batches of `shape`, their stages interleaved on one stream as
// SGLang runs them (sgl-project/sglang python/sglang/srt/two_batch_overlap.py
// and batch_overlap/operations_strategy.py at 0e02cef9). A decode step splits
// its sequences in half by count; any other step at the sequence where the
// new tokens first reach half their sum. `a` and `b` are left empty (false)
// with fewer than two sequences: one sequence runs as one batch.
bool split_two_batches(const BatchShape& shape, BatchShape& a, BatchShape& b);

// What one micro-batch spends in the parts of a layer the overlap's stage
// plan places (Operator::stage, model/operators.hpp OpStage), per layer:
// dispatch and combine, gate, routed and shared experts per MoE layer, the
// attention's preparation and core averaged over every layer. What runs once
// per step, a dense layer's MLP and the residual adds hide nothing and are in
// `total_s` only. Read from the micro-batch's operators (their EP all-to-alls
// included) and their priced parts, in operator order (a host part after them
// is left out).
struct MicroBatchParts {
  double dispatch = 0, combine = 0, prep = 0, core = 0, gate = 0, routed = 0, shared = 0;
  double total_s = 0, all_to_all_s = 0, fp8_gemm_s = 0;
};
MicroBatchParts micro_batch_parts(const StepOperators& ops, const StepCost& cost, const ModelArch& m);

// One step's GPU time under two-batch overlap, from its two micro-batches'
// parts, and what it was made of.
struct TwoBatchOverlapTime {
  double gpu_s = 0;          // both micro-batches' kernels + the exposed all-to-all + the SM share
  double all_to_all_s = 0;   // both micro-batches' dispatch and combine, as priced
  double exposed_s = 0;      // of those, what no stage of the other micro-batch hid
  double sm_share_s = 0;     // GEMMs slowed by the SMs a normal-mode all-to-all holds (prefill)
};
// `decode`: the step's stage plan (is_decode_step of the whole step); `gpu`:
// its SM count and vendor (the SM share is NVIDIA's: SGLang leaves it unset on
// ROCm); `moe_layers`: the model's.
TwoBatchOverlapTime two_batch_overlap_time(const MicroBatchParts& a, const MicroBatchParts& b, bool decode,
                                           int moe_layers, const GpuSpec& gpu);

}  // namespace sightline::serve
