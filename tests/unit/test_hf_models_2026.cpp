// Published configs of 2026 models (tests/data/hf/published/SOURCES.md and
// tests/data/hf/refused/SOURCES.md; docs/models-2026-check.md is the survey):
// Nemotron-3 Ultra and Nemotron-3.5 give their blocks as the list
// layers_block_type instead of the string hybrid_override_pattern, and Ultra
// gives its depth only as that list's length. Both spellings read alike;
// each refused file is refused at a key it has.
#include <doctest/doctest.h>

#include "core/json_text.hpp"
#include "model/architecture.hpp"
#include "model/operators.hpp"
#include "hf_inspect.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace models2026 {

using json = nlohmann::json;

std::string m26_text(const std::string& file) { return test::read_source_file("tests/data/hf/" + file); }

}  // namespace models2026

using namespace models2026;

TEST_CASE("hf import: Nemotron-3 Ultra (nemotron_h, layers_block_type, no num_hidden_layers): 550B-A55B") {
  const json r = test::inspect_ok(m26_text("published/nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16.json"));
  CHECK(r["family"] == "nemotron_h");
  CHECK(r["layers"] == 108);
  CHECK(r["experts"]["latent_size"] == 2048);
  // 108 blocks from the list: 48 Mamba-2 (256 heads of 64, state 128, 8 groups, conv 4),
  // 12 attention (64 query and 2 KV heads of 128), 48 latent MoE: the router (8192 x 512), one
  // shared expert (up and down, 10240, squared ReLU), 512 routed experts (22 active) of 5120 at
  // the latent 2048 behind the 8192 -> 2048 and 2048 -> 8192 projections. One RMSNorm per
  // block and the final one; vocabulary 131072, untied head.
  const double h = 8192, V = 131072, heads = 256, d = heads * 64, bc = 2 * 8 * 128;
  const double mamba = h * (2 * d + bc + heads) + (d + bc) * (4 + 1) + 3 * heads + d + d * h;
  const double attention = h * (64 * 128 + 2 * 2 * 128) + 64 * 128 * h;
  const double expert = 2 * 2048 * 5120, shared = 2 * h * 10240, router = h * 512, latent = 2 * h * 2048;
  const double layers = 48 * mamba + 12 * attention + 48 * (512 * expert + shared + router + latent);
  const double total = layers + 108 * h + h + 2 * V * h;
  const double active = 48 * mamba + 12 * attention + 48 * (22 * expert + shared + router + latent) + 108 * h + h + V * h;
  CHECK(test::hf_params(r, "total_B") == doctest::Approx(total).epsilon(1e-12));
  CHECK(test::hf_params(r, "active_B") == doctest::Approx(active).epsilon(1e-12));
  // NVIDIA's name: 550B total, 55B active.
  CHECK(total / 1e9 == doctest::Approx(550).epsilon(0.03));
  CHECK(active / 1e9 == doctest::Approx(55).epsilon(0.03));
  // bf16 KV of 12 attention layers (2 KV heads of 128, keys and values) plus each sequence's
  // float32 Mamba state (mamba_ssm_cache_dtype): per layer 256 x 64 x 128 and the conv window.
  const double state = 48 * (heads * 64 * 128 + 3.0 * (d + bc)) * 4;
  CHECK(r["kv_cache"]["per_sequence_state_bytes"].get<double>() == state);
  for (const auto& [at, t] : {std::pair<const char*, double>{"4K", 4096}, {"32K", 32768}, {"128K", 131072}})
    CHECK(test::hf_kv(r, at) == doctest::Approx(12 * 2 * 2 * 128 * 2.0 + state / t).epsilon(1e-12));
  CHECK(r["weights"]["dtype"] == "bf16");
  CHECK(r["weights"]["GiB"].get<double>() * 1073741824.0 == doctest::Approx(2 * total).epsilon(1e-12));
  // Its MTP blocks (mtp_layers_block_type) are said, in the same one-character form.
  CHECK(r["mtp_layers"] == 0);
  CHECK(r["ignored_parts"].dump().find("'*E'") != std::string::npos);
}

