// Families read by another family's reader plus their own keys
// (engine/model/hf_borrowed_families.cpp): GLM-4.7-Flash (glm4_moe_lite, as
// DeepSeek-V3's MLA + MoE), MiMo-7B (mimo, as Qwen2 with an MTP layer) and
// Ling-lite-1.5 (bailing_moe). Each published config (tests/data/hf/published/
// SOURCES.md) against its architecture written out term by term, and each key
// those families read differently refused at the key when it says otherwise.
#include <doctest/doctest.h>

#include "core/json_text.hpp"
#include "hf_inspect.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace borrowed {

using json = nlohmann::json;

std::string published_text(const std::string& file) { return test::read_source_file("tests/data/hf/published/" + file); }
json published_json(const std::string& file) { return parse_json_text(published_text(file)); }

// DeepSeek-style MLA: q_a (hidden x q_lora) and its norm, q_b (q_lora x heads x (nope + rope)),
// kv_a (hidden x (kv_lora + rope)) and its norm, kv_b (kv_lora x heads x (nope + v)), o (heads x v x hidden).
double mla_weights(double h, double heads, double q_lora, double kv_lora, double nope, double rope, double v) {
  return h * q_lora + q_lora + q_lora * heads * (nope + rope) + h * (kv_lora + rope) + kv_lora + kv_lora * heads * (nope + v) +
         heads * v * h;
}

}  // namespace borrowed

using namespace borrowed;
using test::hf_kv;
using test::hf_params;
using test::hf_weight_bytes;

TEST_CASE("hf import: GLM-4.7-Flash (glm4_moe_lite) reads as MLA + MoE: 30B total") {
  const json r = test::inspect_ok(published_text("zai-org--GLM-4.7-Flash.json"));
  CHECK(r["family"] == "glm4_moe_lite");
  CHECK(r["experts"]["routed"] == 64);
  CHECK(r["experts"]["top_k"] == 4);
  CHECK(r["experts"]["shared"] == 1);
  CHECK(r["experts"]["dense_layers"] == 1);
  CHECK(r["mtp_layers"] == 0);  // AIC's trimmed copy has no num_nextn_predict_layers
  // hidden 2048, 47 layers: layer 0 a dense SwiGLU MLP of 10240, 46 MoE layers of 64 experts of 1536
  // (top-4) plus one shared expert of 1536 and a 2048 x 64 router; 20 heads of MLA (q_lora 768,
  // kv_lora 512, nope 192, rope 64, v 256); two RMSNorms a layer, vocabulary 154880, untied head.
  const double h = 2048, V = 154880;
  const double attn = mla_weights(h, 20, 768, 512, 192, 64, 256);
  const double expert = 3 * h * 1536, dense = 3 * h * 10240, router = h * 64, norms = 2 * h;
  const double total = (attn + dense + norms) + 46 * (attn + 64 * expert + expert + router + norms) + h + 2 * V * h;
  const double active = (attn + dense + norms) + 46 * (attn + 4 * expert + expert + router + norms) + h + V * h;
  CHECK(hf_params(r, "total_B") == doctest::Approx(total).epsilon(1e-12));
  CHECK(hf_params(r, "active_B") == doctest::Approx(active).epsilon(1e-12));
  CHECK(total == 29943390976.0);
  CHECK(total / 1e9 == doctest::Approx(30.0).epsilon(0.03));  // Z.ai: "30B-A3B"
  // The latent (512) and the rope key (64) of each layer, bf16.
  for (const char* at : {"4K", "32K", "128K"}) CHECK(hf_kv(r, at) == 47 * (512 + 64) * 2.0);
  CHECK(r["weights"]["dtype"] == "bf16");
  CHECK(hf_weight_bytes(r) == doctest::Approx(2 * total).epsilon(1e-12));
}

