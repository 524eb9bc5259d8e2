#include "scenario/checks.hpp"

#include "core/error.hpp"

namespace sightline {

void check_tensor_parallel(const ModelArch& m, int tp, const std::string& tp_path) {
  if (m.num_heads % tp != 0)
    fail(error_code::kConstraint, tp_path,
         "tp (" + std::to_string(tp) + ") must divide num_heads (" + std::to_string(m.num_heads) + ")");
  if (!m.mla.enabled) {
    const bool divides = m.num_kv_heads % tp == 0;
    const bool replicates = tp % m.num_kv_heads == 0;
    if (!divides && !replicates)
      fail(error_code::kConstraint, tp_path,
           "tp (" + std::to_string(tp) + ") must divide num_kv_heads (" + std::to_string(m.num_kv_heads) +
               ") or be a multiple of it (KV heads are then replicated)");
  }
}

}  // namespace sightline
