#include "model/kv_footprint.hpp"

#include <algorithm>

namespace sightline {

double attention_kv_elements_per_token(const ModelArch& m, int tp, const ModelLayer& kind) {
  // MLA caches the latent plus the shared rope key, replicated on every rank.
  if (m.mla.enabled) return static_cast<double>(m.kv_elements_per_token_per_layer());
  const AttentionShape a = m.attention_shape(kind);
  // Both K and V are cached, even when V comes from the key projection (k_eq_v:
  // V is normed without K's norm and rope, so the two differ).
  return static_cast<double>(kv_heads_per_gpu(a.kv_heads, tp)) * static_cast<double>(a.qk_head_dim + a.v_head_dim);
}

double recurrent_state_bytes(const ModelArch& m, const Precision& p) {
  if (!m.state_dtype.empty()) return dtype_bytes(parse_dtype(m.state_dtype));
  return dtype_bytes(p.activations == Dtype::FP8 ? Dtype::BF16 : p.activations);
}

namespace {

// Fixed state of one layer for one sequence, in elements, on one GPU.
double state_elements(const ModelArch& m, LayerMixer mixer, int tp) {
  if (mixer == LayerMixer::LinearAttention) {
    const auto& l = m.linear_attention;
    const double key_dim = static_cast<double>(l.num_key_heads) * l.key_head_dim;
    const double value_dim = static_cast<double>(l.num_value_heads) * l.value_head_dim;
    // Recurrent state dk × dv per value head, plus the conv window over q, k, v.
    const double recurrent = static_cast<double>(l.num_value_heads) * l.key_head_dim * l.value_head_dim;
    const double conv = (l.conv_kernel - 1.0) * (2.0 * key_dim + value_dim);
    return (recurrent + conv) / tp;
  }
  if (mixer == LayerMixer::Mamba) {
    const auto& s = m.ssm;
    const double d = static_cast<double>(s.inner_size);
    if (s.version == 2) {
      const double bc = 2.0 * s.n_groups * static_cast<double>(s.state_size);
      return (static_cast<double>(s.num_heads) * s.head_dim * s.state_size + (s.conv_kernel - 1.0) * (d + bc)) / tp;
    }
    return (d * s.state_size + (s.conv_kernel - 1.0) * d) / tp;
  }
  return 0;
}

}  // namespace

KvFootprint kv_footprint_per_gpu(const ModelArch& m, const Precision& p, int tp, double layer_fraction) {
  KvFootprint f;
  const double kv_b = dtype_bytes(p.kv_cache);
  const double state_b = recurrent_state_bytes(m, p);
  for (const LayerGroup& g : m.layer_groups()) {
    const double layers = g.count * layer_fraction;
    if (g.kind.mixer == LayerMixer::Attention) {
      // A DSA layer also keeps its indexer's key (FP8 with fp32 scales, whatever
      // the KV-cache dtype, replicated on every rank like MLA's latent).
      const double per_layer = attention_kv_elements_per_token(m, tp, g.kind) * kv_b +
                               (g.kind.indexer ? m.sparse_index.key_bytes_per_token() : 0.0);
      const int64_t cap = g.kind.kv_token_cap();
      if (cap <= 0) {
        f.unbounded_bytes_per_token += layers * per_layer;
        continue;
      }
      auto it = std::find_if(f.capped.begin(), f.capped.end(), [&](const CappedKv& c) { return c.cap_tokens == cap; });
      if (it == f.capped.end()) f.capped.push_back({cap, layers * per_layer});
      else it->bytes_per_token += layers * per_layer;
    } else {
      f.state_bytes_per_seq += layers * state_elements(m, g.kind.mixer, tp) * state_b;
    }
  }
  return f;
}

double KvFootprint::bytes_per_token_uncapped() const {
  double b = unbounded_bytes_per_token;
  for (const CappedKv& c : capped) b += c.bytes_per_token;
  return b;
}

double KvFootprint::bytes_for_tokens(int64_t tokens) const {
  double b = unbounded_bytes_per_token * static_cast<double>(tokens) + state_bytes_per_seq;
  for (const CappedKv& c : capped) b += c.bytes_per_token * static_cast<double>(std::min(tokens, c.cap_tokens));
  return b;
}

}  // namespace sightline
