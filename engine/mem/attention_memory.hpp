#pragma once
// Activation memory the attention core keeps for the backward pass, per layer.
// FlashAttention saves only its output and the softmax log-sum-exp (linear in
// tokens); standard attention also saves the score and probability matrices
// (quadratic in sequence length).
#include <cstdint>

#include "model/operators.hpp"

namespace sightline {

double attention_saved_bytes(AttentionImpl impl, int64_t batch, int64_t seq, int heads, int64_t head_dim,
                             double act_bytes);

}  // namespace sightline
