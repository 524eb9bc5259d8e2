// Published Hugging Face config.json files of current models, read as
// published (tests/data/hf/published, copied with their sources in
// SOURCES.md): one test per family. Parameter counts against the model
// cards, KV bytes per token against each architecture's exact formula,
// quantized weights against the checkpoint, and memory fit.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/json_text.hpp"

#include "model/architecture.hpp"
#include "model/kv_footprint.hpp"
#include "model/param_count.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace {

std::string published(const std::string& file) { return test::read_source_file("tests/data/hf/published/" + file); }

// What the engine understood, through the public API (the same text path a paste takes).
json inspect(const std::string& text) {
  const json e = test::envelope(api::inspect_model(text));
  REQUIRE_MESSAGE(e["ok"] == true, e.dump());
  return e["result"];
}

double total_B(const json& r) { return r["params"]["total_B"].get<double>(); }
double active_B(const json& r) { return r["params"]["active_B"].get<double>(); }
double kv_per_token(const json& r, const char* at) { return r["kv_cache"]["at"][at]["bytes_per_token"].get<double>(); }

// Exact KV bytes per token of T tokens: `full` layers keep every token,
// `capped` layers at most `cap`, plus a fixed per-sequence state.
double kv_formula(double per_layer_bytes, int full, int capped, double cap, double state_bytes, double tokens) {
  return (per_layer_bytes * (full * tokens + capped * std::min(tokens, cap)) + state_bytes) / tokens;
}

constexpr double kBf16 = 2.0;

}  // namespace

TEST_CASE("hf import: Llama 3.1 (llama) 70B and 405B") {
  const json r70 = inspect(published("meta-llama--Meta-Llama-3.1-70B.json"));
  const json r405 = inspect(published("meta-llama--Meta-Llama-3.1-405B.json"));
  CHECK(total_B(r70) == doctest::Approx(70.6).epsilon(0.02));   // model card: 70.6B
  CHECK(total_B(r405) == doctest::Approx(405.0).epsilon(0.02)); // 405B
  for (const char* at : {"4K", "32K"}) {
    CHECK(kv_per_token(r70, at) == 80 * 2 * 8 * 128 * kBf16);
    CHECK(kv_per_token(r405, at) == 126 * 2 * 8 * 128 * kBf16);
  }
}

TEST_CASE("hf import: Qwen3 dense (qwen3) 8B and 32B") {
  const json r8 = inspect(published("Qwen--Qwen3-8B.json"));
  const json r32 = inspect(published("Qwen--Qwen3-32B.json"));
  CHECK(total_B(r8) == doctest::Approx(8.2).epsilon(0.02));    // model card: 8.2B
  CHECK(total_B(r32) == doctest::Approx(32.8).epsilon(0.02));  // 32.8B
  for (const char* at : {"4K", "32K"}) {
    CHECK(kv_per_token(r8, at) == 36 * 2 * 8 * 128 * kBf16);
    CHECK(kv_per_token(r32, at) == 64 * 2 * 8 * 128 * kBf16);
  }
}

TEST_CASE("hf import: Qwen3 MoE (qwen3_moe) 30B-A3B, 235B-A22B and its FP8 checkpoint") {
  const json r30 = inspect(published("Qwen--Qwen3-30B-A3B.json"));
  const json r235 = inspect(published("Qwen--Qwen3-235B-A22B.json"));
  const json fp8 = inspect(published("Qwen--Qwen3-235B-A22B-FP8.json"));
  CHECK(total_B(r30) == doctest::Approx(30.5).epsilon(0.02));    // model card: 30.5B total
  CHECK(total_B(r235) == doctest::Approx(235.0).epsilon(0.02));  // 235B total
  CHECK(active_B(r235) == doctest::Approx(22.0).epsilon(0.03));  // 22B activated
  CHECK(r30["experts"]["routed"] == 128);
  CHECK(r30["experts"]["top_k"] == 8);
  for (const char* at : {"4K", "32K"}) {
    CHECK(kv_per_token(r30, at) == 48 * 2 * 4 * 128 * kBf16);
    CHECK(kv_per_token(r235, at) == 94 * 2 * 4 * 128 * kBf16);
  }
  // The FP8 checkpoint's block-wise quantization_config sets fp8 weights: half the bf16 bytes, give or take the
  // bf16 embedding and LM head.
  CHECK(fp8["weights"]["dtype"] == "fp8");
  CHECK(r235["weights"]["dtype"] == "bf16");
  CHECK(fp8["weights"]["GiB"].get<double>() / r235["weights"]["GiB"].get<double>() == doctest::Approx(0.5).epsilon(0.02));
}