TEST_CASE("hf import: glm4_moe_lite's head_dim and mlp_layer_types must agree with the MLA and MoE keys") {
  const json base = published_json("zai-org--GLM-4.7-Flash.json");
  json c = base;
  c["head_dim"] = 256;  // transformers maps head_dim onto qk_rope_head_dim (64)
  json e = test::inspect_refused(c.dump());
  CHECK(e["code"] == "constraint_violation");
  CHECK(e["path"] == "/hf_config/head_dim");
  // transformers' per-layer list, saying what first_k_dense_replace says: read, the same model.
  c = base;
  c["mlp_layer_types"] = json::array({"dense"});
  for (int i = 1; i < 47; ++i) c["mlp_layer_types"].push_back("sparse");
  CHECK(test::inspect_ok(c.dump())["params"] == test::inspect_ok(base.dump())["params"]);
  c["mlp_layer_types"][5] = "dense";
  e = test::inspect_refused(c.dump());
  CHECK(e["path"] == "/hf_config/mlp_layer_types/5");
  // Its MTP layer, when the config names one, is DeepSeek's module (priced as the draft).
  c = base;
  c["num_nextn_predict_layers"] = 1;
  CHECK(test::inspect_ok(c.dump())["mtp_layers"] == 1);
}

TEST_CASE("hf import: MiMo-7B-Base (mimo) reads as Qwen2 with one MTP layer") {
  const json r = test::inspect_ok(published_text("XiaomiMiMo--MiMo-7B-Base.json"));
  CHECK(r["family"] == "mimo");
  CHECK(r["mtp_layers"] == 1);
  // hidden 4096, 36 layers, 32 query and 8 KV heads of 128 with q/k/v biases (no output bias: Qwen2's
  // attention), SwiGLU MLP 11008, two RMSNorms a layer, vocabulary 151680, untied head.
  const double h = 4096, V = 151680, qkv = 32 * 128 + 2 * 8 * 128;
  const double layer = h * qkv + qkv + 32 * 128 * h + 3 * h * 11008 + 2 * h;
  const double total = 36 * layer + h + 2 * V * h;
  CHECK(hf_params(r, "total_B") == doctest::Approx(total).epsilon(1e-12));
  CHECK(hf_params(r, "active_B") == doctest::Approx(total - V * h).epsilon(1e-12));
  CHECK(total == 7622619136.0);  // + 0.21 B MTP layer = 7.83 B; the name rounds to "7B"
  // The MTP layer: one more decoder layer, the [hidden; embedding] -> hidden projection and three
  // norms (vLLM mimo_mtp.py: token_layernorm, hidden_layernorm, final_layernorm); head shared.
  CHECK(hf_params(r, "mtp_B") == doctest::Approx(layer + 2 * h * h + 3 * h).epsilon(1e-12));
  for (const char* at : {"4K", "32K", "128K"}) CHECK(hf_kv(r, at) == 36 * 2 * 8 * 128 * 2.0);
  CHECK(hf_weight_bytes(r) == doctest::Approx(2 * total).epsilon(1e-12));
  // use_sliding_window false: no layer is windowed (sliding_window 32768 is read and switched off).
  CHECK(r["layers_by_kind"].size() == 1);
  // Qwen2's attention has its q/k/v biases whatever attention_bias says: false is not guessed at.
  json c = published_json("XiaomiMiMo--MiMo-7B-Base.json");
  c["attention_bias"] = false;
  const json e = test::inspect_refused(c.dump());
  CHECK(e["path"] == "/hf_config/attention_bias");
  CHECK(e["code"] == "not_implemented");
}

