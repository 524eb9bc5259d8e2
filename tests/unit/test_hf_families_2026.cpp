// Published configs of families released since the importer's first cut
// (issue 35), read exactly: parameters, KV bytes per token and weight bytes
// against each architecture's formula written out here, and the published
// totals where they are known (tests/data/hf/published/SOURCES.md).
#include <doctest/doctest.h>

#include "hf_inspect.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace hf2026 {

using json = nlohmann::json;

std::string config_text(const std::string& file) { return test::read_source_file("tests/data/hf/published/" + file); }

json understood_model(const std::string& text) { return test::inspect_ok(text); }
json refusal(const json& config) { return test::inspect_refused(config.dump()); }

double count(const json& r, const char* part) { return r["params"][part].get<double>() * 1e9; }
double kv_bytes_per_token(const json& r, const char* at) { return r["kv_cache"]["at"][at]["bytes_per_token"].get<double>(); }
double weight_bytes(const json& r) { return r["weights"]["GiB"].get<double>() * 1073741824.0; }

}  // namespace hf2026

using namespace hf2026;
using hf2026::json;

TEST_CASE("hf import: Hunyuan-A13B (hunyuan): per-layer expert lists, a shared MLP beside 64 experts") {
  const json r = understood_model(config_text("tencent--Hunyuan-A13B.json"));
  CHECK(r["family"] == "hunyuan");
  CHECK(r["experts"]["routed"] == 64);
  CHECK(r["experts"]["top_k"] == 8);
  CHECK(r["experts"]["shared"] == 1);
  // hidden 4096, 32 layers, 32 query heads and 8 KV heads of 128 (attention_head_dim) with QK norm;
  // every layer MoE (moe_layer_num_skipped 0): 64 experts of 3072 (moe_intermediate_size, one value
  // per layer), top-8 (moe_topk per layer), plus num_shared_expert 1 shared MLP of 3072 added without
  // a gate (use_mixed_mlp_moe); vocabulary 128167, tied embeddings.
  const double h = 4096, L = 32, V = 128167;
  const double attn = h * (32 * 128 + 2 * 8 * 128) + 32 * 128 * h + 2 * 128;
  const double expert = 3 * h * 3072, router = h * 64, norms = 2 * h;
  const double total = L * (attn + 64 * expert + expert + router + norms) + h + V * h;
  const double active = L * (attn + 8 * expert + expert + router + norms) + h + V * h;
  CHECK(count(r, "total_B") == doctest::Approx(total).epsilon(1e-12));
  CHECK(count(r, "active_B") == doctest::Approx(active).epsilon(1e-12));
  // Model card: 80B total, 13B active.
  CHECK(total / 1e9 == doctest::Approx(80.0).epsilon(0.01));
  CHECK(active / 1e9 == doctest::Approx(13.0).epsilon(0.03));
  for (const char* at : {"4K", "32K", "128K"}) CHECK(kv_bytes_per_token(r, at) == L * 2 * 8 * 128 * 2.0);
  // bf16 (torch_dtype): every parameter at 2 bytes, the tied table once.
  CHECK(r["weights"]["dtype"] == "bf16");
  CHECK(weight_bytes(r) == doctest::Approx(total * 2.0).epsilon(1e-12));
  // The keys it set aside carry their reasons: the vision tower of the multimodal variant, the classification
  // head that is off, the tokenizer's ids.
  const std::string why = r["ignored_why"].dump();
  for (const char* k : {"vit_type", "dense_list", "eod_token_id", "org_vocab_size"}) CHECK(why.find(k) != std::string::npos);
}

