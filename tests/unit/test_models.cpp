// Parameter counts against the seed suite's reference table, and Hugging Face
// config.json import.
#include <doctest/doctest.h>

#include "model/architecture.hpp"
#include "model/param_count.hpp"
#include "presets/preset_store.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace {

double params_B(const std::string& id) {
  const ModelArch m = read_model(json(id), "/model");
  return static_cast<double>(count_params(m).total) / 1e9;
}

}  // namespace

TEST_CASE("parameter counts match the seed suite's table within 1%") {
  // Reference Model Specifications table of ../shared/seeds/004_*.txt.
  const std::vector<std::pair<std::string, double>> seed = {
      {"llama-2-7b", 6.74},  {"llama-2-13b", 13.02}, {"llama-2-70b", 68.98}, {"llama-3-8b", 8.03},
      {"llama-3-70b", 70.55}, {"gpt-3-175b", 174.6},  {"mixtral-8x7b", 46.7},
  };
  for (const auto& entry : seed) {
    const auto& id = entry.first;  // not a structured binding: CAPTURE/INFO are lambdas, which may not capture one in C++17
    const auto& expected = entry.second;
    CAPTURE(id);
    CHECK(params_B(id) == doctest::Approx(expected).epsilon(0.01));
  }
  // Mixtral's active parameters per token (2 of 8 experts): 12.9B in the seed,
  // which counts the input embedding; the engine's active count leaves the
  // embedding lookup out (as most vendors do) and keeps the LM head.
  const ModelArch mixtral = read_model(json("mixtral-8x7b"), "/model");
  const ParamCounts mc = count_params(mixtral);
  CHECK(static_cast<double>(mc.active + mc.embedding) / 1e9 == doctest::Approx(12.9).epsilon(0.01));
  CHECK(mc.active < mc.active + mc.embedding);
}

TEST_CASE("Falcon-40B: the seed's 40.0B is a rounded name, not an architecture count") {
  // The seed lists Falcon-40B as 40.0B with hidden 8192, 60 layers, MQA, 4x MLP,
  // vocab 65024. Counting that architecture (tied embeddings, as Falcon has)
  // gives 40.86B; the real checkpoint (8 KV groups) has 41.30B. No architecture
  // consistent with the table gives 40.0B, so we assert the physics: the count
  // equals a hand computation from the table's dimensions, 2.2% above the label.
  const double h = 8192, layers = 60, head_dim = 64, vocab = 65024;
  const double attention = h * (128 * head_dim + 2 * 1 * head_dim) + h * h;
  const double mlp = 2 * h * 32768;
  const double norms = 2 * 2 * h;  // two layernorms with bias per layer
  const double hand = layers * (attention + mlp + norms) + vocab * h + 2 * h;
  CHECK(params_B("falcon-40b-mqa") == doctest::Approx(hand / 1e9).epsilon(1e-9));
  CHECK(params_B("falcon-40b-mqa") == doctest::Approx(40.0).epsilon(0.025));
  CHECK(params_B("falcon-40b") == doctest::Approx(41.3).epsilon(0.005));
}

TEST_CASE("other presets match their published sizes") {
  CHECK(params_B("deepseek-v3") == doctest::Approx(671.0).epsilon(0.01));
  CHECK(params_B("llama-3.1-405b") == doctest::Approx(405.9).epsilon(0.01));
  CHECK(params_B("gpt2") == doctest::Approx(0.124).epsilon(0.01));
  CHECK(params_B("gpt2-xl") == doctest::Approx(1.558).epsilon(0.01));
  CHECK(params_B("mistral-7b") == doctest::Approx(7.24).epsilon(0.01));
  CHECK(params_B("qwen2.5-7b") == doctest::Approx(7.62).epsilon(0.01));
  CHECK(params_B("qwen2.5-72b") == doctest::Approx(72.7).epsilon(0.01));
  const ModelArch ds = read_model(json("deepseek-v3"), "/model");
  // DeepSeek reports 37B activated parameters per token.
  CHECK(static_cast<double>(count_params(ds).active) / 1e9 == doctest::Approx(37.0).epsilon(0.02));
}

TEST_CASE("every model preset has a source and an id matching its file") {
  for (const json* p : list_presets("models")) {
    CAPTURE(p->at("id").get<std::string>());
    CHECK(!p->at("source").get<std::string>().empty());
  }
  for (const std::string kind : {"gpus", "interconnects", "scenarios"}) {
    for (const json* p : list_presets(kind)) CHECK(!p->at("source").get<std::string>().empty());
  }
}

TEST_CASE("Hugging Face config.json import reproduces the presets") {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"llama-2-7b.json", "llama-2-7b"}, {"mistral-7b-v0.1.json", "mistral-7b"},
      {"mixtral-8x7b.json", "mixtral-8x7b"}, {"falcon-40b.json", "falcon-40b"},
      {"gpt2.json", "gpt2"}, {"deepseek-v3.json", "deepseek-v3"},
  };
  for (const auto& entry : pairs) {
    const auto& file = entry.first;  // not a structured binding: CAPTURE/INFO are lambdas, which may not capture one in C++17
    const auto& preset_id = entry.second;
    CAPTURE(file);
    const json config = json::parse(test::read_source_file("tests/data/hf/" + file));
    const ModelArch from_hf = read_hf_config(config, "/model/hf_config");
    const ModelArch from_preset = read_model(json(preset_id), "/model");
    CHECK(count_params(from_hf).total == count_params(from_preset).total);
    CHECK(count_params(from_hf).active == count_params(from_preset).active);
    CHECK(from_hf.num_kv_heads == from_preset.num_kv_heads);
    CHECK(from_hf.kv_elements_per_token_per_layer() == from_preset.kv_elements_per_token_per_layer());
  }
  // Qwen2-7B has q/k/v biases and 28 heads over 4 KV heads: 7.62B parameters.
  const json qwen = json::parse(test::read_source_file("tests/data/hf/qwen2-7b.json"));
  const ModelArch q = read_hf_config(qwen, "/model/hf_config");
  CHECK(q.qkv_bias);
  CHECK(static_cast<double>(count_params(q).total) / 1e9 == doctest::Approx(7.62).epsilon(0.01));
}

TEST_CASE("a scenario accepts a Hugging Face config as its model") {
  json s = test::preset("scenarios", "I1.1");
  s["model"] = {{"hf_config", json::parse(test::read_source_file("tests/data/hf/llama-2-7b.json"))}};
  const json from_hf = test::run(s);
  REQUIRE(from_hf["ok"] == true);
  const json from_preset = test::run(test::preset("scenarios", "I1.1"));
  CHECK(from_hf["result"]["metrics"] == from_preset["result"]["metrics"]);
}
