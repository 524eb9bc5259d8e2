// Nemotron-NAS (model_type "nemotron-nas", DeciLMForCausalLM: Llama-3.x
// Nemotron Super/Ultra): a Llama whose blocks were each pruned by a search, so
// every block says in `block_configs` whether it keeps its attention (and with
// how many query heads per KV head) and how wide its MLP is. Read into the
// generic per-layer fields: a block without attention is a layer with no mixer,
// a block's own KV heads its ModelLayer::shape, its own MLP width its
// ModelLayer::ffn_intermediate. Checked against vLLM's
// model_executor/models/nemotron_nas.py (DeciLMDecoderLayer,
// _ffn_mult_to_intermediate_size); parts of a block that file does not build
// (a linear replacement, sinks, windows, sparsity) are refused at their key.
#include <algorithm>

#include "model/hf_reader.hpp"

namespace sightline::hf {

namespace {

// A block's part (its "attention" or "ffn" object): every key one this reader
// knows, each refused unless it holds the value that builds nothing extra.
void check_block_part(const json& part, const std::string& path, const std::vector<const char*>& known) {
  require_object(part, path);
  for (auto it = part.begin(); it != part.end(); ++it) {
    bool ok = false;
    for (const char* k : known) ok = ok || it.key() == k;
    if (!ok)
      fail(error_code::kNotImplemented, pointer_append(path, it.key()),
           "block key '" + printable(it.key()) + "' is not understood; a Nemotron-NAS block is read only when every key is");
  }
}

bool flag(const json& part, const char* key, const std::string& path) {
  if (!part.contains(key) || part.at(key).is_null()) return false;
  if (!part.at(key).is_boolean()) fail(error_code::kType, pointer_append(path, key), "expected true or false");
  return part.at(key).get<bool>();
}

// Keys that, set, add a part vLLM's DeciLM does not build and Sightline does not price.
void refuse_set(const json& part, const std::string& path, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    if (!part.contains(k) || part.at(k).is_null() || part.at(k) == false) continue;
    fail(error_code::kNotImplemented, pointer_append(path, k),
         std::string("'") + k + "' set in a Nemotron-NAS block is not priced (vLLM's nemotron_nas.py builds no such part); "
         "reading the block without it would misprice it");
  }
}

// DeciLM's width from ffn_mult: 2/3 of ffn_mult x hidden, rounded up to a multiple of 256.
int64_t ffn_width(double mult, int64_t hidden) {
  const int64_t w = static_cast<int64_t>(2.0 * mult * static_cast<double>(hidden) / 3.0);
  return w % 256 == 0 ? w : w + 256 - w % 256;
}

struct Block {
  bool attention = false;
  int kv_heads = 0;
  bool ffn = false;
  int64_t width = 0;
};

Block read_block(const json& b, const std::string& path, int heads, int64_t hidden, const std::string& act) {
  require_object(b, path);
  check_block_part(b, path, {"attention", "ffn"});
  Block out;
  const std::string ap = pointer_append(path, "attention"), fp = pointer_append(path, "ffn");
  if (!b.contains("attention")) fail(error_code::kMissingKey, ap, "each block needs its 'attention' object");
  if (!b.contains("ffn")) fail(error_code::kMissingKey, fp, "each block needs its 'ffn' object");
  const json& a = b.at("attention");
  check_block_part(a, ap, {"n_heads_in_group", "no_op", "replace_with_linear", "num_sink_tokens", "sparsify", "unshifted_sink",
                           "use_prefill_window_in_sink_attention", "window_length"});
  refuse_set(a, ap, {"replace_with_linear", "num_sink_tokens", "sparsify", "unshifted_sink", "use_prefill_window_in_sink_attention",
                     "window_length"});
  out.attention = !flag(a, "no_op", ap);
  if (out.attention) {
    const std::string gp = pointer_append(ap, "n_heads_in_group");
    if (!a.contains("n_heads_in_group") || a.at("n_heads_in_group").is_null())
      fail(error_code::kMissingKey, gp, "an attention block needs n_heads_in_group (query heads per KV head)");
    const int64_t group = read_integer(a.at("n_heads_in_group"), gp, 1, heads);
    if (heads % group != 0)
      fail(error_code::kConstraint, gp,
           "num_attention_heads (" + std::to_string(heads) + ") is not a multiple of n_heads_in_group (" + std::to_string(group) + ")");
    out.kv_heads = static_cast<int>(heads / group);
  }
  const json& f = b.at("ffn");
  check_block_part(f, fp, {"ffn_mult", "intermediate_size", "no_op", "replace_with_linear", "sparsify", "hidden_act"});
  refuse_set(f, fp, {"replace_with_linear", "sparsify"});
  out.ffn = !flag(f, "no_op", fp);
  if (out.ffn) {
    const bool mult = f.contains("ffn_mult") && !f.at("ffn_mult").is_null();
    // vLLM takes ffn_mult when the block has it, else the block's intermediate_size.
    if (mult) {
      // A width from a multiplier is bounded like one given outright (intermediate_size below):
      // past it the model's size check could only point at the whole config.
      const std::string mp = pointer_append(fp, "ffn_mult");
      const double m = read_number(f.at("ffn_mult"), mp, 1e-6, 1e6);
      out.width = ffn_width(m, hidden);
      if (out.width > kMaxModelDim)
        fail(error_code::kRange, mp,
             "ffn_mult " + std::to_string(m) + " makes an MLP width of " + std::to_string(out.width) + " (2/3 x ffn_mult x hidden_size " +
                 std::to_string(hidden) + "), over the largest a model dimension may be (" + std::to_string(kMaxModelDim) + ")");
    }
    else if (f.contains("intermediate_size") && !f.at("intermediate_size").is_null())
      out.width = read_integer(f.at("intermediate_size"), pointer_append(fp, "intermediate_size"), 1, kMaxModelDim);
    else
      fail(error_code::kMissingKey, pointer_append(fp, "ffn_mult"), "an FFN block needs its width: ffn_mult or intermediate_size");
    if (mult && f.contains("intermediate_size") && !f.at("intermediate_size").is_null())
      fail(error_code::kConstraint, pointer_append(fp, "intermediate_size"),
           "a block with both ffn_mult and intermediate_size: which width the checkpoint has is not guessed");
    if (f.contains("hidden_act") && !f.at("hidden_act").is_null() &&
        (!f.at("hidden_act").is_string() || activation_from_hf(f.at("hidden_act").get<std::string>()) != act))
      fail(error_code::kNotImplemented, pointer_append(fp, "hidden_act"),
           "a block's own MLP activation differing from the model's hidden_act is not priced");
  }
  if (!out.attention && !out.ffn)
    fail(error_code::kNotImplemented, path, "a block with neither attention nor an FFN (both no_op) is not priced");
  return out;
}

}  // namespace