TEST_CASE("hf import: Nemotron-3.5 Lightning's layers_block_type reads as the same blocks written as a pattern") {
  const json c = parse_json_text(m26_text("published/nvidia--NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4.json"));
  const json r = test::inspect_ok(safe_dump(c));
  // 23 Mamba-2, 23 MoE and 6 attention blocks of Nemotron-3 Nano's widths, in another order.
  const json nano = test::inspect_ok(m26_text("published/nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json"));
  CHECK(r["params"]["total_B"] == nano["params"]["total_B"]);
  CHECK(r["params"]["active_B"] == nano["params"]["active_B"]);
  CHECK(r["kv_cache"] == nano["kv_cache"]);
  CHECK(test::hf_params(r, "total_B") / 1e9 == doctest::Approx(31.6).epsilon(0.01));  // NVIDIA: 31.6B total
  std::string pattern;
  for (const json& k : c["layers_block_type"]) {
    const std::string s = k.get<std::string>();
    pattern += s == "mamba" ? 'M' : s == "attention" ? '*' : s == "moe" ? 'E' : '-';
  }
  json as_pattern = c;
  as_pattern.erase("layers_block_type");
  as_pattern["hybrid_override_pattern"] = pattern;
  const json p = test::inspect_ok(safe_dump(as_pattern));
  CHECK(p["architecture"]["layers"] == r["architecture"]["layers"]);
  CHECK(p["params"] == r["params"]);
  // Both spellings at once must agree.
  json both = c;
  both["hybrid_override_pattern"] = pattern;
  CHECK(test::inspect_ok(safe_dump(both))["params"] == r["params"]);
  both["hybrid_override_pattern"] = std::string(pattern.size(), 'M');
  const json e = test::inspect_refused(safe_dump(both));
  CHECK(e["code"] == "constraint_violation");
  CHECK(e["path"] == "/hf_config/layers_block_type");
}

TEST_CASE("hf import: a layers_block_type entry Sightline does not know, or a list of the wrong length, is refused at it") {
  json c = parse_json_text(m26_text("published/nvidia--NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4.json"));
  json unknown = c;
  unknown["layers_block_type"][7] = "retention";
  const json e = test::inspect_refused(safe_dump(unknown));
  CHECK(e["path"] == "/hf_config/layers_block_type/7");
  CHECK(e["message"].get<std::string>().find("retention") != std::string::npos);
  json shorter = c;
  shorter["layers_block_type"].erase(shorter["layers_block_type"].size() - 1);
  const json s = test::inspect_refused(safe_dump(shorter));
  CHECK(s["code"] == "constraint_violation");
  CHECK(s["message"].get<std::string>().find("num_hidden_layers is 52") != std::string::npos);
  json neither = c;
  neither.erase("layers_block_type");
  const json n = test::inspect_refused(safe_dump(neither));
  CHECK(n["code"] == "missing_key");
  CHECK(n["message"].get<std::string>().find("layers_block_type") != std::string::npos);
}

TEST_CASE("hf import: each refused 2026 config is refused at a key it has, naming what is not priced") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"MiniMaxAI--MiniMax-M3.json", "sparse_attention_config"},
      {"deepseek-ai--DeepSeek-V4-Flash.json", "compress_ratios"},
      {"deepseek-ai--DeepSeek-V4-Pro.json", "compress_ratios"},
      {"nvidia--DeepSeek-V4-Flash-NVFP4.json", "hc_mult"},
      {"sgl-project--DeepSeek-V4-Flash-FP8.json", "compress_ratios"},  // model_type deepseek_ref: refused by its keys
      {"stepfun-ai--Step-3.7-Flash.json", "share_expert_dim"},
      {"zai-org--GLM-5.2.json", "indexer_types"},
  };
  // Not a structured binding: CAPTURE's lambda cannot capture one before C++20
  // (clang refuses it; the sanitizer and PCH builds use clang).
  for (const auto& refused : cases) {
    const std::string& file = refused.first;
    const std::string& key = refused.second;
    CAPTURE(file);
    const json c = parse_json_text(m26_text("refused/" + file));
    const json e = test::inspect_refused(safe_dump(c));
    CHECK((e["code"] == "not_implemented" || e["code"] == "missing_key"));
    CHECK(e["message"].get<std::string>().find(key) != std::string::npos);
    // The path is a key of the user's own file (top level or inside text_config).
    std::string path = e["path"].get<std::string>();
    REQUIRE(path.rfind("/hf_config/", 0) == 0);
    path = path.substr(11);
    const json& where = path.rfind("text_config/", 0) == 0 ? c["text_config"] : c;
    if (path.rfind("text_config/", 0) == 0) path = path.substr(12);
    CHECK(where.contains(path));
  }
}