TEST_CASE("hf import: Hunyuan switches and per-layer lists the engine does not price are refused at the key") {
  const json base = json::parse(config_text("tencent--Hunyuan-A13B.json"));
  json c = base;
  c["moe_topk"][5] = 4;  // one layer routes to fewer experts
  json e = refusal(c);
  CHECK(e["path"] == "/hf_config/moe_topk/5");
  CHECK(e["code"] == "not_implemented");
  c = base;
  c["use_cla"] = true;  // cross-layer attention: a KV cache shared between layers
  CHECK(refusal(c)["path"] == "/hf_config/use_cla");
  c = base;
  c["moe_drop_tokens"] = true;
  CHECK(refusal(c)["path"] == "/hf_config/moe_drop_tokens");
  c = base;
  c["moe_topk"].erase(0);  // 31 entries for 32 layers
  CHECK(refusal(c)["path"] == "/hf_config/moe_topk");
  // The leading dense layers (moe_layer_num_skipped) use the Llama MLP of intermediate_size.
  c = base;
  c["moe_layer_num_skipped"] = 2;
  const json skipped = understood_model(c.dump());
  CHECK(skipped["experts"]["dense_layers"] == 2);
  CHECK(skipped["experts"]["moe_layers"] == 30);
  // transformers' hunyuan_v1_moe builds experts and the shared MLP at intermediate_size: a config whose
  // expert keys say another width reads differently under the two codes, so it is refused.
  c = base;
  c["model_type"] = "hunyuan_v1_moe";
  const json v1 = understood_model(c.dump());
  CHECK(v1["params"] == understood_model(base.dump())["params"]);
  for (json& x : c["moe_intermediate_size"]) x = 1536;
  CHECK(refusal(c)["path"] == "/hf_config/moe_intermediate_size");
}

TEST_CASE("hf import: MiniMax-M2.7 (minimax_m2): per-layer QK norm, routing bias, block FP8 with the router kept") {
  const json r = understood_model(config_text("MiniMaxAI--MiniMax-M2.7.json"));
  CHECK(r["family"] == "minimax_m2");
  CHECK(r["experts"]["routed"] == 256);
  CHECK(r["experts"]["top_k"] == 8);
  CHECK(r["architecture"]["qk_norm_per_layer"] == true);
  CHECK(r["architecture"]["moe"]["router_bias"] == true);
  // hidden 3072, 62 layers, 48 query heads and 8 KV heads of 128; q_norm over the 6144-wide query
  // projection and k_norm over the 1024-wide key projection (qk_norm_type per_layer); 256 experts of
  // 1536 (intermediate_size), top-8, a 256-wide routing bias; vocabulary 200064, untied.
  const double h = 3072, L = 62, V = 200064;
  const double attn = h * (48 * 128 + 2 * 8 * 128) + 48 * 128 * h + (48 * 128 + 8 * 128);
  const double expert = 3 * h * 1536, router = h * 256 + 256, norms = 2 * h;
  const double total = L * (attn + 256 * expert + router + norms) + h + 2 * V * h;
  const double active = L * (attn + 8 * expert + router + norms) + h + V * h;
  CHECK(count(r, "total_B") == doctest::Approx(total).epsilon(1e-12));
  CHECK(count(r, "active_B") == doctest::Approx(active).epsilon(1e-12));
  // The checkpoint's own count: 228,703,644,928 elements in its safetensors, of which the fp32
  // weight_scale_inv blocks (128x128) are not parameters: per layer 256 experts x (12x24 + 24x12 + 12x24)
  // and the attention's 48x24 + 8x24 + 8x24 + 24x48.
  const double scales = L * (256.0 * 3 * 288 + 1152 + 192 + 192 + 1152);
  CHECK(total == 228703644928.0 - scales);
  CHECK(active / 1e9 == doctest::Approx(10.0).epsilon(0.05));  // model card: 10B activated
  for (const char* at : {"4K", "32K", "128K"}) CHECK(kv_bytes_per_token(r, at) == L * 2 * 8 * 128 * 2.0);
  // Block FP8 (quantization_config): every projection, expert and the router at 1 byte; norms, embedding and
  // LM head at 2 (modules_to_not_convert names the router "gate" and its e_score_correction_bias, read as the router).
  CHECK(r["weights"]["dtype"] == "fp8");
  const double bytes = L * (attn + 256 * expert + router) * 1.0 + L * norms * 2.0 + (2 * V * h + h) * 2.0;
  CHECK(weight_bytes(r) == doctest::Approx(bytes).epsilon(1e-12));
  // The checkpoint's tensors sum to 214.32 GiB (fp32 router and scales included).
  CHECK(bytes / 1073741824.0 == doctest::Approx(214.32).epsilon(0.005));
  // The MTP keys name modules the released weights do not hold: set aside with that reason, nothing priced.
  CHECK(r["mtp_layers"] == 0);
  CHECK(r["ignored_why"].dump().find("num_mtp_modules") != std::string::npos);
}