TEST_CASE("active parameters leave the input embedding out and report it apart, so each card's convention reads") {
  // OpenAI counts the unembedding but not the embedding: gpt-oss-120b 5.13B
  // active, exactly the engine's "active". Qwen counts the embedding in its
  // activated figure (Qwen3-30B-A3B: 3.3B) and prints a non-embedding total
  // (29.9B, embedding and LM head both out): "active" plus the embedding, and
  // the total less embedding and LM head, give those.
  const json oss = inspect(published("openai--gpt-oss-120b.json"));
  const json q = inspect(published("Qwen--Qwen3-30B-A3B.json"));
  CHECK(active_B(oss) == doctest::Approx(5.13).epsilon(0.01));
  const json& p = q["params"];
  CHECK(active_B(q) < 3.3);
  CHECK(active_B(q) + p["embedding_B"].get<double>() == doctest::Approx(3.3).epsilon(0.02));
  CHECK(total_B(q) - p["embedding_B"].get<double>() - p["lm_head_B"].get<double>() ==
        doctest::Approx(29.9).epsilon(0.01));
  CHECK(p["note"].get<std::string>().find("excludes the input embedding") != std::string::npos);
}

TEST_CASE("hf import: Qwen3-Next (qwen3_next): Gated DeltaNet layers keep a fixed state") {
  const json r = inspect(published("Qwen--Qwen3-Next-80B-A3B-Thinking.json"));
  CHECK(total_B(r) == doctest::Approx(80.0).epsilon(0.02));  // model card: 80B total
  CHECK(r["layers_by_kind"].size() == 2);
  // 12 gated full-attention layers (2 KV heads of 256) and 36 linear-attention layers, each with a
  // 32 x 128 x 128 recurrent state and a conv window of 3 over q, k, v (2*2048 + 4096 channels).
  const double state = 36.0 * (32.0 * 128 * 128 + 3.0 * (2 * 2048 + 4096)) * kBf16;
  for (const auto& [at, t] : {std::pair<const char*, double>{"4K", 4096}, {"32K", 32768}})
    CHECK(kv_per_token(r, at) == doctest::Approx(kv_formula(2 * 2 * 256 * kBf16, 12, 0, 0, state, t)).epsilon(1e-12));
}

TEST_CASE("hf import: DeepSeek-V3 (deepseek_v3): MLA, MoE, MTP and block FP8") {
  const json r = inspect(published("deepseek-ai--DeepSeek-V3.json"));
  CHECK(total_B(r) == doctest::Approx(671.0).epsilon(0.02));  // 671B main model (+14B MTP module)
  CHECK(active_B(r) == doctest::Approx(37.0).epsilon(0.02));  // 37B activated
  // The checkpoint's MTP module (14B) stores its own copies of the embedding and the LM head.
  const json& p = r["params"];
  CHECK(p["mtp_B"].get<double>() + p["embedding_B"].get<double>() + p["lm_head_B"].get<double>() ==
        doctest::Approx(14.0).epsilon(0.05));
  CHECK(r["mtp_layers"] == 1);
  CHECK(r["weights"]["dtype"] == "fp8");
  for (const char* at : {"4K", "32K"}) CHECK(kv_per_token(r, at) == 61 * (512 + 64) * kBf16);
}

TEST_CASE("hf import: Gemma-3-27B (gemma3 with text_config): 5 sliding layers per global one") {
  const json r = inspect(published("google--gemma-3-27b-it.json"));
  CHECK(total_B(r) == doctest::Approx(27.0).epsilon(0.02));  // 27B (the language model; the vision tower is ignored)
  CHECK(r["ignored_parts"].dump().find("vision_config") != std::string::npos);
  // 62 layers: 10 global, 52 with a 1024-token window; 16 KV heads of 128.
  for (const auto& [at, t] : {std::pair<const char*, double>{"4K", 4096}, {"32K", 32768}})
    CHECK(kv_per_token(r, at) == doctest::Approx(kv_formula(2 * 16 * 128 * kBf16, 10, 52, 1024, 0, t)).epsilon(1e-12));
}

TEST_CASE("hf import: Llama-4-Scout (llama4 with text_config): chunked attention and NoPE global layers") {
  const json r = inspect(published("meta-llama--Llama-4-Scout-17B-16E-Instruct.json"));
  CHECK(total_B(r) == doctest::Approx(109.0).epsilon(0.02));  // model card: 109B total (with the vision encoder)
  CHECK(active_B(r) == doctest::Approx(17.0).epsilon(0.06));  // 17B active
  // 48 layers: every 4th is global NoPE attention, the rest attend within 8192-token chunks.
  for (const auto& [at, t] : {std::pair<const char*, double>{"4K", 4096}, {"32K", 32768}})
    CHECK(kv_per_token(r, at) == doctest::Approx(kv_formula(2 * 8 * 128 * kBf16, 12, 36, 8192, 0, t)).epsilon(1e-12));
}