TEST_CASE("hf import: Kimi-K2.6 NVFP4: an ignore entry for a whole layer keeps its attention and dense MLP") {
  // ModelOpt NVFP4 in config.json; its ignore list keeps layer 0 whole ("language_model.model.layers.0*":
  // Kimi's one dense layer, attention and MLP), every other layer's self_attn and shared experts, and
  // the head. Only the routed experts are NVFP4 (0.5 byte a weight and an fp8 scale per 16).
  const json c = parse_json_text(m26_text("published/nvidia--Kimi-K2.6-NVFP4.json"));
  const json r = test::inspect_ok(safe_dump(c));
  CHECK(r["weights"]["dtype"] == "nvfp4");
  CHECK(r["weights"]["attention_unquantized"] == true);
  CHECK(r["weights"]["dense_mlp_unquantized"] == true);
  CHECK(r["kv_cache"]["dtype"] == "fp8");  // kv_cache_scheme: 8-bit float
  const double h = 7168, L = 61, V = 163840, H = 64;
  const double attn = (h * 1536 + 1536 + 1536 * H * (128 + 64)) + (h * (512 + 64) + 512 + 512 * H * (128 + 128)) + H * 128 * h;
  const double expert = 3 * h * 2048, shared = 3 * h * 2048, router = h * 384, dense = 3 * h * 18432, norms = 2 * h;
  const double total = L * (attn + norms) + dense + (L - 1) * (384 * expert + shared + router) + h + 2 * V * h;
  CHECK(test::hf_params(r, "total_B") == doctest::Approx(total).epsilon(1e-12));
  CHECK(total / 1e9 == doctest::Approx(1000).epsilon(0.03));  // Moonshot: 1T total
  const double bytes = (L * (attn + norms) + dense + (L - 1) * (shared + router) + h + 2 * V * h) * 2.0 +
                       (L - 1) * 384 * expert * (0.5 + 1.0 / 16);
  CHECK(r["weights"]["GiB"].get<double>() * 1073741824.0 == doctest::Approx(bytes).epsilon(1e-12));
  for (const char* at : {"4K", "32K", "128K"}) CHECK(test::hf_kv(r, at) == L * (512 + 64) * 1.0);
  // A whole MoE layer kept unquantized would leave its routed experts in bf16: not priced, refused at it.
  json moe = c;
  moe["quantization_config"]["ignore"][1] = "language_model.model.layers.5*";
  CHECK(test::inspect_refused(safe_dump(moe))["path"] == "/hf_config/quantization_config/ignore/1");
  json beyond = c;
  beyond["quantization_config"]["ignore"][1] = "language_model.model.layers.61*";
  CHECK(test::inspect_refused(safe_dump(beyond))["code"] == "invalid_value");
}

TEST_CASE("hf import: Qwen3-Coder-480B-A35B (qwen3_moe): qkv_bias is read as written") {
  const json c = parse_json_text(m26_text("published/Qwen--Qwen3-Coder-480B-A35B-Instruct.json"));
  const json r = test::inspect_ok(safe_dump(c));
  // 62 layers: 96 query and 8 KV heads of 128 with QK norm (two 128 vectors), no biases; 160 experts
  // (8 active) of 2560, SwiGLU; router 6144 x 160; two RMSNorms a layer; vocabulary 151936, untied.
  const double h = 6144, L = 62, V = 151936;
  const double total = L * test::qwen3_moe_layer(h, 96, 8, 128, 160, 2560, 160) + h + 2 * V * h;
  const double active = L * test::qwen3_moe_layer(h, 96, 8, 128, 160, 2560, 8) + h + V * h;
  CHECK(test::hf_params(r, "total_B") == doctest::Approx(total).epsilon(1e-12));
  CHECK(test::hf_params(r, "active_B") == doctest::Approx(active).epsilon(1e-12));
  CHECK(total / 1e9 == doctest::Approx(480).epsilon(0.03));  // the name: 480B total, 35B active
  CHECK(active / 1e9 == doctest::Approx(35).epsilon(0.03));
  for (const char* at : {"4K", "32K", "128K"}) CHECK(test::hf_kv(r, at) == L * 2 * 8 * 128 * 2.0);
  // qkv_bias true adds a bias to q, k and v in every layer.
  json biased = c;
  biased["qkv_bias"] = true;
  CHECK(test::hf_params(test::inspect_ok(safe_dump(biased)), "total_B") == doctest::Approx(total + L * (96 + 2 * 8) * 128).epsilon(1e-12));
}