TEST_CASE("hf import: MiniMax layers of lightning attention or a shared expert are refused at the entry") {
  const json base = json::parse(config_text("MiniMaxAI--MiniMax-M2.7.json"));
  json c = base;
  c["attn_type_list"][7] = 0;  // MiniMax-01/M1's lightning (linear) attention
  json e = refusal(c);
  CHECK(e["path"] == "/hf_config/attn_type_list/7");
  CHECK(e["message"].get<std::string>().find("lightning") != std::string::npos);
  c = base;
  c["shared_intermediate_size"] = 1536;
  CHECK(refusal(c)["path"] == "/hf_config/shared_intermediate_size");
  c = base;
  c["qk_norm_type"] = "per_group";
  CHECK(refusal(c)["path"] == "/hf_config/qk_norm_type");
}

TEST_CASE("hf import: Kimi-K2.5 int4 (compressed-tensors): symmetric groups of 32, its ignore list applied") {
  // The checkpoint's text_config (kimi_k2) carries compressed-tensors pack-quantized int4: groups of 32,
  // "symmetric": true (a bf16 scale per group, no zero point), and an ignore list that keeps attention
  // (self_attn), the shared experts and the dense MLP (mlp.(gate|up|down)_proj) in bf16: only the routed
  // experts are int4. The older transformers' generation defaults it carries are set aside.
  const json r = understood_model(config_text("nvidia--Kimi-K2.5-NVFP4.json"));
  CHECK(r["family"] == "kimi_k2");
  CHECK(r["weights"]["dtype"] == "int4");
  CHECK(r["weights"]["attention_unquantized"] == true);
  CHECK(r["weights"]["dense_mlp_unquantized"] == true);
  CHECK(r["weights"]["group_zero_point"] == false);
  CHECK(r["kv_cache"]["dtype"] == "bf16");  // kv_cache_scheme null
  const double h = 7168, L = 61, V = 163840, H = 64;
  const double attn = (h * 1536 + 1536 + 1536 * H * (128 + 64)) + (h * (512 + 64) + 512 + 512 * H * (128 + 128)) + H * 128 * h;
  const double expert = 3 * h * 2048, shared = 3 * h * 2048, router = h * 384, dense = 3 * h * 18432, norms = 2 * h;
  const double total = L * (attn + norms) + dense + (L - 1) * (384 * expert + shared + router) + h + 2 * V * h;
  CHECK(count(r, "total_B") == doctest::Approx(total).epsilon(1e-12));
  // bf16 for all but the routed experts: 0.5 byte per weight + a 2-byte scale per 32.
  const double int4 = 0.5 + 2.0 / 32;
  const double bytes = (L * (attn + norms) + dense + (L - 1) * (shared + router) + h + 2 * V * h) * 2.0 +
                       (L - 1) * 384 * expert * int4;
  CHECK(weight_bytes(r) == doctest::Approx(bytes).epsilon(1e-12));
  for (const char* at : {"4K", "32K", "128K"}) CHECK(kv_bytes_per_token(r, at) == L * (512 + 64) * 2.0);
  // Asymmetric groups would carry a 2-byte zero point beside each scale.
  json c = json::parse(config_text("nvidia--Kimi-K2.5-NVFP4.json"));
  json& q = c["text_config"]["quantization_config"];
  q["config_groups"]["group_0"]["weights"]["symmetric"] = false;
  CHECK(weight_bytes(understood_model(c.dump())) == doctest::Approx(bytes + (L - 1) * 384 * expert * 2.0 / 32).epsilon(1e-12));
  // An 8-bit float KV scheme is the KV dtype; a scheme the engine does not price is refused at it.
  q["kv_cache_scheme"] = {{"num_bits", 8}, {"type", "float"}, {"dynamic", false}};
  CHECK(understood_model(c.dump())["kv_cache"]["dtype"] == "fp8");
  q["kv_cache_scheme"] = {{"num_bits", 4}, {"type", "float"}};
  CHECK(refusal(c)["path"] == "/hf_config/text_config/quantization_config/kv_cache_scheme");
  // Shared experts kept in bf16 while the dense MLP is quantized: the engine prices the two alike, refused.
  json d = json::parse(config_text("nvidia--Kimi-K2.5-NVFP4.json"));
  d["text_config"]["quantization_config"]["ignore"].erase(3);
  CHECK(refusal(d)["path"] == "/hf_config/text_config/quantization_config/ignore/2");
  // Two groups with different weights: one format cannot price both.
  json g = json::parse(config_text("nvidia--Kimi-K2.5-NVFP4.json"));
  json& groups = g["text_config"]["quantization_config"]["config_groups"];
  groups["group_1"] = groups["group_0"];
  groups["group_1"]["weights"]["num_bits"] = 8;
  CHECK(refusal(g)["path"] == "/hf_config/text_config/quantization_config/config_groups/group_1/weights");
}

