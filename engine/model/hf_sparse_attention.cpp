// DeepSeek sparse attention (DSA) read from a config.json, by its keys and
// whatever the model_type: DeepSeek-V3.2 (deepseek_v32) and GLM-5
// (glm_moe_dsa) name it index_topk, index_n_heads and index_head_dim. The
// indexer sits in every attention layer of both (DeepSeek-V3.2-Exp
// inference/model.py: MLA.__init__ builds an Indexer for every layer; GLM-5-FP8's
// modules_to_not_convert lists an indexer for each of its 78 layers).
#include "model/hf_reader.hpp"

namespace sightline::hf {

namespace {

bool dsa_family(const std::string& type) { return type == "deepseek_v32" || type == "glm_moe_dsa"; }

}  // namespace

void read_sparse_attention(const HfReader& r, const std::string& type, ModelArch& m) {
  const bool keyed = r.has("index_topk") || r.has("index_n_heads") || r.has("index_head_dim");
  if (!keyed) {
    if (dsa_family(type))
      fail(error_code::kMissingKey, r.child("model_type"),
           "model_type '" + type + "' is DeepSeek sparse attention (a lightning indexer with its own key cache; each query "
           "attends only to the index_topk keys it selects), but this config lacks index_topk, index_n_heads and "
           "index_head_dim: add them from the model's published config.json");
    return;
  }
  // The indexer's query is projected from MLA's low-rank query latent (wq_b);
  // without MLA the config does not say where it comes from.
  const char* first = r.has("index_topk") ? "index_topk" : r.has("index_n_heads") ? "index_n_heads" : "index_head_dim";
  if (!m.mla.enabled)
    fail(error_code::kNotImplemented, r.child(first),
         "DeepSeek sparse attention (index_topk, index_n_heads, index_head_dim) on attention without MLA (kv_lora_rank): "
         "the indexer's query projection is defined on MLA's query latent, so this layout is not priced");
  SparseIndexSpec& s = m.sparse_index;
  s.topk = r.integer({"index_topk"}, 1, kMaxModelContext);
  s.heads = static_cast<int>(r.integer({"index_n_heads"}, 1, 4096));
  s.head_dim = r.integer({"index_head_dim"}, 1, 4096);
  for (ModelLayer& k : m.layers)
    if (k.mixer == LayerMixer::Attention) k.indexer = true;
  // GLM-5 restates the query head width; it must be MLA's.
  if (r.has("qk_head_dim") && read_integer(r.at("qk_head_dim"), r.child("qk_head_dim"), 1, 4096) != m.qk_head_dim())
    fail(error_code::kConstraint, r.child("qk_head_dim"),
         "qk_head_dim disagrees with qk_nope_head_dim + qk_rope_head_dim (" + std::to_string(m.qk_head_dim()) + ")");
  for (const char* k : {"indexer_rope_interleave", "rope_interleave"})
    r.neutral(k, "rotary layout (interleaved or split halves): the same rope work");
}

}  // namespace sightline::hf