TEST_CASE("hf import: Qwen3-Coder-480B-A35B's use_qk_norm is read, not warned about as not understood") {
  // The file writes use_qk_norm true; Qwen3-MoE's attention norms q and k in every layer
  // (vLLM qwen3_moe.py, Qwen3MoeAttention: q_norm and k_norm unconditional), which is priced.
  // It was reported as "not understood ... priced without them", which was not what was priced.
  const json c = parse_json_text(m26_text("published/Qwen--Qwen3-Coder-480B-A35B-Instruct.json"));
  const json r = test::inspect_ok(safe_dump(c));
  CHECK(r["warnings"].empty());
  CHECK(r["architecture"]["qk_norm"] == true);
  json off = c;
  off["use_qk_norm"] = false;
  const json e = test::inspect_refused(safe_dump(off));
  CHECK(e["path"] == "/hf_config/use_qk_norm");
  CHECK(e["code"] == "not_implemented");
}

TEST_CASE("hf import: Qwen3.5/3.6 output_gate_type (the Gated DeltaNet output gate) is read, elementwise") {
  // Qwen3.6-27B's text_config says "swish"; vLLM's RMSNormGated takes silu (swish), or sigmoid: the
  // same sizes and work. Shown on Qwen3.5-122B-A10B's published file, which leaves it out.
  const json c = parse_json_text(m26_text("published/Qwen--Qwen3.5-122B-A10B.json"));
  const json base = test::inspect_ok(safe_dump(c));
  for (const char* gate : {"swish", "silu", "sigmoid"}) {
    json v = c;
    v["text_config"]["output_gate_type"] = gate;
    const json r = test::inspect_ok(safe_dump(v));
    CHECK(r["params"] == base["params"]);
    CHECK(r["kv_cache"] == base["kv_cache"]);
  }
  json other = c;
  other["text_config"]["output_gate_type"] = "relu";
  const json e = test::inspect_refused(safe_dump(other));
  CHECK(e["path"] == "/hf_config/text_config/output_gate_type");
  CHECK(e["code"] == "invalid_value");
}

// ModelOpt's hf_quant_config.json as nvidia's NVFP4 repositories publish it
// (tests/data/hf/published/SOURCES.md): NVFP4 weights with group_size 16, FP8 KV,
// and an exclude_modules list, given beside the model's config.json.
namespace models2026 {

json with_quant(const std::string& config, const std::string& quant) {
  return json{{"hf_config", parse_json_text(m26_text("published/" + config))},
              {"hf_quant_config", parse_json_text(m26_text("published/" + quant))}};
}

// A checkpoint whose only NVFP4 weights are its routed experts (attention, dense MLPs and shared
// experts kept bf16, FP8 KV): its weight bytes are the bf16 model's less the `experts` weights at
// 2 bytes, plus them at NVFP4's 0.5625 byte (4 bits and an fp8 scale per 16).
json only_experts_nvfp4(const std::string& config, const std::string& quant, double experts) {
  const json r = test::inspect_ok(safe_dump(with_quant(config, quant)));
  CHECK(r["weights"]["dtype"] == "nvfp4");
  CHECK(r["weights"]["attention_unquantized"] == true);
  CHECK(r["weights"]["dense_mlp_unquantized"] == true);
  CHECK(r["kv_cache"]["dtype"] == "fp8");
  const json bf16 = test::inspect_ok(m26_text("published/" + config));
  CHECK(test::hf_weight_bytes(r) == doctest::Approx(test::hf_weight_bytes(bf16) - 2 * experts + 0.5625 * experts).epsilon(1e-9));
  return r;
}

}  // namespace models2026