TEST_CASE("hf import: a per-layer moe_layer_freq list places dense and MoE layers as first_k_dense_replace does") {
  const std::string ds = test::read_source_file("tests/data/hf/published/deepseek-ai--DeepSeek-V3.json");
  const json before = understood_model(ds);
  json c = json::parse(ds);
  c.erase("first_k_dense_replace");
  json freq = json::array();
  for (int i = 0; i < 61; ++i) freq.push_back(i < 3 ? 0 : 1);
  c["moe_layer_freq"] = freq;
  const json listed = understood_model(c.dump());
  CHECK(listed["params"] == before["params"]);
  CHECK(listed["layers_by_kind"] == before["layers_by_kind"]);
  // Any layer may be dense: a dense layer between MoE ones.
  c["moe_layer_freq"][30] = 0;
  CHECK(understood_model(c.dump())["experts"]["dense_layers"] == 4);
  c["moe_layer_freq"].erase(0);
  CHECK(refusal(c)["path"] == "/hf_config/moe_layer_freq");
}

TEST_CASE("hf import: Gemma-4 and MiMo-V2 head-shape keys are refused in a family that does not read them") {
  // gemma4 and mimo_v2_flash read their per-kind head shapes (test_hf_layer_shapes.cpp); in another
  // family the same keys are not understood and refuse the import, located at the first of them.
  json g = json::parse(config_text("google--gemma-3-27b-it.json"));
  g["text_config"]["global_head_dim"] = 512;
  g["text_config"]["num_global_key_value_heads"] = 2;
  json e = refusal(g);
  CHECK(e["path"] == "/hf_config/text_config/global_head_dim");
  CHECK(e["message"].get<std::string>().find("num_global_key_value_heads") != std::string::npos);
  // Gemma-3's file renamed gemma4 is not read with Gemma-3's transformers defaults: its text_config
  // omits vocab_size, which Gemma-4 configs give.
  json t = json::parse(config_text("google--gemma-3-27b-it.json"));
  t["model_type"] = "gemma4", t["text_config"]["model_type"] = "gemma4_text";
  REQUIRE_FALSE(t["text_config"].contains("vocab_size"));
  CHECK(refusal(t)["path"] == "/hf_config/text_config/vocab_size");
  json m = json::parse(config_text("meta-llama--Meta-Llama-3.1-70B.json"));
  m["swa_num_key_value_heads"] = 8;
  m["swa_head_dim"] = 192;
  e = refusal(m);
  CHECK(e["path"] == "/hf_config/swa_head_dim");
  CHECK(e["message"].get<std::string>().find("swa_num_key_value_heads") != std::string::npos);
}

