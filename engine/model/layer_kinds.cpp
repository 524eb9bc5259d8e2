// ModelArch's per-layer questions (which kind each layer is, how identical
// layers group, their attention shapes): asked once per priced step, so they
// stay in the optimized-for-speed code when the readers and writers around
// them (architecture.cpp) are compiled for size in the wasm build.
#include "model/architecture.hpp"

namespace sightline {

ModelLayer ModelArch::layer_kind(int index) const {
  if (index < static_cast<int>(layers.size())) return layers[static_cast<size_t>(index)];
  ModelLayer k;
  if (is_moe() && index >= moe.first_dense_layers && (index - moe.first_dense_layers) % moe.layer_step == moe.layer_step - 1)
    k.ffn = LayerFfn::Moe;
  return k;
}

std::vector<LayerGroup> ModelArch::layer_groups() const {
  std::vector<LayerGroup> groups;
  for (int i = 0; i < num_layers; ++i) {
    const ModelLayer k = layer_kind(i);
    bool found = false;
    for (LayerGroup& g : groups)
      if (g.kind == k) g.count += 1, found = true;
    if (!found) groups.push_back({k, 1});
  }
  return groups;
}

int ModelArch::count_layers(LayerMixer mixer) const {
  int n = 0;
  for (int i = 0; i < num_layers; ++i) n += layer_kind(i).mixer == mixer ? 1 : 0;
  return n;
}

int ModelArch::count_ffn(LayerFfn ffn) const {
  int n = 0;
  for (int i = 0; i < num_layers; ++i) n += layer_kind(i).ffn == ffn ? 1 : 0;
  return n;
}

int ModelArch::num_moe_layers() const { return is_moe() ? count_ffn(LayerFfn::Moe) : 0; }

void finalize_layers(ModelArch& m) {
  if (!m.layers.empty() || m.num_layers <= 0) return;
  std::vector<ModelLayer> layers;  // layer_kind() derives kinds while `m.layers` is empty
  layers.reserve(static_cast<size_t>(m.num_layers));
  for (int i = 0; i < m.num_layers; ++i) layers.push_back(m.layer_kind(i));
  m.layers = std::move(layers);
}

int64_t ModelArch::kv_elements_per_token_per_layer() const {
  // MLA caches the compressed latent plus the shared rope key, not per-head K/V.
  if (mla.enabled) return mla.kv_lora_rank + mla.qk_rope_head_dim;
  return 2LL * num_kv_heads * head_dim;
}

AttentionShape ModelArch::attention_shape(const ModelLayer& kind) const {
  if (kind.shape.given()) return kind.shape;
  AttentionShape a;
  a.heads = num_heads;
  a.kv_heads = num_kv_heads;
  a.qk_head_dim = qk_head_dim();
  a.v_head_dim = v_head_dim();
  a.sinks = attention_sinks;
  return a;
}

bool ModelArch::has_layer_attention_shapes() const {
  for (int i = 0; i < num_layers; ++i)
    if (layer_kind(i).shape.given()) return true;
  return false;
}

bool ModelArch::has_layer_ffn_widths() const {
  for (const ModelLayer& k : layers)
    if (k.ffn_intermediate > 0) return true;
  return false;
}

}  // namespace sightline