TEST_CASE("hf import: ModelOpt NVFP4 hf_quant_config.json (group_size 16) is read, not refused as structure") {
  // nvidia/Qwen3-235B-A22B-NVFP4: quant_algo NVFP4, kv_cache_quant_algo FP8, group_size 16, every
  // router (mlp.gate) and the LM head excluded. group_size was refused as a key "whose name suggests
  // structure", so every NVFP4 hf_quant_config.json was refused.
  const json c = with_quant("Qwen--Qwen3-235B-A22B.json", "nvidia--Qwen3-235B-A22B-NVFP4_hf_quant.json");
  const json r = test::inspect_ok(safe_dump(c));
  CHECK(r["weights"]["dtype"] == "nvfp4");
  CHECK(r["kv_cache"]["dtype"] == "fp8");
  CHECK(r["weights"]["attention_unquantized"] == false);
  // 94 layers x 4 KV heads x 128 x (K + V) x 1 byte.
  for (const char* at : {"4K", "32K", "128K"}) CHECK(test::hf_kv(r, at) == 94 * 4 * 128 * 2 * 1.0);
  // NVFP4 is 4 bits plus an fp8 scale per 16 values (0.5625 byte); the embedding, the LM head and
  // the two block norms of each layer and the final one stay bf16 (the per-head q/k norms are
  // priced with their layer, as for FP8).
  const double h = 4096, V = 151936, total = test::hf_params(r, "total_B");
  const double bf16 = 2 * V * h + 94 * 2 * h + h;
  CHECK(test::hf_weight_bytes(r) == doctest::Approx(0.5625 * (total - bf16) + 2 * bf16).epsilon(1e-9));
  // Another group size is another format; FP8 has none.
  json other = c;
  other["hf_quant_config"]["quantization"]["group_size"] = 32;
  json e = test::inspect_refused(safe_dump(other));
  CHECK(e["path"] == "/hf_quant_config/quantization/group_size");
  CHECK(e["code"] == "constraint_violation");
  other["hf_quant_config"]["quantization"]["group_size"] = 16;
  other["hf_quant_config"]["quantization"]["quant_algo"] = "FP8";
  e = test::inspect_refused(safe_dump(other));
  CHECK(e["path"] == "/hf_quant_config/quantization/group_size");
}