TEST_CASE("hf import: gpt-oss-20b (gpt_oss): the family's smaller member, MXFP4 checkpoint size") {
  const json r = inspect(published("openai--gpt-oss-20b.json"));
  CHECK(total_B(r) == doctest::Approx(20.91).epsilon(0.02));  // model card (arXiv 2508.10925): 20.91B total
  CHECK(active_B(r) == doctest::Approx(3.61).epsilon(0.02));  // 3.61B active
  for (const auto& [at, t] : {std::pair<const char*, double>{"4K", 4096}, {"32K", 32768}})
    CHECK(kv_per_token(r, at) == doctest::Approx(kv_formula(2 * 8 * 64 * kBf16, 12, 12, 128, 0, t)).epsilon(1e-12));
  // The model card's checkpoint size: 12.8 GiB (MXFP4 experts, bf16 attention, embeddings and head).
  CHECK(r["weights"]["dtype"] == "mxfp4");
  CHECK(r["weights"]["GiB"].get<double>() == doctest::Approx(12.8).epsilon(0.05));
}

TEST_CASE("hf import: Llama-4-Maverick (llama4 with text_config): MoE on every 2nd layer, 128 experts") {
  const json r = inspect(published("meta-llama--Llama-4-Maverick-17B-128E-Instruct.json"));
  CHECK(total_B(r) == doctest::Approx(400.0).epsilon(0.02));  // model card: 400B total (with the vision encoder)
  CHECK(active_B(r) == doctest::Approx(17.0).epsilon(0.06));  // 17B active
  CHECK(r["experts"]["routed"] == 128);
  // 48 layers: every 4th is global NoPE attention, the rest attend within 8192-token chunks.
  for (const auto& [at, t] : {std::pair<const char*, double>{"4K", 4096}, {"32K", 32768}})
    CHECK(kv_per_token(r, at) == doctest::Approx(kv_formula(2 * 8 * 128 * kBf16, 12, 36, 8192, 0, t)).epsilon(1e-12));
}

TEST_CASE("hf import: GLM-4.5 (glm4_moe): 3 dense layers, 160 experts, an MTP layer") {
  const json r = inspect(published("zai-org--GLM-4.5.json"));
  // Model card: 355B total, 32B active. The card's total sits between the main
  // model and the main model with its MTP layer.
  const json& p = r["params"];
  CHECK(total_B(r) == doctest::Approx(355.0).epsilon(0.02));
  CHECK(total_B(r) + p["mtp_B"].get<double>() == doctest::Approx(355.0).epsilon(0.02));
  CHECK(active_B(r) == doctest::Approx(32.0).epsilon(0.03));
  CHECK(r["mtp_layers"] == 1);
  for (const char* at : {"4K", "32K"}) CHECK(kv_per_token(r, at) == 92 * 2 * 8 * 128 * kBf16);
}

TEST_CASE("hf import: gpt-oss-120b (gpt_oss): MXFP4 experts, sliding 128 / full alternation, sinks") {
  const json r = inspect(published("openai--gpt-oss-120b.json"));
  CHECK(total_B(r) == doctest::Approx(116.83).epsilon(0.02));  // model card: 116.83B total
  CHECK(active_B(r) == doctest::Approx(5.13).epsilon(0.02));   // 5.13B active
  CHECK(r["heads"]["attention_sinks"] == true);
  for (const auto& [at, t] : {std::pair<const char*, double>{"4K", 4096}, {"32K", 32768}})
    CHECK(kv_per_token(r, at) == doctest::Approx(kv_formula(2 * 8 * 64 * kBf16, 18, 18, 128, 0, t)).epsilon(1e-12));
  // MXFP4 experts with bf16 attention: the model card gives a 60.8 GiB checkpoint.
  CHECK(r["weights"]["dtype"] == "mxfp4");
  CHECK(r["weights"]["attention_unquantized"] == true);
  CHECK(r["weights"]["GiB"].get<double>() == doctest::Approx(60.8).epsilon(0.05));
}