void read_nemotron_nas(const HfReader& r, ModelArch& m) {
  if (!r.has("block_configs"))
    fail(error_code::kMissingKey, r.child("block_configs"), "nemotron-nas lists its blocks in 'block_configs' (one per layer)");
  const json& blocks = r.at("block_configs");
  const std::string bp = r.child("block_configs");
  if (!blocks.is_array()) fail(error_code::kType, bp, "expected a list with one block per layer");
  // The model-wide MLP width and KV heads are null: each block gives its own.
  for (const char* k : {"intermediate_size", "num_key_value_heads"})
    if (r.has(k))
      fail(error_code::kConstraint, r.child(k),
           std::string("nemotron-nas takes '") + k + "' from each block; a model-wide value beside block_configs is not guessed between");
  json patched = r.config();
  patched["intermediate_size"] = 1;  // replaced below by the widest block's
  patched.erase("num_key_value_heads");
  HfReader pr(patched, r.path());
  read_llama_like(pr, m);
  // What the patched reader used counts as used in the original; the rest is accounted for by hf_keys.cpp.
  const std::vector<std::string> unread = pr.unread("");
  for (auto it = patched.begin(); it != patched.end(); ++it)
    if (std::find(unread.begin(), unread.end(), it.key()) == unread.end() && r.config().contains(it.key())) r.mark(it.key());
  if (static_cast<int>(blocks.size()) != m.num_layers)
    fail(error_code::kConstraint, bp,
         "block_configs lists " + std::to_string(blocks.size()) + " blocks but num_hidden_layers is " + std::to_string(m.num_layers));
  std::vector<Block> read;
  for (size_t i = 0; i < blocks.size(); ++i)
    read.push_back(read_block(blocks[i], pointer_append(bp, i), m.num_heads, m.hidden_size, m.activation));
  // The model's own MLP width and KV heads: the widest MLP and the first attention block's heads;
  // a block that differs carries its own.
  m.intermediate_size = 0, m.num_kv_heads = 0;
  for (const Block& b : read) {
    m.intermediate_size = std::max(m.intermediate_size, b.width);
    if (b.attention && m.num_kv_heads == 0) m.num_kv_heads = b.kv_heads;
  }
  if (m.intermediate_size == 0) m.intermediate_size = m.hidden_size;  // no block has an MLP: the width prices nothing
  if (m.num_kv_heads == 0) m.num_kv_heads = m.num_heads;             // no block attends: the heads price nothing
  for (size_t i = 0; i < read.size(); ++i) {
    ModelLayer& k = m.layers[i];
    k.mixer = read[i].attention ? LayerMixer::Attention : LayerMixer::None;
    k.ffn = read[i].ffn ? LayerFfn::Dense : LayerFfn::None;
    if (read[i].ffn && read[i].width != m.intermediate_size) k.ffn_intermediate = read[i].width;
    if (read[i].attention && read[i].kv_heads != m.num_kv_heads) {
      k.shape.heads = m.num_heads, k.shape.kv_heads = read[i].kv_heads;
      k.shape.qk_head_dim = m.head_dim, k.shape.v_head_dim = m.head_dim;
    }
  }
}

}  // namespace sightline::hf