TEST_CASE("hf import: attention listed projection by projection; the MTP layer's entry belongs to the draft") {
  // nvidia/DeepSeek-V3.2-NVFP4 keeps q_a, q_b, kv_a, kv_b and the indexer of every layer in bf16,
  // quantizes o_proj, and lists the MTP layer (model.layers.61*, after the 61 layers). It was refused
  // at the MTP entry ("names layer 61 but the model has 61 layers"); read as "attention stays bf16"
  // it would price o_proj (61 x 128 x 128 x 7168 weights) in bf16. It is read as bf16 attention whose
  // output projection is NVFP4 (CheckpointQuant::attention_out_quantized).
  json c = with_quant("nvidia--DeepSeek-V3.2-NVFP4.json", "nvidia--DeepSeek-V3.2-NVFP4_hf_quant.json");
  const json r = test::inspect_ok(safe_dump(c));
  CHECK(r["weights"]["dtype"] == "nvfp4");
  CHECK(r["weights"]["attention_unquantized"] == true);
  CHECK(r["weights"]["attention_output_quantized"] == true);
  // With o_proj listed too the whole attention is bf16: the o_proj weights cost 2 bytes instead of
  // NVFP4's 0.5625.
  json& list = c["hf_quant_config"]["quantization"]["exclude_modules"];
  json all = c;
  for (int l = 0; l < 61; ++l) all["hf_quant_config"]["quantization"]["exclude_modules"].push_back("model.layers." + std::to_string(l) + ".self_attn.o_proj");
  const json whole = test::inspect_ok(safe_dump(all));
  CHECK(whole["weights"]["attention_output_quantized"] == false);
  const double o_proj = 61 * 128 * 128 * 7168.0;
  CHECK(test::hf_weight_bytes(whole) - test::hf_weight_bytes(r) == doctest::Approx((2 - 0.5625) * o_proj).epsilon(1e-9));
  // The step reads o_proj at NVFP4's bytes and the rest of the attention at bf16's (TP 1, decode).
  const ModelArch m = read_model(c, "/model");
  Precision p;
  p.weights = Dtype::NVFP4;
  apply_checkpoint_layout(m.quant, p);
  BatchShape batch;
  batch.seqs.assign(4, SeqChunk{1, 4096});
  const StepOperators step = build_forward_step(m, p, ParallelLayout{}, batch, StepOptions{});
  auto weight_of = [&](const std::string& name) {
    for (const Operator& op : step.ops)
      if (op.name == name) return op.weight_bytes;
    FAIL("no operator " << name);
    return 0.0;
  };
  CHECK(weight_of("attn_post_proj") == doctest::Approx(128 * 128 * 7168.0 * 0.5625));
  CHECK(weight_of("attn_q_b_proj") == doctest::Approx(1536 * 128 * 192.0 * 2));
  // A piece of the indexer alone is not the indexer: refused at that entry.
  json piece = c;
  piece["hf_quant_config"]["quantization"]["exclude_modules"][1] = "model.layers.0.self_attn.indexer.wk";
  CHECK(test::inspect_refused(safe_dump(piece))["path"] == "/hf_quant_config/quantization/exclude_modules/1");
  // o_proj listed in one layer only: two formats for the output projections, refused.
  json one = c;
  one["hf_quant_config"]["quantization"]["exclude_modules"].push_back("model.layers.0.self_attn.o_proj");
  CHECK(test::inspect_refused(safe_dump(one))["code"] == "not_implemented");
  // The indexer left out as well: more than o_proj quantized, refused at the layer's first entry.
  json without_indexer = json::array();
  for (const json& x : list)
    if (x.get<std::string>().find("indexer") == std::string::npos) without_indexer.push_back(x);
  list = without_indexer;
  json e = test::inspect_refused(safe_dump(c));
  CHECK(e["path"] == "/hf_quant_config/quantization/exclude_modules/1");  // model.layers.0.self_attn.kv_a_proj_with_mqa
  CHECK(e["message"].get<std::string>().find("but not indexer, o_proj") != std::string::npos);
  // A layer number past the model and its MTP layers is still refused.
  all["hf_quant_config"]["quantization"]["exclude_modules"].push_back("model.layers.62*");
  e = test::inspect_refused(safe_dump(all));
  CHECK(e["path"] == "/hf_quant_config/quantization/exclude_modules/" +
                         std::to_string(all["hf_quant_config"]["quantization"]["exclude_modules"].size() - 1));
}

TEST_CASE("hf import: Gemma-4-26B-A4B NVFP4: the dense mlp beside the experts kept in bf16") {
  // nvidia/Gemma-4-26B-A4B-NVFP4's hf_quant_config.json excludes each layer's mlp*, router* and
  // self_attn*. In Gemma-4 "mlp" is the dense MLP beside the experts (vLLM gemma4.py
  // Gemma4DecoderLayer: self.mlp, self.router, self.moe), priced as the ungated shared expert;
  // the routed experts are NVFP4. It was refused at the first mlp* entry.
  // Routed experts: 30 layers x 128 x 3 x 2816 x 704.
  only_experts_nvfp4("google--gemma-4-26B-A4B.json", "nvidia--Gemma-4-26B-A4B-NVFP4_hf_quant.json", 30 * 128 * 3 * 2816.0 * 704);
  const json c = with_quant("google--gemma-4-26B-A4B.json", "nvidia--Gemma-4-26B-A4B-NVFP4_hf_quant.json");
  // The dense mlp of some layers only, or "mlp*" in a family whose experts sit inside "mlp", is refused.
  json some = c;
  some["hf_quant_config"]["quantization"]["exclude_modules"].erase(2);  // model.language_model.layers.0.mlp*
  CHECK(test::inspect_refused(safe_dump(some))["code"] == "not_implemented");
  json qwen = with_quant("Qwen--Qwen3-235B-A22B.json", "nvidia--Qwen3-235B-A22B-NVFP4_hf_quant.json");
  qwen["hf_quant_config"]["quantization"]["exclude_modules"].push_back("model.layers.0.mlp*");
  const json e = test::inspect_refused(safe_dump(qwen));
  CHECK(e["path"] == "/hf_quant_config/quantization/exclude_modules/95");
}

