// Attention layer kinds with their own head shape (model/architecture.hpp
// AttentionShape), read from published configs (tests/data/hf/published/SOURCES.md):
// Gemma-4's global layers (global_head_dim, num_global_key_value_heads, values
// from the keys) and its dense MLP beside the experts; MiMo-V2-Flash's sliding
// layers (swa_*) beside full ones, values narrower than keys. Each figure is the
// architecture's count written out here, checked against vLLM's gemma4.py and
// mimo_v2_flash.py (docs/models-2026-check.md).
#include <doctest/doctest.h>

#include <fstream>
#include <regex>

#include "core/json_text.hpp"
#include "hf_inspect.hpp"
#include "model/operators.hpp"
#include "model/param_count.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace layer_shapes {

using json = nlohmann::json;

std::string shapes_text(const std::string& file) { return test::read_source_file("tests/data/hf/published/" + file); }

using test::step_op;

}  // namespace layer_shapes

using namespace layer_shapes;

TEST_CASE("hf import: Gemma-4 26B-A4B: global layers' own head shape, a dense MLP beside 128 experts") {
  const json r = test::inspect_ok(shapes_text("google--gemma-4-26B-A4B.json"));
  CHECK(r["family"] == "gemma4_text");
  // 30 layers: 25 sliding (16 query / 8 KV heads of 256, window 1024) and 5 global (16 query / 2 KV
  // heads of 512, values from the key projection: no v_proj). q_norm and k_norm of the head width.
  // Every layer: a GeGLU dense MLP of 2112 beside 128 experts of 704 (top-8) and a router 2816 x 128;
  // eight vectors of 2816 (Gemma's four norms, the MoE block's three and the router's scale).
  // Vocabulary 262144, tied.
  const double h = 2816, V = 262144;
  const double sliding = h * (16 * 256 + 2 * 8 * 256) + 16 * 256 * h + 2 * 256;
  const double global = h * (16 * 512 + 2 * 512) + 16 * 512 * h + 2 * 512;
  const double expert = 3 * h * 704, dense = 3 * h * 2112, rest = dense + h * 128 + 8 * h;
  const double total = 25 * sliding + 5 * global + 30 * (128 * expert + rest) + h + V * h;
  const double active = 25 * sliding + 5 * global + 30 * (8 * expert + rest) + h + V * h;
  CHECK(test::hf_params(r, "total_B") == doctest::Approx(total).epsilon(1e-9));
  CHECK(test::hf_params(r, "active_B") == doctest::Approx(active).epsilon(1e-9));
  // Google's card: 25.2B total, 3.8B active.
  CHECK(total / 1e9 == doctest::Approx(25.2).epsilon(0.03));
  CHECK(active / 1e9 == doctest::Approx(3.8).epsilon(0.03));
  // bf16 KV: K and V of 5 global layers (2 heads x (512 + 512)) for every token, of 25 sliding
  // layers (8 heads x (256 + 256)) for the last 1024 tokens.
  for (const auto& [at, t] : {std::pair<const char*, double>{"4K", 4096}, {"32K", 32768}, {"128K", 131072}})
    CHECK(test::hf_kv(r, at) == doctest::Approx(5 * 2 * 1024 * 2.0 + 25 * 8 * 512 * 2.0 * 1024 / t).epsilon(1e-12));
  CHECK(test::hf_kv(r, "4K") == 71680);
  CHECK(r["weights"]["GiB"].get<double>() * 1073741824.0 == doctest::Approx(2 * total).epsilon(1e-9));
  const std::string kinds = r["layers_by_kind"].dump();
  CHECK(kinds.find("16 query / 2 KV heads, head_dim 512, values from the key projection") != std::string::npos);
}

TEST_CASE("hf import: Gemma-4 31B (NVFP4 checkpoint): dense, global layers at 4 KV heads of 512, fp8 KV") {
  const json r = test::inspect_ok(shapes_text("nvidia--Gemma-4-31B-IT-NVFP4.json"));
  CHECK(r["experts"].is_null());
  // 60 layers: 50 sliding (32 query / 16 KV heads of 256), 10 global (32 / 4 of 512, keys as values);
  // a GeGLU MLP of 21504; Gemma's four norms; vocabulary 262144, tied.
  const double h = 5376, V = 262144;
  const double sliding = h * (32 * 256 + 2 * 16 * 256) + 32 * 256 * h + 2 * 256;
  const double global = h * (32 * 512 + 4 * 512) + 32 * 512 * h + 2 * 512;
  const double layer = 3 * h * 21504 + 4 * h;
  const double total = 50 * sliding + 10 * global + 60 * layer + h + V * h;
  CHECK(test::hf_params(r, "total_B") == doctest::Approx(total).epsilon(1e-9));
  // Dense, the tied table read as the LM head: every parameter is active.
  CHECK(test::hf_params(r, "active_B") == doctest::Approx(total).epsilon(1e-9));
  CHECK(total / 1e9 == doctest::Approx(30.7).epsilon(0.03));  // Google's card: 30.7B
  // The ModelOpt block: NVFP4 weights, every self_attn kept unquantized, fp8 KV (1 byte).
  CHECK(r["weights"]["dtype"] == "nvfp4");
  CHECK(r["weights"]["attention_unquantized"] == true);
  CHECK(r["kv_cache"]["dtype"] == "fp8");
  for (const auto& [at, t] : {std::pair<const char*, double>{"4K", 4096}, {"32K", 32768}, {"128K", 131072}})
    CHECK(test::hf_kv(r, at) == doctest::Approx(10 * 4 * 1024 * 1.0 + 50 * 16 * 512 * 1.0 * 1024 / t).epsilon(1e-12));
  // Weight bytes: the MLPs in NVFP4 (4 bits and one fp8 scale per 16: 0.5625 bytes a weight); the
  // attention (ignored), norms and the tied embedding in bf16.
  const double mlp = 60 * 3 * h * 21504;
  CHECK(test::hf_weight_bytes(r) == doctest::Approx(mlp * 0.5625 + 2 * (total - mlp)).epsilon(1e-9));
}

