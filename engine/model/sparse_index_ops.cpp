#include "model/sparse_index_ops.hpp"

#include <algorithm>

namespace sightline {

IndexerStep indexer_step(const ModelArch& m, const BatchShape& batch, double layers, Dtype activations, bool training) {
  IndexerStep out;
  const SparseIndexSpec& s = m.sparse_index;
  const double act_b = dtype_bytes(activations);
  const int64_t t = batch.total_new_tokens();
  if (!s.enabled() || t <= 0) return out;
  const double td = static_cast<double>(t);
  const double heads = s.heads;
  const double d = static_cast<double>(s.head_dim);
  const double key_b = s.key_bytes_per_token();
  const int64_t q_in = m.mla.enabled && m.mla.q_lora_rank > 0 ? m.mla.q_lora_rank : m.hidden_size;
  // q from the query latent (wq_b), one key from the hidden state (wk), one weight per head (weights_proj).
  out.gemms.push_back({"indexer_q_proj", t, s.heads * s.head_dim, q_in});
  out.gemms.push_back({"indexer_k_proj", t, s.head_dim, m.hidden_size});
  out.gemms.push_back({"indexer_weights_proj", t, s.heads, m.hidden_size});
  // k_norm, rope on the first qk_rope_head_dim channels, the Hadamard rotation
  // (d log2 d) and block FP8 quantization of q and k: one pass over them.
  const double qk_elements = td * (heads + 1.0) * d;
  out.ops.push_back(make_memory_operator("indexer_rope_quant", OpFamily::Elementwise, layers,
                                         qk_elements * (act_b + 1.0), qk_elements * 16.0, activations));
  if (!training) {
    Operator w = make_memory_operator("indexer_k_cache_write", OpFamily::KvCacheWrite, layers, td * key_b, 0, Dtype::FP8);
    out.ops.push_back(w);
  }
  // Scoring: per query row, sum over heads of w_h * ReLU(q_h . k) for every
  // visible key, in FP8 on the tensor cores (DeepGEMM's fp8_mqa_logits), fp32
  // logits out; then the top-k of those logits (int32 indices).
  double dec_flops = 0, dec_bytes = 0, pre_flops = 0, pre_bytes = 0, logits = 0, picked = 0;
  int64_t dec_q = 0, dec_kv = 0, dec_seqs = 0, pre_q = 0, pre_kv = 0, pre_seqs = 0;
  for (const SeqChunk& c : batch.seqs) {
    if (c.new_tokens <= 0) continue;
    const double q = static_cast<double>(c.new_tokens);
    const double past = static_cast<double>(c.cached_tokens);
    const double keys = past + q;
    // Query-key pairs: every new token scores the past and the new tokens up to itself.
    const double pairs = q * past + q * (q + 1.0) / 2.0;
    const double flops = pairs * heads * (2.0 * d + 2.0);
    const double bytes = keys * key_b + q * heads * (d + 4.0) + pairs * 4.0;
    logits += pairs;
    picked += q * std::min(keys, static_cast<double>(s.topk));
    if (mla_latent_path(c.new_tokens, c.cached_tokens)) {
      dec_flops += flops, dec_bytes += bytes, dec_q += c.new_tokens, dec_kv += static_cast<int64_t>(keys), dec_seqs += 1;
    } else {
      pre_flops += flops, pre_bytes += bytes, pre_q += c.new_tokens, pre_kv += static_cast<int64_t>(keys), pre_seqs += 1;
    }
  }
  auto score = [&](const char* name, OpFamily family, double flops, double bytes, int64_t q, int64_t kv, int64_t seqs) {
    Operator op = make_memory_operator(name, family, layers, bytes, flops, Dtype::FP8);
    op.q_tokens = q, op.kv_tokens = kv, op.seqs = seqs;
    op.heads = s.heads, op.kv_heads = 1, op.qk_dim = s.head_dim, op.v_dim = 0;
    out.ops.push_back(op);
  };
  if (dec_q > 0) score("indexer_score_decode", OpFamily::AttentionDecode, dec_flops, dec_bytes, dec_q, dec_kv, dec_seqs);
  if (pre_q > 0) score("indexer_score_prefill", OpFamily::AttentionPrefill, pre_flops, pre_bytes, pre_q, pre_kv, pre_seqs);
  // Top-k selection: the logits read once, the chosen indices written.
  out.ops.push_back(make_memory_operator("indexer_topk", OpFamily::Elementwise, layers, logits * 4.0 + picked * 4.0,
                                         logits * 4.0, Dtype::FP32));
  return out;
}

}  // namespace sightline