TEST_CASE("hf import: Ling-lite-1.5 (bailing_moe): 64 experts top-6 and two shared experts in every layer") {
  const json r = test::inspect_ok(published_text("inclusionAI--Ling-lite-1.5.json"));
  CHECK(r["family"] == "bailing_moe");
  CHECK(r["experts"]["routed"] == 64);
  CHECK(r["experts"]["top_k"] == 6);
  CHECK(r["experts"]["shared"] == 2);
  CHECK(r["experts"]["moe_layers"] == 28);
  // hidden 2048, 28 layers, 16 query and 4 KV heads of 128 (one fused QKV projection, no biases),
  // 64 SwiGLU experts of 1408, the shared MLP of 2 x 1408 (vLLM bailing_moe.py), a 2048 x 64 router,
  // two RMSNorms a layer, vocabulary 126464, untied head.
  const double h = 2048, V = 126464;
  const double attn = h * (16 * 128 + 2 * 4 * 128) + 16 * 128 * h;
  const double expert = 3 * h * 1408, shared = 2 * expert, router = h * 64, norms = 2 * h;
  const double total = 28 * (attn + 64 * expert + shared + router + norms) + h + 2 * V * h;
  const double active = 28 * (attn + 6 * expert + shared + router + norms) + h + V * h;
  CHECK(hf_params(r, "total_B") == doctest::Approx(total).epsilon(1e-12));
  CHECK(hf_params(r, "active_B") == doctest::Approx(active).epsilon(1e-12));
  // inclusionAI: 16.8B total, 2.75B activated (the embedding counted).
  CHECK(total / 1e9 == doctest::Approx(16.8).epsilon(0.01));
  CHECK((active + V * h) / 1e9 == doctest::Approx(2.75).epsilon(0.01));
  for (const char* at : {"4K", "32K", "128K"}) CHECK(hf_kv(r, at) == 28 * 2 * 4 * 128 * 2.0);
  CHECK(hf_weight_bytes(r) == doctest::Approx(2 * total).epsilon(1e-12));
}

TEST_CASE("hf import: bailing_moe switches the engine does not price are refused at the key") {
  const json base = published_json("inclusionAI--Ling-lite-1.5.json");
  json c = base;
  c["use_bias"] = true;  // biases everywhere but the routed experts
  CHECK(test::inspect_refused(c.dump())["path"] == "/hf_config/use_bias");
  c = base;
  c["norm_softmax"] = true;
  CHECK(test::inspect_refused(c.dump())["path"] == "/hf_config/norm_softmax");
  c = base;
  c["moe_shared_expert_intermediate_size"] = 512;  // a width vLLM's reader ignores: not guessed either way
  CHECK(test::inspect_refused(c.dump())["path"] == "/hf_config/moe_shared_expert_intermediate_size");
  // Dense leading layers (first_k_dense_replace) take the dense MLP of intermediate_size.
  c = base;
  c["first_k_dense_replace"] = 2;
  const json two = test::inspect_ok(c.dump());
  CHECK(two["experts"]["dense_layers"] == 2);
  CHECK(two["experts"]["moe_layers"] == 26);
  // q/k/v biases when use_qkv_bias says so: 16 x 128 + 2 x 4 x 128 a layer more.
  c = base;
  c["use_qkv_bias"] = true;
  CHECK(hf_params(test::inspect_ok(c.dump()), "total_B") - hf_params(test::inspect_ok(base.dump()), "total_B") ==
        doctest::Approx(28 * (16 * 128 + 2 * 4 * 128)).epsilon(1e-6));
}

TEST_CASE("hf import: OLMo-2 and OLMo-3 read as Llama layers with q/k norms over the whole projections") {
  // A real Llama config (Meta-Llama-3.1-70B) relabelled: the same layers plus OLMo's q_norm
  // (64 heads x 128) and k_norm (8 KV heads x 128) in each of its 80 layers.
  const json llama = published_json("meta-llama--Meta-Llama-3.1-70B.json");
  const json base = test::inspect_ok(llama.dump());
  for (const char* type : {"olmo2", "olmo3"}) {
    json c = llama;
    c["model_type"] = type;
    c["architectures"] = json::array({std::string(type) == "olmo2" ? "Olmo2ForCausalLM" : "Olmo3ForCausalLM"});
    const json r = test::inspect_ok(c.dump());
    CAPTURE(type);
    CHECK(r["family"] == type);
    const double qk_norms = 80.0 * (64 * 128 + 8 * 128);
    CHECK(hf_params(r, "total_B") == doctest::Approx(hf_params(base, "total_B") + qk_norms).epsilon(1e-12));
    for (const char* at : {"4K", "32K", "128K"}) CHECK(hf_kv(r, at) == hf_kv(base, at));
  }
}