TEST_CASE("checkpoint sizes: predicted weight bytes within 5% of each published safetensors total") {
  // Published totals (sum of the repository's safetensors files, bytes), with
  // where they were read; tests/data/hf/published/SOURCES.md lists them too.
  // The engine's figure is the model it serves (no MTP module), so a checkpoint
  // that also ships one (DeepSeek-V3: 14B, fp8 with bf16 copies of the
  // embedding and head) sits above it by that module, inside the 5%.
  struct Checkpoint {
    const char* file;
    const char* dtype;
    double bytes;
  };
  const Checkpoint published_sizes[] = {
      // https://huggingface.co/deepseek-ai/DeepSeek-V3/tree/afb92e1fa402c2be2a9eb085312bb02e0384d6c7
      // (163 shards, block-FP8 with fp32 scales): 688,586,727,753 B.
      {"deepseek-ai--DeepSeek-V3.json", "fp8", 688586727753.0},
      // https://huggingface.co/Qwen/Qwen3-235B-A22B/tree/8efa61729e24bd65b1d152b5ab5409052aa80e65 (bf16):
      // 470,191,875,096 B. The bf16 base of the FP8 checkpoint below; its own total was not found.
      {"Qwen--Qwen3-235B-A22B.json", "bf16", 470191875096.0},
      // https://huggingface.co/openai/gpt-oss-120b model card (arXiv 2508.10925): 60.8 GiB checkpoint.
      {"openai--gpt-oss-120b.json", "mxfp4", 60.8 * 1073741824.0},
      // https://huggingface.co/openai/gpt-oss-20b model card: 12.8 GiB checkpoint.
      {"openai--gpt-oss-20b.json", "mxfp4", 12.8 * 1073741824.0},
  };
  for (const Checkpoint& c : published_sizes) {
    const std::string file = c.file;
    CAPTURE(file);
    const json r = inspect(published(file));
    CHECK(r["weights"]["dtype"] == c.dtype);
    const double predicted_bytes = r["weights"]["GiB"].get<double>() * 1073741824.0;
    CHECK(predicted_bytes == doctest::Approx(c.bytes).epsilon(0.05));
  }
}

TEST_CASE("hf import: Mistral (mistral, mistral3 with text_config)") {
  const json nemo = inspect(published("mistralai--Mistral-Nemo-Base-2407.json"));
  const json small = inspect(published("mistralai--Mistral-Small-3.1-24B-Instruct-2503.json"));
  CHECK(total_B(nemo) == doctest::Approx(12.2).epsilon(0.02));   // 12B (12.2B)
  CHECK(total_B(small) == doctest::Approx(24.0).epsilon(0.02));  // 24B with its vision encoder
  for (const char* at : {"4K", "32K"}) {
    CHECK(kv_per_token(nemo, at) == 40 * 2 * 8 * 128 * kBf16);
    CHECK(kv_per_token(small, at) == 40 * 2 * 8 * 128 * kBf16);
  }
}

TEST_CASE("hf import: Nemotron-H-56B (nemotron_h): Mamba-2 hybrid, with the Infinity literal as published") {
  const std::string text = published("nvidia--Nemotron-H-56B-Base-8K.json");
  REQUIRE(text.find("Infinity") != std::string::npos);
  const json r = inspect(text);
  CHECK(total_B(r) == doctest::Approx(56.0).epsilon(0.02));  // 56B
  CHECK(r["warnings"].dump().find("Infinity") != std::string::npos);
  // 10 attention layers (8 KV heads of 128) and 54 Mamba-2 layers with 256 heads x 64 x 256 state
  // and a conv window of 3 over x, B, C (16384 + 2*8*256 channels).
  const double state = 54.0 * (256.0 * 64 * 256 + 3.0 * (16384 + 2 * 8 * 256)) * kBf16;
  for (const auto& [at, t] : {std::pair<const char*, double>{"4K", 4096}, {"32K", 32768}})
    CHECK(kv_per_token(r, at) == doctest::Approx(kv_formula(2 * 8 * 128 * kBf16, 10, 0, 0, state, t)).epsilon(1e-12));
}

TEST_CASE("hf import: ModelOpt FP8 (config.json + hf_quant_config.json)") {
  const std::string text = "{\"hf_config\": " + published("nvidia--Llama-3.1-70B-Instruct-FP8.json") +
                           ", \"hf_quant_config\": " + published("nvidia--Llama-3.1-70B-Instruct-FP8_hf_quant.json") + "}";
  const json r = inspect(text);
  CHECK(r["weights"]["dtype"] == "fp8");
  CHECK(r["kv_cache"]["dtype"] == "fp8");
  for (const char* at : {"4K", "32K"}) CHECK(kv_per_token(r, at) == 80 * 2 * 8 * 128 * 1.0);
}

TEST_CASE("hf import: an unknown model_type is read by structure only when every key is understood") {
  json c = json::parse(published("meta-llama--Meta-Llama-3.1-70B.json"));
  const json before = inspect(c.dump());
  c["model_type"] = "my_llama_variant";
  c["architectures"] = json::array({"MyVariantForCausalLM"});
  const json r = inspect(c.dump());
  CHECK(r["family"] == "my_llama_variant");
  CHECK(r["warnings"].dump().find("read by structure") != std::string::npos);
  CHECK(r["params"] == before["params"]);
  CHECK(r["kv_cache"] == before["kv_cache"]);
  const json bad = test::envelope(api::inspect_model(R"({"model_type": "bert", "hidden_size": 768})"));
  CHECK(bad["ok"] == false);
  CHECK(bad["error"]["path"] == "/hf_config/model_type");
  const json topk = test::envelope(api::inspect_model(
      R"({"model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
          "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 256,
          "num_local_experts": 4, "num_experts_per_tok": 8})"));
  CHECK(topk["ok"] == false);
  CHECK(topk["error"]["path"] == "/hf_config/num_experts_per_tok");  // located at the config's own key
}

