#include "api/inspect_model.hpp"

#include "core/error.hpp"
#include "mem/inference_memory.hpp"
#include "model/kv_footprint.hpp"
#include "model/param_count.hpp"

namespace sightline {

ModelArch read_model_for_inspection(const json& doc) {
  if (doc.is_object() && (doc.contains("model_type") || doc.contains("architectures") || doc.contains("text_config")) &&
      !doc.contains("hf_config"))
    return read_model(json{{"hf_config", doc}}, "");
  return read_model(doc, "");
}

namespace {

json layer_json(const ModelArch& m, const ModelLayer& k, int count) {
  std::string attention;
  if (k.mixer == LayerMixer::Attention) {
    attention = k.window > 0 ? "sliding window " + std::to_string(k.window)
                : k.chunk > 0 ? "chunked " + std::to_string(k.chunk)
                              : "full";
    if (!k.rope) attention += ", no rope";
    if (k.indexer) attention += ", DSA top-" + std::to_string(m.sparse_index.topk);
    if (k.shape.given()) {  // this kind's own head shape, said where the layers are listed
      const AttentionShape& a = k.shape;
      attention += ", " + std::to_string(a.heads) + " query / " + std::to_string(a.kv_heads) + " KV heads, head_dim " +
                   std::to_string(a.qk_head_dim) +
                   (a.v_head_dim != a.qk_head_dim ? " (values " + std::to_string(a.v_head_dim) + ")" : "") +
                   (a.k_eq_v ? ", values from the key projection" : "") + (a.sinks ? ", attention sinks" : "");
    }
  }
  // A layer kind's own dense MLP width is said with its ffn (Nemotron-NAS blocks).
  // A model whose layers differ in it says every dense layer's width.
  const bool widths = k.ffn == LayerFfn::Dense && m.has_layer_ffn_widths();
  const std::string ffn = layer_ffn_name(k.ffn) + (widths ? " " + std::to_string(m.dense_width(k)) : "");
  json j = {{"count", count}, {"mixer", layer_mixer_name(k.mixer)}, {"ffn", ffn}};
  if (!attention.empty()) j["attention"] = attention;
  return j;
}

}  // namespace

json inspect_model_json(const ModelArch& m) {
  const ParamCounts c = count_params(m);
  json layers = json::array();
  for (const GroupParams& g : c.groups) layers.push_back(layer_json(m, g.group.kind, g.group.count));

  json heads = {{"query", m.num_heads}, {"kv", m.num_kv_heads}, {"head_dim", m.head_dim},
                {"kind", m.mla.enabled ? "MLA" : m.num_kv_heads == 1 ? "MQA" : m.num_kv_heads == m.num_heads ? "MHA" : "GQA"}};
  if (m.mla.enabled) heads["mla"] = {{"q_lora_rank", m.mla.q_lora_rank}, {"kv_lora_rank", m.mla.kv_lora_rank},
                                     {"qk_rope_head_dim", m.mla.qk_rope_head_dim}};
  if (m.attention_sinks) heads["attention_sinks"] = true;
  if (m.sparse_index.enabled())
    heads["sparse_attention"] = {{"index_topk", m.sparse_index.topk}, {"index_heads", m.sparse_index.heads},
                                 {"index_head_dim", m.sparse_index.head_dim},
                                 {"index_key_bytes_per_token", m.sparse_index.key_bytes_per_token()}};
  json experts = nullptr;
  if (m.is_moe())
    experts = {{"routed", m.moe.num_experts},
               {"shared", m.moe.num_shared_experts},
               {"top_k", m.moe.top_k},
               {"expert_intermediate_size", m.moe.expert_intermediate_size},
               {"shared_intermediate_size", m.moe.shared_intermediate()},
               {"moe_layers", m.num_moe_layers()},
               {"dense_layers", m.count_ffn(LayerFfn::Dense)}};
  if (m.is_moe() && m.moe.latent_size > 0) experts["latent_size"] = m.moe.latent_size;

  Precision p;
  p.activations = Dtype::BF16;
  p.weights = m.quant.weights_dtype.empty() ? Dtype::BF16 : parse_dtype(m.quant.weights_dtype);
  p.kv_cache = m.quant.kv_cache_dtype.empty() ? Dtype::BF16 : parse_dtype(m.quant.kv_cache_dtype);
  apply_checkpoint_layout(m.quant, p);
  const KvFootprint fp = kv_footprint_per_gpu(m, p, 1, 1.0);
  json kv = json::object();
  for (int64_t tokens : {int64_t{4096}, int64_t{32768}, int64_t{131072}}) {
    const double seq = fp.bytes_for_tokens(tokens);
    kv[std::to_string(tokens / 1024) + "K"] = {{"bytes_per_token", seq / static_cast<double>(tokens)},
                                              {"bytes_per_sequence", seq}};
  }
  const double weights_GiB = weight_bytes_per_gpu(m, p, ParallelLayout{}) / kBytesPerGiB;
  json j = {{"family", m.import.family.empty() ? std::string("architecture") : m.import.family},
            {"id", m.id},
            {"name", m.name},
            {"layers", m.num_layers},
            {"layers_by_kind", layers},
            {"heads", heads},
            {"experts", experts},
            {"mtp_layers", m.mtp_layers},
            {"params", {{"total_B", static_cast<double>(c.total) / 1e9},
                        {"active_B", static_cast<double>(c.active) / 1e9},
                        {"embedding_B", static_cast<double>(c.embedding) / 1e9},
                        {"lm_head_B", static_cast<double>(c.lm_head) / 1e9},
                        {"mtp_B", static_cast<double>(c.mtp) / 1e9},
                        {"note", "active excludes the input embedding (a lookup) and includes the LM head"}}},
            {"kv_cache", {{"dtype", dtype_name(p.kv_cache)}, {"per_sequence_state_bytes", fp.state_bytes_per_seq}, {"at", kv}}},
            {"weights", {{"dtype", dtype_name(p.weights)},
                         {"from_config", m.quant.applied.empty() ? json(nullptr) : json(m.quant.applied)},
                         {"attention_unquantized", m.quant.attention_excluded},
                         {"attention_output_quantized", m.quant.attention_out_quantized},
                         {"dense_mlp_unquantized", m.quant.dense_ffn_excluded},
                         {"group_zero_point", m.quant.group_size > 0 ? json(m.quant.zero_point) : json(nullptr)},
                         {"GiB", weights_GiB}}},
            {"ignored_keys", m.import.ignored_keys},
            {"ignored_why", m.import.ignored_why},
            {"ignored_parts", m.import.ignored_parts},
            {"warnings", m.import.warnings},
            // The engine's own form of the model: editable and accepted as a scenario's "model".
            {"architecture", m.to_json()}};
  return j;
}

}  // namespace sightline