TEST_CASE("hf import: a ModelOpt NVFP4 block inside config.json: its fp8 kv_cache_scheme and ignore list are read") {
  // The quantization_config of nvidia/Gemma-4-31B-IT-NVFP4 @ 4135a98a (as transcribed in a public test
  // fixture, file index id 70302083267): ModelOpt NVFP4 restated as config_groups (4-bit float, groups of
  // 16), an 8-bit float kv_cache_scheme, every layer's self_attn ignored. Applied to a Llama-3.1-70B.
  json c = json::parse(config_text("meta-llama--Meta-Llama-3.1-70B.json"));
  json ignore = json::array({"lm_head", "model.embed_vision*"});
  for (int l = 0; l < 80; ++l) ignore.push_back("model.language_model.layers." + std::to_string(l) + ".self_attn*");
  ignore.push_back("model.vision_tower*");
  const json weights = {{"dynamic", false}, {"num_bits", 4}, {"type", "float"}, {"group_size", 16}};
  c["quantization_config"] = {
      {"config_groups", {{"group_0", {{"input_activations", weights}, {"weights", weights}, {"targets", {"Linear"}}}}}},
      {"ignore", ignore},
      {"quant_algo", "NVFP4"},
      {"kv_cache_scheme", {{"dynamic", false}, {"num_bits", 8}, {"type", "float"}}},
      {"producer", {{"name", "modelopt"}, {"version", "0.37.0"}}},
      {"quant_method", "modelopt"}};
  const json r = understood_model(c.dump());
  CHECK(r["weights"]["dtype"] == "nvfp4");
  CHECK(r["weights"]["attention_unquantized"] == true);
  CHECK(r["kv_cache"]["dtype"] == "fp8");
  for (const char* at : {"4K", "32K", "128K"}) CHECK(kv_bytes_per_token(r, at) == 80 * 2 * 8 * 128 * 1.0);
  // config_groups that describe other weights than quant_algo are refused, not reconciled.
  c["quantization_config"]["config_groups"]["group_0"]["weights"]["group_size"] = 32;
  CHECK(refusal(c)["path"] == "/hf_config/quantization_config/config_groups");
}

TEST_CASE("hf import: DeepSeek-V3.2 and GLM-5 need their indexer keys, Nemotron-NAS its block_configs") {
  // deepseek_v32 / glm_moe_dsa mean DeepSeek sparse attention (an indexer with its own key cache, top-k
  // attention): a trimmed copy without the indexer keys is still no DeepSeek-V3 and is refused, naming
  // them; nemotron-nas means per-block layers (tests/unit/test_hf_nemotron_nas.cpp), never a plain Llama.
  json c = json::parse(test::read_source_file("tests/data/hf/published/deepseek-ai--DeepSeek-V3.json"));
  for (const char* type : {"deepseek_v32", "glm_moe_dsa", "nemotron-nas"}) {
    CAPTURE(type);
    c["model_type"] = type;
    const json e = refusal(c);
    CHECK(e["code"] == "missing_key");
    CHECK(e["path"] == (std::string(type) == "nemotron-nas" ? "/hf_config/block_configs" : "/hf_config/model_type"));
  }
  // With the indexer keys DeepSeek-V3.2 publishes (index_n_heads 64, index_head_dim 128, index_topk 2048),
  // the same config is read as DSA: its KV cache adds the indexer's FP8 key and fp32 scale (128 + 4 bytes)
  // per token and layer to the bf16 latent and rope key.
  c["model_type"] = "deepseek_v32";
  c["index_n_heads"] = 64, c["index_head_dim"] = 128, c["index_topk"] = 2048;
  const json r = understood_model(c.dump());
  for (const char* at : {"4K", "32K", "128K"}) CHECK(kv_bytes_per_token(r, at) == 61 * ((512 + 64) * 2.0 + 128 + 4));
}