TEST_CASE("hf import: a key not understood whose name suggests structure refuses the config, named and located") {
  for (const char* file : {"meta-llama--Meta-Llama-3.1-70B.json", "deepseek-ai--DeepSeek-V3.json", "Qwen--Qwen3-30B-A3B.json"}) {
    CAPTURE(file);
    json c = json::parse(published(file));
    c["num_widget_experts"] = 64;
    const json e = test::envelope(api::inspect_model(c.dump()));
    REQUIRE(e["ok"] == false);
    CHECK(e["error"]["code"] == "not_implemented");
    CHECK(e["error"]["path"] == "/hf_config/num_widget_experts");
    CHECK(e["error"]["message"].get<std::string>().find("num_widget_experts") != std::string::npos);
  }
  // Inside text_config, located there.
  json g = json::parse(published("google--gemma-3-27b-it.json"));
  g["text_config"]["kv_lora_rank"] = 512;
  const json e = test::envelope(api::inspect_model(g.dump()));
  REQUIRE(e["ok"] == false);
  CHECK(e["error"]["path"] == "/hf_config/text_config/kv_lora_rank");
  // A key whose name suggests nothing is read past, said in a warning.
  json l = json::parse(published("meta-llama--Meta-Llama-3.1-70B.json"));
  l["favourite_colour"] = "teal";
  const json w = inspect(l.dump());
  CHECK(w["warnings"].dump().find("favourite_colour") != std::string::npos);
  // Every ignored key comes with its reason.
  const json ds = inspect(published("deepseek-ai--DeepSeek-V3.json"));
  CHECK(ds["ignored_why"].dump().find("topk_group") != std::string::npos);
  CHECK(ds["ignored_why"].dump().find("routing") != std::string::npos);
}

TEST_CASE("hf import: architectures is matched exactly, never by substring") {
  json c = json::parse(published("Qwen--Qwen3-30B-A3B.json"));
  const json before = inspect(c.dump());
  c.erase("model_type");
  c["architectures"] = json::array({"Qwen3MoeForCausalLM"});
  const json exact = inspect(c.dump());
  CHECK(exact["family"] == "qwen3_moe");
  CHECK(exact["params"] == before["params"]);
  // A class that merely contains "Qwen3" is no Qwen3: refused (its experts are not understood by structure).
  c["architectures"] = json::array({"Qwen3FancyMoeForCausalLM"});
  const json e = test::envelope(api::inspect_model(c.dump()));
  REQUIRE(e["ok"] == false);
  CHECK(e["error"]["message"].get<std::string>().find("num_experts") != std::string::npos);
}

