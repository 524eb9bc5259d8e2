// How a step's quantized weights are stored: bytes per weight under a
// precision, and a checkpoint's own layout (unquantized modules, zero points)
// applied to a precision. Shared by the step's GEMMs, the memory accounting and
// inspect-model, so the three price the same bytes.
#include "model/operators.hpp"

namespace sightline {

double weight_storage_bytes(const Precision& p) {
  return is_integer_weight_only(p.weights) ? dtype_bytes(p.weights, p.weight_group_size, p.weight_zero_point)
                                           : dtype_bytes(p.weights);
}

void apply_checkpoint_layout(const CheckpointQuant& q, Precision& p) {
  if (q.group_size > 0) p.weight_group_size = q.group_size;
  p.weight_zero_point = q.zero_point;
  p.mixer_weights_unquantized = q.attention_excluded;
  p.mixer_out_quantized = q.attention_out_quantized;
  p.dense_ffn_weights_unquantized = q.dense_ffn_excluded;
}

}  // namespace sightline