TEST_CASE("hf import: MiMo-V2-Flash: sliding layers' own heads (swa_*), values narrower than keys") {
  const json r = test::inspect_ok(shapes_text("XiaomiMiMo--MiMo-V2-Flash.json"));
  CHECK(r["family"] == "mimo_v2_flash");
  // 48 layers (hybrid_layer_pattern): 9 full (64 query / 4 KV heads, keys 192, values 128) and 39
  // sliding, window 128 (64 / 8 KV heads, keys 192, values 128, a sink logit per head). Layer 0 a
  // SwiGLU MLP of 16384, the rest 256 experts of 2048 (top-8) with a router and its correction
  // bias (256). Two norms a layer; vocabulary 152576, untied.
  const double h = 4096, V = 152576;
  const double full = h * (64 * 192 + 4 * 192 + 4 * 128) + 64 * 128 * h;
  const double swa = h * (64 * 192 + 8 * 192 + 8 * 128) + 64 * 128 * h + 64;
  const double expert = 3 * h * 2048, router = h * 256 + 256, dense = 3 * h * 16384;
  const double total = 9 * full + 39 * swa + dense + 47 * (256 * expert + router) + 48 * 2 * h + h + 2 * V * h;
  const double active = 9 * full + 39 * swa + dense + 47 * (8 * expert + router) + 48 * 2 * h + h + V * h;
  CHECK(test::hf_params(r, "total_B") == doctest::Approx(total).epsilon(1e-9));
  CHECK(test::hf_params(r, "active_B") == doctest::Approx(active).epsilon(1e-9));
  // Xiaomi's card: 309B total, 15B active (the card counts the embedding: 14.82 + 0.62).
  CHECK(total / 1e9 == doctest::Approx(309).epsilon(0.03));
  CHECK((active + V * h) / 1e9 == doctest::Approx(15).epsilon(0.03));
  // bf16 KV: 9 full layers keep 4 x (192 + 128) per token, 39 sliding layers 8 x (192 + 128) for 128 tokens.
  for (const auto& [at, t] : {std::pair<const char*, double>{"4K", 4096}, {"32K", 32768}, {"128K", 131072}})
    CHECK(test::hf_kv(r, at) == doctest::Approx(9 * 4 * 320 * 2.0 + 39 * 8 * 320 * 2.0 * 128 / t).epsilon(1e-12));
  CHECK(r["weights"]["dtype"] == "fp8");
  // Block FP8 (quantization_config, no modules_to_not_convert): every layer's weights at one byte (the
  // sinks and the router with their layer, as for DeepSeek-V3); the norms, the embedding and the LM
  // head in bf16.
  const double layers = 9 * full + 39 * swa + dense + 47 * (256 * expert + router);
  CHECK(test::hf_weight_bytes(r) == doctest::Approx(layers + 2 * (48 * 2 * h + h + 2 * V * h)).epsilon(1e-12));
}

TEST_CASE("per-layer attention shapes: each kind's projections, KV writes and attention in the step") {
  const ModelArch m = read_model(json{{"hf_config", parse_json_text(shapes_text("google--gemma-4-26B-A4B.json"))}}, "");
  for (int tp : {1, 2}) {
    CAPTURE(tp);
    const StepOperators s = test::prefill_step(m, 100, tp);
    // The 25 sliding layers: q, k, v of 16 / 8 / 8 heads of 256; the 5 global: q and k (no v) of
    // 16 / 2 heads of 512; per GPU under tp.
    const Operator* sliding = step_op(s, "attn_pre_proj", 25);
    const Operator* global = step_op(s, "attn_pre_proj", 5);
    REQUIRE(sliding);
    REQUIRE(global);
    CHECK(sliding->n == (16 + 8 + 8) * 256 / tp);
    CHECK(global->n == (16 / tp + 2 / tp) * 512);
    CHECK(step_op(s, "attn_post_proj", 5)->k == 16 * 512 / tp);
    // K and V both written to the cache: 2 heads x (512 + 512) per token, per GPU.
    CHECK(step_op(s, "kv_cache_write", 5)->bytes == doctest::Approx(100.0 * (2 / tp) * 1024 * (2 + 2)));
    // Causal prefill of 100 tokens: 16 heads x 5050 pairs x 2 x (512 + 512) flops per global layer.
    const Operator* attn = step_op(s, "attn_prefill", 5);
    REQUIRE(attn);
    CHECK(attn->flops == doctest::Approx(16.0 / tp * 5050 * 2 * 1024));
    CHECK(attn->qk_dim == 512);
    CHECK(attn->kv_heads == 2 / tp);
  }
}