namespace {

// Every config file this test knows of: the repository's and, where present, ../shared's.
std::vector<std::string> all_config_files() {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  const std::string root = SIGHTLINE_SOURCE_DIR;
  for (const std::string dir : {root + "/tests/data/hf", root + "/tests/data/hf/published", root + "/tests/data/hf/refused",
                                root + "/../shared/data/hf-configs"}) {
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string f = e.path().string();
      if (e.path().extension() == ".json" && f.find("_hf_quant") == std::string::npos) files.push_back(f);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string file_text(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// What a user plans with: everything but the names.
json understood(const json& r) {
  return {r["layers_by_kind"], r["heads"], r["experts"], r["mtp_layers"], r["params"], r["kv_cache"], r["weights"]};
}

}  // namespace

TEST_CASE("leave one family out: a config under an unknown model_type is read exactly as before or refused") {
  const std::vector<std::string> files = all_config_files();
  CHECK(files.size() >= 20);
  int same = 0, refused = 0, configs = 0;
  std::set<std::string> families;  // every family read from a published file is left out once
  for (const std::string& f : files) {
    CAPTURE(f);
    const std::string text = file_text(f);
    const json before = test::envelope(api::inspect_model(text));
    json c = parse_json_text(text);
    if (c.contains("hf_config")) continue;
    ++configs;
    if (before["ok"] == true) families.insert(before["result"]["family"].get<std::string>());
    // Every published config outside tests/data/hf/refused is read as it is.
    CHECK((before["ok"] == true) == (f.find("/refused/") == std::string::npos));
    for (bool drop_architectures : {false, true}) {
      json v = c;
      v["model_type"] = "zz_unknown_family";
      if (v.contains("text_config") && v["text_config"].is_object()) v["text_config"]["model_type"] = "zz_unknown_family_text";
      if (drop_architectures) v.erase("architectures");
      const json after = test::envelope(api::inspect_model(safe_dump(v)));
      if (after["ok"] == false) {
        ++refused;
        continue;
      }
      ++same;
      REQUIRE(before["ok"] == true);
      CHECK(understood(after["result"]) == understood(before["result"]));
    }
  }
  std::string names;
  for (const std::string& n : families) names += (names.empty() ? "" : ", ") + n;
  MESSAGE(configs << " configs, " << families.size() << " families (" << names << "): " << same << " read the same, "
                  << refused << " refused, none read differently");
  CHECK(refused > 0);
  CHECK(same > 0);
}

TEST_CASE("memory fit of published configs matches deployments") {
  // A vLLM-style serving replica (I2.1: 90% of GPU memory for the engine).
  auto fits = [](const json& model, const std::string& gpu, int tp, const json& precision) {
    json s = test::preset("scenarios", "I2.1");
    s["model"] = model;
    s["hardware"] = {{"gpu", gpu}, {"gpus_per_node", tp}};
    if (tp > 1) s["hardware"]["intra_node"] = "nvlink4-nvswitch";
    if (precision.is_null()) s.erase("precision");
    else s["precision"] = precision;
    s["serving"]["parallelism"]["tp"] = tp;
    // vLLM V1's default step budget (chunked prefill): 8192 tokens.
    s["serving"]["scheduler"]["max_num_batched_tokens"] = 8192;
    const json v = test::validate(s);
    CAPTURE(v.dump().substr(0, 400));
    return v["ok"] == true;
  };
  const json ds = {{"hf_config", json::parse(published("deepseek-ai--DeepSeek-V3.json"))}};
  CHECK(fits(ds, "h200", 8, nullptr));       // FP8 from its quantization_config
  CHECK_FALSE(fits(ds, "h100-sxm", 8, nullptr));
  const json l405 = {{"hf_config", json::parse(published("meta-llama--Meta-Llama-3.1-405B.json"))}};
  CHECK(fits(l405, "h100-sxm", 8, json{{"weights", "fp8"}, {"activations", "fp8"}}));
  CHECK_FALSE(fits(l405, "h100-sxm", 8, nullptr));  // bf16 does not
  const json oss = {{"hf_config", json::parse(published("openai--gpt-oss-120b.json"))}};
  CHECK(fits(oss, "h100-sxm", 1, nullptr));
}

TEST_CASE("memory fit: Kimi-K2 FP8 needs more than 8 H200 at its 128K context; DeepSeek-V3 FP8 fits them") {
  // Moonshot's deployment guide: the smallest unit for the FP8 weights with a 128K context on H200 is 16 GPUs.
  auto fits = [](const std::string& model, const std::string& gpu) {
    json s = test::preset("scenarios", "I2.1");
    s["model"] = model;
    s["hardware"] = {{"gpu", gpu}, {"gpus_per_node", 8}, {"intra_node", "nvlink4-nvswitch"}};
    s["precision"] = {{"weights", "fp8"}, {"activations", "bf16"}, {"kv_cache", "bf16"}};
    s["serving"]["parallelism"]["tp"] = 8;
    s["serving"]["scheduler"]["max_num_batched_tokens"] = 8192;
    const json v = test::validate(s);
    CAPTURE(v.dump().substr(0, 400));
    return v["ok"] == true;
  };
  CHECK_FALSE(fits("kimi-k2", "h200"));
  CHECK(fits("deepseek-r1", "h200"));
  const json kimi = test::envelope(api::inspect_model("\"kimi-k2\""))["result"];
  CHECK(kimi["params"]["total_B"].get<double>() == doctest::Approx(1000.0).epsilon(0.05));  // 1T total
  CHECK(kimi["params"]["active_B"].get<double>() == doctest::Approx(32.0).epsilon(0.02));   // 32B activated
}

TEST_CASE("every model preset imported from a published config reads back as the same architecture") {
  for (const std::string id : {"qwen3-8b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b", "qwen3-next-80b-a3b",
                               "deepseek-r1", "gpt-oss-120b", "gemma-3-27b", "llama-4-scout",
                               "mistral-small-3.1-24b", "nemotron-h-56b", "kimi-k2", "gpt-oss-20b",
                               "llama-4-maverick", "glm-4.5"}) {
    CAPTURE(id);
    const json r = test::envelope(api::inspect_model("\"" + id + "\""));
    REQUIRE(r["ok"] == true);
    const json again = test::envelope(api::inspect_model(r["result"]["architecture"].dump()));
    REQUIRE(again["ok"] == true);
    CHECK(again["result"]["params"] == r["result"]["params"]);
    CHECK(again["result"]["kv_cache"] == r["result"]["kv_cache"]);
  }
}

namespace {

double weights_bytes(const json& r) { return r["weights"]["GiB"].get<double>() * 1073741824.0; }
double params(const json& r, const char* part) { return r["params"][part].get<double>() * 1e9; }
std::string refused_file(const std::string& f) { return test::read_source_file("tests/data/hf/refused/" + f); }

}  // namespace

TEST_CASE("hf import: Qwen3-VL MoE (qwen3_vl_moe, text_config qwen3_vl_moe_text) 235B-A22B, experts kept") {
  const json r = inspect(published("Qwen--Qwen3-VL-235B-A22B-Thinking.json"));
  CHECK(r["family"] == "qwen3_vl_moe_text");
  CHECK(r["experts"]["routed"] == 128);
  CHECK(r["ignored_parts"].dump().find("vision_config") != std::string::npos);
  // hidden 4096, 94 layers, 64 query heads and 4 KV heads of 128 (QK norm), 128 experts of 1536 (gated), top-8,
  // vocabulary 151936, untied (tie_word_embeddings beside text_config).
  const double h = 4096, L = 94, V = 151936;
  const double attn = h * (64 * 128 + 2 * 4 * 128) + 64 * 128 * h + 2 * 128;
  const double expert = 3 * h * 1536, router = h * 128, norms = 2 * h;
  const double total = L * (attn + 128 * expert + router + norms) + h + 2 * V * h;
  const double active = L * (attn + 8 * expert + router + norms) + h + V * h;
  CHECK(params(r, "total_B") == doctest::Approx(total).epsilon(1e-9));
  CHECK(params(r, "active_B") == doctest::Approx(active).epsilon(1e-9));
  CHECK(total / 1e9 == doctest::Approx(235.0).epsilon(0.01));  // model card: 235B total, 22B activated
  CHECK(active / 1e9 == doctest::Approx(22.0).epsilon(0.03));
  for (const char* at : {"4K", "32K", "128K"}) CHECK(kv_per_token(r, at) == 94 * 2 * 4 * 128 * kBf16);
  CHECK(weights_bytes(r) == doctest::Approx(total * kBf16).epsilon(1e-9));
}

TEST_CASE("hf import: Qwen3.5 MoE (qwen3_5_moe) 397B-A17B: DeltaNet + gated attention, experts in every layer") {
  const json r = inspect(published("Qwen--Qwen3.5-397B-A17B.json"));
  CHECK(r["family"] == "qwen3_5_moe_text");
  CHECK(r["mtp_layers"] == 1);
  // 60 layers: 45 Gated DeltaNet (16 key heads, 64 value heads, 128 wide, conv 4) and 15 full attention
  // (32 query heads with an output gate, 2 KV heads of 256, QK norm); 512 experts of 1024 top-10 plus a
  // shared expert of 1024 with its scalar gate; vocabulary 248320, untied. No intermediate_size: no dense layer.
  const double h = 4096, V = 248320;
  const double attn = h * (2 * 32 * 256 + 2 * 2 * 256) + 32 * 256 * h + 2 * 256;
  const double kd = 16 * 128, vd = 64 * 128;
  const double linear = h * (2 * kd + 2 * vd) + h * 2 * 64 + (2 * kd + vd) * 4 + 2 * 64 + 128 + vd * h;
  const double expert = 3 * h * 1024, shared = 3 * h * 1024, router = h * 512 + h, norms = 2 * h;
  const double moe_total = 512 * expert + shared + router, moe_active = 10 * expert + shared + router;
  const double total = 15 * attn + 45 * linear + 60 * (moe_total + norms) + h + 2 * V * h;
  const double active = 15 * attn + 45 * linear + 60 * (moe_active + norms) + h + V * h;
  CHECK(params(r, "total_B") == doctest::Approx(total).epsilon(1e-9));
  CHECK(params(r, "active_B") == doctest::Approx(active).epsilon(1e-9));
  CHECK(total / 1e9 == doctest::Approx(397.0).epsilon(0.01));  // model card: 397B total, 17B activated
  CHECK((active + V * h) / 1e9 == doctest::Approx(17.0).epsilon(0.03));  // Qwen counts the embedding in "activated"
  // bf16 weights (torch_dtype): the main model's parameters at 2 bytes (the MTP layer is priced as a draft, apart).
  CHECK(weights_bytes(r) == doctest::Approx(total * kBf16).epsilon(1e-9));
  // KV: 15 layers x 2 x 2 heads x 256 per token; each DeltaNet layer a 64 x 128 x 128 state and a conv window of 3
  // over q, k, v (this copy names no state dtype: bf16).
  const double state = 45.0 * (64.0 * 128 * 128 + 3.0 * (2 * kd + vd)) * kBf16;
  for (const auto& [at, t] : {std::pair<const char*, double>{"4K", 4096}, {"32K", 32768}, {"128K", 131072}})
    CHECK(kv_per_token(r, at) == doctest::Approx(kv_formula(2 * 2 * 256 * kBf16, 15, 0, 0, state, t)).epsilon(1e-12));
  // Under a model_type it does not know (and no architectures), it is refused, naming the keys that describe it.
  json u = json::parse(published("Qwen--Qwen3.5-397B-A17B.json"));
  u["model_type"] = "qwen9", u["text_config"]["model_type"] = "qwen9_text", u.erase("architectures");
  const json refused = test::envelope(api::inspect_model(u.dump()));
  REQUIRE(refused["ok"] == false);
  CHECK(refused["error"]["path"] == "/hf_config/text_config/model_type");
  for (const char* k : {"layer_types", "linear_num_value_heads", "num_experts", "moe_intermediate_size"})
    CHECK(refused["error"]["message"].get<std::string>().find(k) != std::string::npos);
  // A float32 state (mamba_ssm_dtype, as Qwen3.5's published text_config has it) is priced at 4 bytes.
  json c = json::parse(published("Qwen--Qwen3.5-397B-A17B.json"));
  c["text_config"]["mamba_ssm_dtype"] = "float32";
  const json f32 = inspect(c.dump());
  CHECK(f32["kv_cache"]["per_sequence_state_bytes"].get<double>() == doctest::Approx(2 * state).epsilon(1e-12));
}

TEST_CASE("hf import: layer kinds the engine does not price are refused by name, never read from a subset of keys") {
  // A trimmed GLM-5 (glm_moe_dsa) without its indexer keys: DeepSeek sparse attention the config does
  // not describe. Before issue 35: a 27B dense Llama.
  const json glm = test::envelope(api::inspect_model(refused_file("zai-org--GLM-5-FP8.json")));
  REQUIRE(glm["ok"] == false);
  CHECK(glm["error"]["code"] == "missing_key");
  CHECK(glm["error"]["path"] == "/hf_config/model_type");  // this copy lacks the indexer keys themselves
  CHECK(glm["error"]["message"].get<std::string>().find("DeepSeek sparse attention") != std::string::npos);
  // DeepSeek-V4: indexer, compressed attention, grouped low-rank output, hyper-connections, hash routing.
  const json v4 = test::envelope(api::inspect_model(refused_file("nvidia--DeepSeek-V4-Flash-NVFP4.json")));
  REQUIRE(v4["ok"] == false);
  CHECK(v4["error"]["path"] == "/hf_config/compress_ratios");
  for (const char* k : {"compress_ratios", "o_lora_rank", "hc_mult", "num_hash_layers"})
    CHECK(v4["error"]["message"].get<std::string>().find(k) != std::string::npos);
  // The indexer by its keys, whatever the model_type: DeepSeek-V3 with part of them is refused at the
  // first one missing (tests/unit/test_hf_dsa_latent.cpp reads it whole).
  json ds = json::parse(published("deepseek-ai--DeepSeek-V3.json"));
  ds["index_topk"] = 2048;
  const json dsa = test::envelope(api::inspect_model(ds.dump()));
  REQUIRE(dsa["ok"] == false);
  CHECK(dsa["error"]["path"] == "/hf_config/index_n_heads");
  // A latent size where the family defines no latent MoE (Nemotron-H 56B has no MoE block) is not understood.
  json nh = parse_json_text(published("nvidia--Nemotron-H-56B-Base-8K.json"));
  nh["moe_latent_size"] = 1024;
  const json latent = test::envelope(api::inspect_model(safe_dump(nh)));
  REQUIRE(latent["ok"] == false);
  CHECK(latent["error"]["path"] == "/hf_config/moe_latent_size");
  CHECK(latent["error"]["message"].get<std::string>().find("moe_latent_size") != std::string::npos);
}

TEST_CASE("hf import: a Mamba state dtype named by the config is priced at its width") {
  const std::string text = published("nvidia--Nemotron-H-56B-Base-8K.json");
  const json bf16 = inspect(text);
  json c = parse_json_text(text);
  c["mamba_ssm_cache_dtype"] = "float32";
  const json f32 = inspect(safe_dump(c));
  const double s16 = bf16["kv_cache"]["per_sequence_state_bytes"].get<double>();
  CHECK(s16 > 0);
  CHECK(f32["kv_cache"]["per_sequence_state_bytes"].get<double>() == 2 * s16);
  CHECK(f32["architecture"]["state_dtype"] == "fp32");
  c["mamba_ssm_cache_dtype"] = "float8";
  const json bad = test::envelope(api::inspect_model(safe_dump(c)));
  CHECK(bad["error"]["path"] == "/hf_config/mamba_ssm_cache_dtype");
}