TEST_CASE("hf import: GLM-5.1 NVFP4: whole dense layers, shared experts, attention and the MTP layer kept bf16") {
  // nvidia/GLM-5.1-NVFP4's hf_quant_config.json excludes the three dense layers whole
  // ("model.layers.0*", "model.layers.1.*"), each MoE layer's self_attn* (with its DSA indexer) and
  // mlp.shared_experts*, and the MTP layer after the 78 ("model.layers.78*"), which was refused as
  // "names layer 78 but the model has 78 layers". Only the routed experts are NVFP4.
  // Routed experts: 75 layers x 256 x 3 x 6144 x 2048.
  const json r = only_experts_nvfp4("zai-org--GLM-5.1.json", "nvidia--GLM-5.1-NVFP4_hf_quant.json", 75 * 256 * 3 * 6144.0 * 2048);
  // 78 layers of the bf16 latent and rope key (512 + 64) and the indexer's FP8 key and scale (128 + 4),
  // the latent now FP8 (kv_cache_quant_algo), one byte each.
  for (const char* at : {"4K", "32K", "128K"}) CHECK(test::hf_kv(r, at) == 78 * (512 + 64 + 128 + 4) * 1.0);
}

TEST_CASE("hf import: Qwen3.6-27B (qwen3_5, text_config qwen3_5_text): a dense Gated DeltaNet hybrid") {
  const json r = test::inspect_ok(m26_text("published/nvidia--Qwen3.6-27B-NVFP4.json"));
  CHECK(r["family"] == "qwen3_5_text");
  CHECK(r["experts"].is_null());
  CHECK(r["mtp_layers"] == 1);
  // hidden 5120, 64 layers (layer_types: 3 linear + 1 full, 16 times): 48 Gated DeltaNet (16 key heads
  // and 48 value heads of 128, conv 4, a per-value-head decay and step, a head-width gated norm) and
  // 16 full attention (24 query heads doubled for the output gate, 4 KV heads of 256, QK norm); a
  // SwiGLU MLP of 17408 in every layer; two RMSNorms a layer; vocabulary 248320, untied.
  const double h = 5120, V = 248320, kd = 16 * 128, vd = 48 * 128;
  const double attn = h * (2 * 24 * 256 + 2 * 4 * 256) + 24 * 256 * h + 2 * 256;
  const double linear = h * (2 * kd + 2 * vd) + h * 2 * 48 + (2 * kd + vd) * 4 + 2 * 48 + 128 + vd * h;
  const double layer_rest = 3 * h * 17408 + 2 * h;
  const double total = 16 * attn + 48 * linear + 64 * layer_rest + h + 2 * V * h;
  CHECK(test::hf_params(r, "total_B") == doctest::Approx(total).epsilon(1e-12));
  CHECK(test::hf_params(r, "active_B") == doctest::Approx(total - V * h).epsilon(1e-12));
  CHECK(total / 1e9 == doctest::Approx(27).epsilon(0.005));  // the name: 27B
  // KV: 16 layers x 2 x 4 heads x 256 in bf16 per token, plus each DeltaNet layer's float32
  // (mamba_ssm_dtype) 48 x 128 x 128 state and conv window of 3 over q, k, v, per sequence.
  const double state = 48.0 * (48 * 128 * 128 + 3 * (2 * kd + vd)) * 4;
  CHECK(r["kv_cache"]["per_sequence_state_bytes"].get<double>() == state);
  for (const auto& [at, t] : {std::pair<const char*, double>{"4K", 4096}, {"32K", 32768}, {"128K", 131072}})
    CHECK(test::hf_kv(r, at) == doctest::Approx(16 * 2 * 4 * 256 * 2.0 + state / t).epsilon(1e-12));
  CHECK(test::hf_kv(r, "4K") == 103840);
  // This copy leaves out the checkpoint's MIXED_PRECISION quantization_config: read alone, bf16.
  CHECK(r["weights"]["dtype"] == "bf16");
  CHECK(test::hf_weight_bytes(r) == doctest::Approx(2 * total).epsilon(1e-12));
}