TEST_CASE("per-layer attention shapes: the architecture object writes and reads them (inspect-model output as a preset)") {
  for (const char* file : {"google--gemma-4-26B-A4B.json", "XiaomiMiMo--MiMo-V2-Flash.json"}) {
    CAPTURE(file);
    const ModelArch m = read_model(json{{"hf_config", parse_json_text(shapes_text(file))}}, "");
    CHECK(m.has_layer_attention_shapes());
    const ModelArch back = read_model(m.to_json(), "");
    CHECK(count_params(back).total == count_params(m).total);
    CHECK(count_params(back).active == count_params(m).active);
    CHECK(back.layers == m.layers);
  }
  // A shape that breaks GQA is refused at the run's own key.
  json a = read_model(json{{"hf_config", parse_json_text(shapes_text("google--gemma-4-26B-A4B.json"))}}, "").to_json();
  for (json& run : a["layers"])
    if (run.contains("attention_shape")) run["attention_shape"]["kv_heads"] = 3;
  const json e = test::envelope(api::inspect_model(a.dump()));
  REQUIRE(e["ok"] == false);
  CHECK(e["error"]["path"].get<std::string>().find("attention_shape/kv_heads") != std::string::npos);
}

TEST_CASE("per-layer attention shapes: parts of Gemma-4 and MiMo-V2 the engine does not price are refused at their keys") {
  json g = parse_json_text(shapes_text("google--gemma-4-26B-A4B.json"));
  const auto refused_at = [](const json& c) { return test::inspect_refused(c.dump())["path"].get<std::string>(); };
  json ple = g;
  ple["text_config"]["hidden_size_per_layer_input"] = 256;  // Gemma-4 E2B/E4B per-layer embeddings
  CHECK(refused_at(ple) == "/hf_config/text_config/hidden_size_per_layer_input");
  json shared = g;
  shared["text_config"]["num_kv_shared_layers"] = 10;
  CHECK(refused_at(shared) == "/hf_config/text_config/num_kv_shared_layers");
  json bidir = g;
  bidir["text_config"]["use_bidirectional_attention"] = "all";
  CHECK(refused_at(bidir) == "/hf_config/text_config/use_bidirectional_attention");
  json no_types = g;
  no_types["text_config"].erase("layer_types");
  CHECK(refused_at(no_types) == "/hf_config/text_config/layer_types");
  // Without attention_k_eq_v the global layers keep num_key_value_heads (vLLM, transformers).
  json no_keq = g;
  no_keq["text_config"]["attention_k_eq_v"] = false;
  const json r = test::inspect_ok(no_keq.dump());
  CHECK(test::hf_kv(r, "128K") == doctest::Approx(5 * 8 * 1024 * 2.0 + 25 * 8 * 512 * 2.0 * 1024 / 131072).epsilon(1e-12));
  json mimo = parse_json_text(shapes_text("XiaomiMiMo--MiMo-V2-Flash.json"));
  json window = mimo;
  window["attention_chunk_size"] = 256;  // another window than sliding_window_size: not guessed
  CHECK(refused_at(window) == "/hf_config/attention_chunk_size");
  json pattern = mimo;
  pattern["hybrid_layer_pattern"].erase(0);
  CHECK(refused_at(pattern) == "/hf_config/hybrid_layer_pattern");
  json shared_expert = mimo;
  shared_expert["n_shared_experts"] = 1;
  CHECK(refused_at(shared_expert) == "/hf_config/n_shared_experts");
}

TEST_CASE("per-layer attention shapes: no family is named where the engine prices a step") {
  // The importer maps a family's keys to generic fields; the pricing never branches on a family.
  for (const char* f : {"engine/model/operators.cpp", "engine/model/param_count.cpp", "engine/model/kv_footprint.cpp",
                        "engine/mem/inference_memory.cpp", "engine/scenario/memory_plan.cpp"}) {
    CAPTURE(f);
    // Code only: comments may say which model a rule came from.
    const std::string code = std::regex_replace(test::read_source_file(f), std::regex("//[^\n]*"), "");
    CHECK_FALSE(std::regex_search(code, std::regex("gemma|mimo|import\\.family", std::regex::icase)));
  }
}
