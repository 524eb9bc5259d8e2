// The step builder's attention cores (step_builder.hpp): the one pass over a
// step's sequences that reads each one's cached length, split into the
// prefills' and the decodes' kernels.
#include <algorithm>
#include <cmath>

#include "model/sparse_index_ops.hpp"
#include "model/step_builder.hpp"

namespace sightline::step_building {

namespace {

// Query-key pairs of `q` new tokens after `past` cached ones, when each
// token sees at most `cap` keys (0: no cap), itself included.
double capped_causal_pairs(double q, double past, double cap) {
  if (cap <= 0 || past + q <= cap) return q * past + q * (q + 1) / 2;
  if (past >= cap) return q * cap;
  const double j = cap - past;  // tokens that still see the whole past
  return j * past + j * (j + 1) / 2 + (q - j) * cap;
}

}  // namespace

// One decode's flops and bytes (one query row per head, or a verify's k + 1,
// over the sequence's cache, read once); its attended keys returned.
double StepBuilder::add_decode_core_term(double q, double kv_len, int64_t topk, double& flops, double& bytes) const {
  // MLA decode runs in the latent space (weights absorbed): one shared
  // latent "head" of width kv_lora + rope.
  const bool mla = m_.mla.enabled;
  const double qk = mla ? m_.mla.kv_lora_rank + m_.mla.qk_rope_head_dim : attn_.qk;
  const double v = mla ? m_.mla.kv_lora_rank : attn_.v;
  const double kv_heads = mla ? 1 : attn_.kv_heads;
  const double heads = attn_.heads;
  // Under DSA over the top-k entries the indexer picked, gathered (FlashMLA's sparse decode).
  const double keys = dsa_attended_keys(kv_len, topk);
  flops += q * heads * keys * 2.0 * (qk + v);
  bytes += keys * kv_heads * (mla ? qk : qk + v) * dtype_bytes(p_.kv_cache) + 2.0 * q * heads * qk * act_bytes_;
  return keys;
}

// The sums add_decode_core_term makes over `n` one-token decodes of
// `keys` cached-plus-new tokens in all (no window, top-k or MLA), from the
// two counts. Exact: when every factor is a whole number but the byte
// sizes, those are multiples of 2^-16, and the sums stay under 2^36, every
// term and partial sum is a double exactly, so any order of adding them
// gives the same bits. False (nothing written) when that does not hold.
bool StepBuilder::plain_decode_core_sums(int64_t keys, int64_t n, double& flops, double& bytes) const {
  const double heads = attn_.heads, kv_heads = attn_.kv_heads, qk = static_cast<double>(attn_.qk);
  const double v = static_cast<double>(attn_.v), kv_b = dtype_bytes(p_.kv_cache);
  // x a whole number of 2^-16: x * 2^16 is std::ldexp(x, 16) exactly (a
  // power of two only moves the exponent), and a whole number below 2^62 is
  // its own int64 conversion. Without the library's ldexp and floor (called
  // per step: 1.5% of a 1M run's samples); a factor past 2^46 fails the
  // bounds below either way.
  auto sixteenths = [](double x) {
    const double y = x * 65536.0;
    return x >= 0 && y < 0x1p62 && static_cast<double>(static_cast<int64_t>(y)) == y;
  };
  // Factors of at least 1 (a later 0 would hide a large earlier product).
  if (!(heads >= 1 && kv_heads >= 1 && qk >= 1 && v >= 0) || !sixteenths(kv_b) || !sixteenths(act_bytes_)) return false;
  constexpr double kBound = 68719476736.0;  // 2^36
  const double k = static_cast<double>(keys);
  const double f = heads * k * 2.0 * (qk + v);
  const double kv_elems = k * kv_heads * (qk + v), q_elems = static_cast<double>(n) * 2.0 * heads * qk;
  if (!(k < kBound && f < kBound && kv_elems < kBound && q_elems < kBound && kv_elems * kv_b < kBound &&
        q_elems * act_bytes_ < kBound))
    return false;
  flops = f;
  bytes = kv_elems * kv_b + q_elems * act_bytes_;
  return true;
}

// `topk` > 0: a DSA layer, whose queries attend only to the indexer's top-k keys.
void StepBuilder::add_attention_core(double layers, int64_t cap_tokens, int64_t topk) {
  if (reuse_) out_.reuse.cores.push_back({used_, layers, cap_tokens, topk, attn_.heads, attn_.kv_heads, attn_.qk, attn_.v, attn_.k_eq_v});
  // Split the batch into sequences still in prefill and pure decodes.
  double prefill_flops = 0, prefill_bytes = 0, decode_flops = 0, decode_bytes = 0;
  int64_t prefill_q = 0, prefill_kv = 0, decode_q = 0, decode_kv = 0, prefill_seqs = 0, decode_seqs = 0;
  const bool mla = m_.mla.enabled;
  const double heads = attn_.heads;
  const double kv_b = dtype_bytes(p_.kv_cache);
  const double cap = static_cast<double>(cap_tokens);
  // One-token decodes with no window, top-k or MLA are counted as whole
  // numbers in the pass over the batch and their sums made once after it
  // (plain_decode_core_sums); the pass over a step's sequences was 9% of a
  // serving run's samples, its floating-point sums most of it.
  const bool plain = cap_tokens <= 0 && topk <= 0 && !mla;
  int64_t plain_keys = 0, plain_seqs = 0;
  // A batch of such decodes only (besides sequences with no new token,
  // which no operator counts) is read from its summary, without a pass.
  const bool from_summary = plain && summary_.prefills == 0;
  if (from_summary) {
    plain_keys = summary_.decode_keys;
    plain_seqs = summary_.decodes;
  }
  const size_t passed = from_summary ? 0 : batch_.seqs.size();
  for (size_t i = 0; i < passed; ++i) {
    const SeqChunk& s = batch_.seqs[i];
    if (plain && s.new_tokens == 1 && s.cached_tokens > 0) {
      plain_keys += s.cached_tokens + 1;
      ++plain_seqs;
      continue;
    }
    const double q = static_cast<double>(s.new_tokens);
    // A sliding window or a chunk keeps at most `cap` tokens in the cache.
    const double past = cap > 0 ? std::min(static_cast<double>(s.cached_tokens), cap) : static_cast<double>(s.cached_tokens);
    const double kv_len = cap > 0 && s.new_tokens == 1 ? std::min(past + q, cap) : past + q;
    if ((s.new_tokens == 1 && s.cached_tokens > 0) || (mla && mla_latent_path(s.new_tokens, s.cached_tokens))) {
      decode_kv += static_cast<int64_t>(add_decode_core_term(q, kv_len, topk, decode_flops, decode_bytes));
      decode_q += s.new_tokens;
      decode_seqs += 1;
    } else {
      const double qk = static_cast<double>(attn_.qk);
      const double v = static_cast<double>(attn_.v);
      const double kv_heads = mla ? heads : attn_.kv_heads;
      // Causal pairs: each new token attends to the past and to the new tokens before it.
      const double causal_pairs = capped_causal_pairs(q, past, cap > 0 ? cap : static_cast<double>(topk));
      const double full_pairs = q * kv_len;
      const double pairs = attention_ == AttentionImpl::Flash ? causal_pairs : full_pairs;
      prefill_flops += heads * pairs * 2.0 * (qk + v);
      double bytes = q * heads * (qk + v) * act_bytes_ + kv_len * kv_heads * (qk + v) * kv_b;
      if (attention_ == AttentionImpl::Standard) {
        // Scores are materialized: S written, read by softmax, P written, read by P·V.
        bytes += 4.0 * heads * full_pairs * act_bytes_;
      }
      prefill_bytes += bytes;
      prefill_q += s.new_tokens;
      prefill_kv += static_cast<int64_t>(past) + s.new_tokens;
      prefill_seqs += 1;
    }
  }
  if (plain_seqs > 0) {  // plain: every decode of the batch is one of them
    if (!plain_decode_core_sums(plain_keys, plain_seqs, decode_flops, decode_bytes)) {
      for (const auto& s : batch_.seqs)
        if (s.new_tokens == 1 && s.cached_tokens > 0)
          add_decode_core_term(1.0, static_cast<double>(s.cached_tokens) + 1.0, 0, decode_flops, decode_bytes);
    }
    decode_q += plain_seqs;
    decode_seqs += plain_seqs;
    decode_kv += plain_keys;
  }
  if (prefill_q > 0) {
    Operator& op = attention_op("attn_prefill", OpFamily::AttentionPrefill, layers, prefill_flops, prefill_bytes,
                                prefill_q, prefill_kv, prefill_seqs, mla ? attn_.heads : attn_.kv_heads,
                                attn_.qk, attn_.v);
    op.attention_impl = attention_;
  }
  if (decode_q > 0) {
    // MLA decode attends in the latent space: one shared "head" of width kv_lora + rope.
    Operator& op = attention_op("attn_decode", OpFamily::AttentionDecode, layers, decode_flops, decode_bytes, decode_q,
                                decode_kv, decode_seqs, mla ? 1 : attn_.kv_heads,
                                mla ? m_.mla.kv_lora_rank + m_.mla.qk_rope_head_dim : attn_.qk,
                                mla ? m_.mla.kv_lora_rank : attn_.v);
    if (!mla) op.role = OpRole::HeadDecode;
  }
}

}  // namespace sightline::step_building
