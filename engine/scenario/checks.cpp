#include "scenario/checks.hpp"

#include "core/error.hpp"

namespace sightline {

namespace {

void check_heads(int heads, int kv_heads, bool mla, int tp, const std::string& tp_path, const std::string& which) {
  if (heads % tp != 0)
    fail(error_code::kConstraint, tp_path,
         "tp (" + std::to_string(tp) + ") must divide " + which + "num_heads (" + std::to_string(heads) + ")");
  if (!mla) {
    const bool divides = kv_heads % tp == 0;
    const bool replicates = tp % kv_heads == 0;
    if (!divides && !replicates)
      fail(error_code::kConstraint, tp_path,
           "tp (" + std::to_string(tp) + ") must divide " + which + "num_kv_heads (" + std::to_string(kv_heads) +
               ") or be a multiple of it (KV heads are then replicated)");
  }
}

}  // namespace

void check_tensor_parallel(const ModelArch& m, int tp, const std::string& tp_path) {
  check_heads(m.num_heads, m.num_kv_heads, m.mla.enabled, tp, tp_path, "");
  // Layer kinds with a head shape of their own (model/architecture.hpp AttentionShape).
  for (const LayerGroup& g : m.layer_groups())
    if (g.kind.shape.given())
      check_heads(g.kind.shape.heads, g.kind.shape.kv_heads, false, tp, tp_path, "the layer kind's attention_shape ");
}

}  // namespace sightline
