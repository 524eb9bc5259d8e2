#pragma once
// inspect-model calls that must be read, or must be refused, for the Hugging Face
// import tests: one place for the envelope check and its message on failure.
#include <doctest/doctest.h>

#include <string>

#include "model/operators.hpp"
#include "test_helpers.hpp"

namespace sightline::test {

inline json inspect_ok(const std::string& text) {
  const json e = envelope(api::inspect_model(text));
  REQUIRE_MESSAGE(e["ok"] == true, e.dump().substr(0, 600));
  return e["result"];
}

inline json inspect_refused(const std::string& text) {
  const json e = envelope(api::inspect_model(text));
  REQUIRE_MESSAGE(e["ok"] == false, e.dump().substr(0, 300));
  return e["error"];
}

// Parameters (from the billions printed) and KV bytes per token of an inspect-model result.
inline double hf_params(const json& r, const char* part) { return r["params"][part].get<double>() * 1e9; }
inline double hf_kv(const json& r, const char* at) { return r["kv_cache"]["at"][at]["bytes_per_token"].get<double>(); }
inline double hf_weight_bytes(const json& r) { return r["weights"]["GiB"].get<double>() * 1073741824.0; }

// One layer of a Qwen3-MoE-style model, written out: GQA attention with QK norm (two head-width
// vectors) and no biases, `counted` SwiGLU experts of width `moe`, a router over `experts`, two
// RMSNorms. The tests add the embedding, the head and the final norm.
inline double qwen3_moe_layer(double h, double heads, double kv_heads, double d, double experts, double moe, double counted) {
  const double attention = h * (heads * d + 2 * kv_heads * d) + heads * d * h + 2 * d;
  return attention + counted * 3 * h * moe + h * experts + 2 * h;
}

// One sequence's prefill of `tokens` tokens on `tp` GPUs, bf16: the step's operators.
inline StepOperators prefill_step(const ModelArch& m, int64_t tokens, int tp) {
  BatchShape b;
  b.seqs.push_back({/*new_tokens*/ tokens, /*cached_tokens*/ 0});
  ParallelLayout layout;
  layout.tp = tp;
  return build_forward_step(m, Precision{}, layout, b, StepOptions{});
}

// The operator `name` of a step's list priced `count` times (one layer group's), or null.
inline const Operator* step_op(const StepOperators& s, const std::string& name, double count) {
  for (const Operator& op : s.ops)
    if (op.name == name && op.count == count) return &op;
  return nullptr;
}

}  // namespace sightline::test
