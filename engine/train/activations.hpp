#pragma once
// Activation memory of training, tensor by tensor: what each layer keeps for
// its backward pass for one micro-batch on one GPU, as a function of the
// recomputation policy, tensor/sequence/context parallelism, FP8 storage of
// GEMM inputs and which weights are trainable (a frozen linear layer needs no
// saved input). Bytes.
#include "scenario/scenario.hpp"

namespace sightline {

struct LayerActivations {
  double stored = 0;        // kept until the backward pass, layer not checkpointed
  double checkpointed = 0;  // kept when the layer is fully recomputed (its input only)
  double full = 0;          // kept with no recomputation at all
  double transient = 0;     // extra working memory while the layer runs backward (recompute, scores)
};

// `moe_layer`: a mixture-of-experts layer; `rc` may differ from the config's
// (to report the max micro-batch under other policies).
LayerActivations layer_activations(const Scenario& s, const TrainConfig& c, bool moe_layer, const RecomputeSpec& rc);

// Final norm input/output kept for the LM head's backward, per micro-batch.
double head_activation_bytes(const Scenario& s, const TrainConfig& c);

// Logits, fp32 probabilities and their gradient on the last stage (transient).
double logits_buffer_bytes(const Scenario& s, const TrainConfig& c);

}  // namespace sightline
