// Every key of a pasted config.json is accounted for (issue 35: the importer
// never guesses). A key is one of:
//   - used by the family's reader (HfReader remembers what it read);
//   - understood as not changing performance: on the ONE list below (every
//     family), or marked by a family reader with its reason (HfReader::neutral);
//   - not understood. A not-understood key whose name suggests structure
//     (experts, ranks, windows, layer lists, indexers, state, heads...) refuses
//     the import, located at that key and naming all of them; so does any
//     not-understood key when the model_type is not a known family (an unknown
//     family is read only when every key is understood by structure). Other
//     not-understood keys of a known family are reported as a warning.
#include <algorithm>
#include <map>

#include "model/hf_reader.hpp"

namespace sightline::hf {

namespace {

struct NeutralKey {
  const char* key;
  const char* why;
};

constexpr const char* kWhyTokens = "token ids (tokenizer, not compute)";
constexpr const char* kWhyTraining = "training-only (dropout, init, auxiliary losses, recorded training layout)";
constexpr const char* kWhyNumerics = "constants inside an op already priced (norm epsilons, rope frequencies and "
                                     "scaling, logit scales and caps, router score function and scale, clamps)";
constexpr const char* kWhyMeta = "metadata (versions, class names, loader hints, output flags)";
constexpr const char* kWhyMultimodal = "multimodal glue (vision/audio tower and projector settings: only text generation is priced)";
constexpr const char* kWhyPretrainedDefaults =
    "transformers' PretrainedConfig defaults that older versions wrote into every config: generation settings "
    "(sampling, beams, lengths), task labels and encoder-decoder switches, none of which changes a decoder layer";
constexpr const char* kWhyRoutingGroups =
    "expert routing restrictions (group-limited top-k): the experts' work and the all-to-all are priced for top-k routing";

// The keys that do not change what a step computes or stores, whatever the
// family. A key belongs here only if no family uses it for structure.
const std::vector<NeutralKey>& neutral_keys() {
  static const std::vector<NeutralKey> keys = {
      {"bos_token_id", kWhyTokens}, {"eos_token_id", kWhyTokens}, {"pad_token_id", kWhyTokens},
      {"sep_token_id", kWhyTokens}, {"unk_token_id", kWhyTokens}, {"decoder_start_token_id", kWhyTokens},
      {"attention_dropout", kWhyTraining}, {"hidden_dropout", kWhyTraining}, {"attn_pdrop", kWhyTraining},
      {"embd_pdrop", kWhyTraining}, {"resid_pdrop", kWhyTraining}, {"summary_first_dropout", kWhyTraining},
      {"dropout", kWhyTraining}, {"classifier_dropout", kWhyTraining}, {"initializer_range", kWhyTraining},
      {"initializer_factor", kWhyTraining}, {"aux_loss_alpha", kWhyTraining}, {"router_aux_loss_coef", kWhyTraining},
      {"output_router_logits", kWhyTraining}, {"seq_aux", kWhyTraining}, {"rescale_prenorm_residual", kWhyTraining},
      {"router_z_loss_coef", kWhyTraining}, {"pretraining_tp", kWhyTraining}, {"ep_size", kWhyTraining},
      {"rms_norm_eps", kWhyNumerics}, {"layer_norm_epsilon", kWhyNumerics}, {"layer_norm_eps", kWhyNumerics},
      {"norm_epsilon", kWhyNumerics}, {"rope_theta", kWhyNumerics}, {"rope_scaling", kWhyNumerics},
      {"rope_parameters", kWhyNumerics}, {"partial_rotary_factor", kWhyNumerics}, {"query_pre_attn_scalar", kWhyNumerics},
      {"final_logit_softcapping", kWhyNumerics}, {"attn_logit_softcapping", kWhyNumerics},
      {"rope_local_base_freq", kWhyNumerics}, {"routed_scaling_factor", kWhyNumerics}, {"scoring_func", kWhyNumerics},
      {"norm_topk_prob", kWhyNumerics}, {"topk_method", kWhyNumerics}, {"swiglu_limit", kWhyNumerics},
      {"residual_in_fp32", kWhyNumerics}, {"initial_context_length", kWhyNumerics},
      {"n_group", kWhyRoutingGroups}, {"topk_group", kWhyRoutingGroups},
      {"transformers_version", kWhyMeta}, {"_name_or_path", kWhyMeta}, {"auto_map", kWhyMeta},
      {"architectures", kWhyMeta}, {"torch_dtype", kWhyMeta}, {"dtype", kWhyMeta}, {"model_type", kWhyMeta},
      {"use_cache", kWhyMeta}, {"num_logits_to_keep", kWhyMeta}, {"task_specific_params", kWhyMeta},
      {"tokenizer_class", kWhyMeta}, {"cache_implementation", kWhyMeta}, {"return_dict", kWhyMeta}, {"output_attentions", kWhyMeta},
      {"output_hidden_states", kWhyMeta}, {"torchscript", kWhyMeta}, {"use_mamba_kernels", kWhyMeta},
      {"summary_activation", kWhyMeta}, {"summary_proj_to_labels", kWhyMeta}, {"summary_type", kWhyMeta},
      {"summary_use_proj", kWhyMeta},
      {"image_token_index", kWhyMultimodal}, {"image_token_id", kWhyMultimodal}, {"boi_token_index", kWhyMultimodal},
      {"eoi_token_index", kWhyMultimodal}, {"video_token_id", kWhyMultimodal}, {"vision_start_token_id", kWhyMultimodal},
      {"vision_end_token_id", kWhyMultimodal}, {"mm_tokens_per_image", kWhyMultimodal},
      {"vision_feature_layer", kWhyMultimodal}, {"vision_feature_select_strategy", kWhyMultimodal},
      {"projector_hidden_act", kWhyMultimodal}, {"multimodal_projector_bias", kWhyMultimodal},
      {"spatial_merge_size", kWhyMultimodal}, {"image_seq_length", kWhyMultimodal},
      {"vision_config", kWhyMultimodal}, {"audio_config", kWhyMultimodal}, {"vision_tower", kWhyMultimodal},
      {"speech_config", kWhyMultimodal}, {"media_placeholder_token_id", kWhyMultimodal},
      {"use_unified_vision_chunk", kWhyMultimodal}, {"video_placeholder", kWhyMultimodal},
      {"audio_token_id", kWhyMultimodal}, {"boa_token_id", kWhyMultimodal}, {"eoa_token_id", kWhyMultimodal},
      {"eoa_token_index", kWhyMultimodal}, {"boi_token_id", kWhyMultimodal}, {"eoi_token_id", kWhyMultimodal},
      {"vision_soft_tokens_per_image", kWhyMultimodal},
      {"ignore_index", kWhyTraining}, {"router_jitter_noise", kWhyTraining},
      {"add_cross_attention", kWhyPretrainedDefaults}, {"bad_words_ids", kWhyPretrainedDefaults},
      {"begin_suppress_tokens", kWhyPretrainedDefaults}, {"chunk_size_feed_forward", kWhyPretrainedDefaults},
      {"cross_attention_hidden_size", kWhyPretrainedDefaults}, {"diversity_penalty", kWhyPretrainedDefaults},
      {"do_sample", kWhyPretrainedDefaults}, {"early_stopping", kWhyPretrainedDefaults},
      {"encoder_no_repeat_ngram_size", kWhyPretrainedDefaults}, {"exponential_decay_length_penalty", kWhyPretrainedDefaults},
      {"finetuning_task", kWhyPretrainedDefaults}, {"forced_bos_token_id", kWhyPretrainedDefaults},
      {"forced_eos_token_id", kWhyPretrainedDefaults}, {"id2label", kWhyPretrainedDefaults},
      {"label2id", kWhyPretrainedDefaults}, {"is_decoder", kWhyPretrainedDefaults},
      {"is_encoder_decoder", kWhyPretrainedDefaults}, {"length_penalty", kWhyPretrainedDefaults},
      {"max_length", kWhyPretrainedDefaults}, {"min_length", kWhyPretrainedDefaults},
      {"no_repeat_ngram_size", kWhyPretrainedDefaults}, {"num_beam_groups", kWhyPretrainedDefaults},
      {"num_beams", kWhyPretrainedDefaults}, {"num_return_sequences", kWhyPretrainedDefaults},
      {"output_scores", kWhyPretrainedDefaults}, {"prefix", kWhyPretrainedDefaults},
      {"problem_type", kWhyPretrainedDefaults},
      {"remove_invalid_values", kWhyPretrainedDefaults}, {"repetition_penalty", kWhyPretrainedDefaults},
      {"return_dict_in_generate", kWhyPretrainedDefaults}, {"suppress_tokens", kWhyPretrainedDefaults},
      {"temperature", kWhyPretrainedDefaults}, {"tf_legacy_loss", kWhyPretrainedDefaults},
      {"tie_encoder_decoder", kWhyPretrainedDefaults}, {"top_k", kWhyPretrainedDefaults},
      {"top_p", kWhyPretrainedDefaults}, {"typical_p", kWhyPretrainedDefaults},
      {"use_bfloat16", kWhyPretrainedDefaults}};
  return keys;
}

}  // namespace

// Fragments of key names that say the key shapes the model: a key carrying one
// that the importer does not understand could change parameters, KV or cost.
bool name_suggests_structure(const std::string& key) {
  static const char* const fragments[] = {
      "expert", "moe", "router", "routed", "shared", "topk", "top_k", "lora", "rank", "latent", "window", "chunk",
      "layer", "block", "pattern", "interval", "freq", "step", "indexer", "index_", "sparse", "compress", "state",
      "ssm", "mamba", "conv", "linear", "quant", "head", "dim", "size", "num_", "n_", "kv", "attn", "attention",
      "mtp", "nextn", "group", "hidden", "intermediate", "ffn", "mlp", "embed", "vocab", "position", "dense",
      "hybrid", "gate", "proj", "bias", "config", "nope", "rope", "mixer", "scan"};
  for (const char* f : fragments)
    if (key.find(f) != std::string::npos) return true;
  return false;
}

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

const char* neutral_key_reason(const std::string& key) {
  for (const NeutralKey& k : neutral_keys())
    if (key == k.key) return k.why;
  return nullptr;
}

void account_for_keys(const HfReader& r, const std::string& prefix, bool known_family, ModelArch& m) {
  std::map<std::string, std::vector<std::string>> ignored_by_reason;
  std::vector<std::string> refused, unclear;
  for (const std::string& key : r.unread("")) {
    const char* why = r.neutral_reason(key);
    if (!why) why = neutral_key_reason(key);
    const json& v = r.config().at(key);
    if (!why && v.is_null()) why = "null (the key gives no value)";
    // An empty list or object names nothing (pruned_heads {}: no head pruned).
    if (!why && v.is_structured() && v.empty()) why = "empty (the key gives no value)";
    if (why) {
      m.import.ignored_keys.push_back(prefix + key);
      ignored_by_reason[why].push_back(prefix + key);
    } else if (!known_family || name_suggests_structure(key)) {
      refused.push_back(key);
    } else {
      unclear.push_back(prefix + key);
    }
  }
  for (const auto& [why, keys] : ignored_by_reason) m.import.ignored_why.push_back(joined(keys) + ": " + why);
  if (!unclear.empty())
    m.import.warnings.push_back("keys not understood (their names suggest no structure; priced without them, check "
                                "they change nothing): " + joined(unclear));
  if (refused.empty()) return;
  std::vector<std::string> named;
  for (const std::string& k : refused) named.push_back(prefix + k);
  const std::string what =
      known_family
          ? "config.json keys not understood for model_type '" + printable(m.import.family) + "': " + joined(named) +
                ". Their names suggest structure (experts, ranks, windows, layer lists, indexers, state, heads) that "
                "changes parameters, KV cache or cost, and reading the model without them would misprice it"
          : "model_type '" + printable(m.import.family) + "' is not a family Sightline knows, and keys " + joined(named) +
                " are not understood; an unknown family is read only when every key is understood by structure";
  fail(error_code::kNotImplemented, r.child(refused.front()),
       what + ". To price it, the importer would need to understand " + (refused.size() > 1 ? "these keys" : "this key") +
           " (a family reader); meanwhile give the model as an architecture object (`sightline inspect-model` on a "
           "similar preset prints one to edit).");
}

namespace {

// Layer kinds the engine does not price, recognised by their keys whatever the
// model_type, and by the model_types defined by them (a trimmed copy of a
// DeepSeek-V4 config without its keys is still no DeepSeek-V3). DeepSeek sparse
// attention (index_topk...) and latent MoE (moe_latent_size) are priced:
// hf_sparse_attention.cpp, read_nemotron_h; per-block configurations
// (block_configs) too: hf_nemotron_nas.cpp.
struct UnpricedFeature {
  std::vector<const char*> keys;
  std::vector<const char*> types;
  const char* what;
};

const std::vector<UnpricedFeature>& unpriced_features() {
  static const std::vector<UnpricedFeature> features = {
      {{"index_topk_freq", "index_skip_topk_offset", "indexer_types", "index_share_for_mtp_iteration"},
       {},
       "IndexShare (GLM-5.2): DeepSeek sparse attention whose indexer runs only in some layers and shares its top-k "
       "selection with the layers after it, so the indexer's cost and key cache differ from one indexer per layer"},
      {{"compress_ratios", "compress_rope_theta"}, {"deepseek_v4"},
       "DeepSeek-V4 compressed sparse attention (per-layer KV compression ratios)"},
      {{"o_lora_rank", "o_groups"}, {}, "a grouped low-rank attention output projection"},
      {{"hc_mult", "hc_sinkhorn_iters", "hc_eps"}, {}, "hyper-connections (hc_mult residual streams per layer)"},
      {{"num_hash_layers"}, {}, "hash-routed MoE layers"}};
  return features;
}

}  // namespace

void refuse_unpriced_features(const HfReader& r, const std::string& type) {
  std::vector<std::string> present, what;
  for (const UnpricedFeature& f : unpriced_features()) {
    bool hit = std::find(f.types.begin(), f.types.end(), type) != f.types.end();
    for (const char* k : f.keys)
      if (r.config().contains(k)) present.push_back(k), hit = true;
    if (hit) what.push_back(f.what);
  }
  if (what.empty()) return;
  std::string features;
  for (const std::string& w : what) features += (features.empty() ? "" : "; ") + w;
  const std::string where = present.empty() ? r.child("model_type") : r.child(present.front());
  fail(error_code::kNotImplemented, where,
       "this model uses what Sightline's engine does not price yet: " + features + "." +
           (present.empty() ? " (This config does not even carry the keys that describe it.)"
                            : " Keys: " + joined(present) + ".") +
           " Reading it without them would misprice it, so it is refused; give the model as an architecture object "
           "to price an approximation of your own choosing.");
}

}  // namespace sightline::hf
