// The operator constructors and names every step builder shares (the
// forward step, the indexer's work, the serving simulator's collectives).
#include "model/operators.hpp"

#include <cmath>
#include <utility>

namespace sightline {

namespace {

// MLA runs a sequence that already has a cache and brings at most this many
// new tokens (a decode, or a speculative verify: MTP's k + 1 tokens) in the
// latent space with the up-projections absorbed, as the decode kernels do:
// FlashMLA takes s_q query tokens per sequence for MTP/speculative decoding
// (github.com/deepseek-ai/FlashMLA, flash_mla_with_kvcache), and TensorRT-LLM
// prices draft tokens as generation tokens of its MLA generation kernel. The
// bound is the simulator's decode-step bound (serve kLowLatencyMaxTokensPerSeq).
constexpr int64_t kMlaLatentMaxNewTokens = 16;

}  // namespace

bool mla_latent_path(int64_t new_tokens, int64_t cached_tokens) {
  return cached_tokens > 0 && new_tokens >= 1 && new_tokens <= kMlaLatentMaxNewTokens;
}

std::string op_family_name(OpFamily f) {
  switch (f) {
    case OpFamily::Gemm: return "gemm";
    case OpFamily::AttentionPrefill: return "attention_prefill";
    case OpFamily::AttentionDecode: return "attention_decode";
    case OpFamily::Norm: return "norm";
    case OpFamily::Elementwise: return "elementwise";
    case OpFamily::Rope: return "rope";
    case OpFamily::KvCacheWrite: return "kv_cache_write";
    case OpFamily::Embedding: return "embedding";
    case OpFamily::MoeRouter: return "moe_router";
    case OpFamily::Collective: return "collective";
    case OpFamily::Sampling: return "sampling";
    case OpFamily::Host: return "host";
  }
  return "?";
}

std::string collective_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce: return "all_reduce";
    case CollectiveKind::AllGather: return "all_gather";
    case CollectiveKind::ReduceScatter: return "reduce_scatter";
    case CollectiveKind::AllToAll: return "all_to_all";
    case CollectiveKind::SendRecv: return "send_recv";
    case CollectiveKind::Broadcast: return "broadcast";
  }
  return "?";
}

Operator make_gemm_operator(std::string name, double count, int64_t m, int64_t n, int64_t k,
                            double act_bytes, double weight_bytes, Dtype compute_dtype, bool bias,
                            double dequant_ops_per_weight) {
  Operator op;
  set_gemm_operator(op, name, count, m, n, k, act_bytes, weight_bytes, compute_dtype, bias, dequant_ops_per_weight);
  return op;
}

void set_operator_name(Operator& op, std::string_view name) {
  // A builder that reuses its list finds most slots already holding this
  // name: compared first, inline (a memcmp call per operator cost more than
  // the copy, natively; the copy, string's assign and a memmove, costs more
  // than an inline compare in wasm: 3% of a 100k-request run's samples).
  if (same_operator_name(op.name, name)) return;
  op.name.assign(name.data(), name.size());
}

void set_gemm_operator(Operator& op, std::string_view name, double count, int64_t m, int64_t n, int64_t k,
                       double act_bytes, double weight_bytes, Dtype compute_dtype, bool bias,
                       double dequant_ops_per_weight) {
  set_operator_name(op, name);
  op.family = OpFamily::Gemm;
  op.count = count;
  op.m = m;
  op.n = n;
  op.k = k;
  op.compute_dtype = compute_dtype;
  op.weight_dtype = compute_dtype;  // a weight-only format is set by its builder
  op.flops = 2.0 * m * n * k + (bias ? static_cast<double>(m) * n : 0.0);
  op.bytes = static_cast<double>(m) * k * act_bytes + static_cast<double>(k) * n * weight_bytes +
             static_cast<double>(m) * n * act_bytes;
  op.dequant_ops = dequant_ops_per_weight * static_cast<double>(k) * static_cast<double>(n);
  op.weight_bytes = static_cast<double>(k) * n * weight_bytes;
}

Operator make_routed_expert_gemm(std::string_view name, const MoeLoad& load, int64_t n, int64_t k, double act_bytes,
                                 Dtype compute_dtype, Dtype weight_dtype) {
  const double w = dtype_bytes(weight_dtype);
  const auto rows = static_cast<int64_t>(std::ceil(load.tokens_per_expert));
  Operator op;
  set_gemm_operator(op, name, 1, rows, n, k, act_bytes, w, compute_dtype, false,
                    weight_dtype != compute_dtype ? kDequantOpsPerWeight : 0.0);
  op.role = OpRole::ExpertGemm;
  op.weight_dtype = weight_dtype;
  make_grouped_expert_gemm(op, load.experts_hit, load.assignments, act_bytes, w, false, load.routed_tokens, load.expert_p);
  return op;
}

void make_grouped_expert_gemm(Operator& op, double experts_hit, double assignments, double act_bytes,
                              double weight_bytes_per_element, bool bias, int64_t row_trials, double row_p) {
  const double weights = static_cast<double>(op.k) * static_cast<double>(op.n);
  const double dequant_per_expert = op.dequant_ops;
  op.groups = experts_hit;
  op.flops = 2.0 * assignments * weights + (bias ? assignments * static_cast<double>(op.n) : 0.0);
  op.weight_bytes = experts_hit * weights * weight_bytes_per_element;
  op.bytes = op.weight_bytes + assignments * static_cast<double>(op.k + op.n) * act_bytes;
  op.dequant_ops = dequant_per_expert * experts_hit;
  op.group_row_trials = row_trials;
  op.group_row_p = row_trials > 0 ? row_p : 0;
}

void mark_block_scaled_fp8_output(Operator& op, double output_elements, double counted_bytes_per_element) {
  constexpr double kBf16Bytes = 2.0;
  op.bytes += output_elements * (kBf16Bytes - counted_bytes_per_element);
  op.serial_bytes = output_elements * kBf16Bytes;
}

Operator make_memory_operator(std::string name, OpFamily family, double count, double bytes, double flops,
                              Dtype dtype) {
  Operator op;
  set_memory_operator(op, name, family, count, bytes, flops, dtype);
  return op;
}

void set_memory_operator(Operator& op, std::string_view name, OpFamily family, double count, double bytes,
                         double flops, Dtype dtype) {
  set_operator_name(op, name);
  op.family = family;
  op.count = count;
  op.bytes = bytes;
  op.flops = flops;
  op.compute_dtype = dtype;
}

Operator make_collective_operator(std::string name, CollectiveKind kind, double count, double message_bytes,
                                  int group, Dtype dtype) {
  Operator op;
  set_collective_operator(op, name, kind, count, message_bytes, group, dtype);
  return op;
}

void set_collective_operator(Operator& op, std::string_view name, CollectiveKind kind, double count,
                             double message_bytes, int group, Dtype dtype) {
  set_memory_operator(op, name, OpFamily::Collective, count, message_bytes, 0, dtype);
  op.collective = kind;
  op.group_size = group;
  op.message_bytes = message_bytes;
}

int64_t BatchShape::total_new_tokens() const {
  int64_t t = 0;
  for (const auto& s : seqs) t += s.new_tokens;
  return t;
}

}  // namespace sightline
