// Nemotron-NAS (model_type "nemotron-nas", DeciLMForCausalLM) read from its
// published config.json (nvidia/Llama-3_3-Nemotron-Super-49B-v1,
// tests/data/hf/published/SOURCES.md): per-block attention (kept, or no_op) and
// MLP widths (ffn_mult), priced through the generic per-layer fields. The
// formula is written out here, after vLLM's nemotron_nas.py.
#include <doctest/doctest.h>

#include "core/json_text.hpp"
#include "hf_inspect.hpp"
#include "model/architecture.hpp"
#include "model/operators.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace nas_test {

using json = nlohmann::json;

std::string nas_text() { return test::read_source_file("tests/data/hf/published/nvidia--Llama-3_3-Nemotron-Super-49B-v1.json"); }

// DeciLM's MLP width: int(2/3 x ffn_mult x hidden), rounded up to a multiple of 256.
double deci_width(double mult, double h) {
  const double w = std::floor(2 * mult * h / 3);
  return std::ceil(w / 256) * 256;
}

}  // namespace nas_test

using namespace nas_test;

TEST_CASE("hf import: Nemotron-NAS 49B (nemotron-nas): per-block attention and MLP widths from block_configs") {
  const json r = test::inspect_ok(nas_text());
  CHECK(r["family"] == "nemotron-nas");
  // hidden 8192, 80 blocks; 64 query heads of 128. 49 blocks keep attention with n_heads_in_group 8
  // (8 KV heads) and an input RMSNorm; 31 are no_op attention. Every block has a SwiGLU MLP of
  // DeciLM's width for its ffn_mult and a post-attention RMSNorm:
  //   attention blocks: 48 x 5.25, 1 x 2.625;
  //   no_op blocks: 1 x 5.25, 1 x 3.28125, 5 x 2.625, 10 x 1.3125, 8 x 1.0, 6 x 0.5.
  // Vocabulary 128256, untied.
  const double h = 8192, V = 128256;
  CHECK(deci_width(5.25, h) == 28672);
  CHECK(deci_width(1.0, h) == 5632);  // 5461 rounded up
  const double attn = h * (64 * 128 + 2 * 8 * 128) + 64 * 128 * h + h;
  auto mlp = [&](double mult) { return 3 * h * deci_width(mult, h) + h; };
  const double blocks = 49 * attn + 48 * mlp(5.25) + mlp(2.625) + mlp(5.25) + mlp(3.28125) + 5 * mlp(2.625) + 10 * mlp(1.3125) +
                        8 * mlp(1.0) + 6 * mlp(0.5);
  const double total = blocks + h + 2 * V * h;
  CHECK(test::hf_params(r, "total_B") == doctest::Approx(total).epsilon(1e-12));
  CHECK(test::hf_params(r, "active_B") == doctest::Approx(total - V * h).epsilon(1e-12));  // dense; the input embedding apart
  CHECK(total / 1e9 == doctest::Approx(49.87).epsilon(0.001));  // NVIDIA's card: 49.9B
  // bf16 KV of the 49 attention blocks only: K and V of 8 heads of 128; no windows, the same at every length.
  for (const char* at : {"4K", "32K", "128K"}) CHECK(test::hf_kv(r, at) == 49 * 2 * 8 * 128 * 2.0);
  CHECK(r["weights"]["dtype"] == "bf16");
  CHECK(test::hf_weight_bytes(r) == doctest::Approx(2 * total).epsilon(1e-12));
  // The widths are said where the layers are listed; the widest is the model's own.
  const std::string kinds = r["layers_by_kind"].dump();
  CHECK(kinds.find("\"dense 5632\"") != std::string::npos);
  CHECK(kinds.find("\"dense 28672\"") != std::string::npos);
  // Every other key is used or set aside with its reason (token ids, rope scaling, metadata...).
  const std::string why = r["ignored_why"].dump();
  for (const char* k : {"bos_token_id", "rope_scaling", "auto_map", "transformers_version"}) CHECK(why.find(k) != std::string::npos);
  CHECK(r["architecture"]["intermediate_size"] == 28672);
}

TEST_CASE("Nemotron-NAS: each block's MLP width and attention in the step, per GPU; the architecture reads back the same") {
  const ModelArch m = read_model(json{{"hf_config", parse_json_text(nas_text())}}, "");
  for (int tp : {1, 8}) {
    CAPTURE(tp);
    const StepOperators s = test::prefill_step(m, 100, tp);
    // The 8 no_op blocks of ffn_mult 1.0: gate and up of 5632, then down, sharded by tp.
    const Operator* up = test::step_op(s, "mlp_up_proj", 8);
    REQUIRE(up);
    CHECK(up->n == 2 * 5632 / tp);
    CHECK(test::step_op(s, "mlp_down_proj", 8)->k == 5632 / tp);
    // Attention in 49 layers only.
    double attention_layers = 0;
    for (const Operator& op : s.ops)
      if (op.name == "attn_pre_proj") attention_layers += op.count;
    CHECK(attention_layers == 49);
  }
  const json r = test::inspect_ok(nas_text());
  const json again = test::inspect_ok(r["architecture"].dump());
  CHECK(again["params"] == r["params"]);
  CHECK(again["kv_cache"] == r["kv_cache"]);
  CHECK(again["layers_by_kind"] == r["layers_by_kind"]);
}

TEST_CASE("Nemotron-NAS: block parts the engine does not price are refused at their key, never read from the rest") {
  const json base = parse_json_text(nas_text());
  auto refused_at = [](const json& c) { return test::inspect_refused(safe_dump(c))["path"].get<std::string>(); };
  json c = base;
  c["block_configs"][3]["attention"]["replace_with_linear"] = true;  // attention replaced by one linear layer
  CHECK(refused_at(c) == "/hf_config/block_configs/3/attention/replace_with_linear");
  c = base;
  c["block_configs"][3]["attention"]["window_length"] = 4096;
  CHECK(refused_at(c) == "/hf_config/block_configs/3/attention/window_length");
  c = base;
  c["block_configs"][7]["ffn"]["replace_with_linear"] = true;
  CHECK(refused_at(c) == "/hf_config/block_configs/7/ffn/replace_with_linear");
  c = base;
  c["block_configs"][0]["ffn"]["num_widget_experts"] = 64;  // a block key not understood
  CHECK(refused_at(c) == "/hf_config/block_configs/0/ffn/num_widget_experts");
  c = base;
  c["num_widget_experts"] = 64;  // a model key not understood
  CHECK(refused_at(c) == "/hf_config/num_widget_experts");
  c = base;
  c["block_configs"].erase(79);  // 79 blocks for 80 layers
  CHECK(refused_at(c) == "/hf_config/block_configs");
  c = base;
  c["intermediate_size"] = 28672;  // a model-wide width beside the blocks' own
  CHECK(refused_at(c) == "/hf_config/intermediate_size");
  c = base;
  c["block_configs"][6]["ffn"]["no_op"] = true;  // block 6 keeps no attention either
  CHECK(refused_at(c) == "/hf_config/block_configs/6");
  // A block with its own KV heads gets its own attention shape: 64 / 16 = 4 KV heads there.
  c = base;
  c["block_configs"][1]["attention"]["n_heads_in_group"] = 16;
  const json r = test::inspect_ok(safe_dump(c));
  CHECK(test::hf_kv(r, "4K") == 48 * 2 * 8 * 128 * 2.0 + 2 * 4 * 128 * 2.0);
  // Under a model_type it does not know and no architectures, it is refused, naming block_configs.
  c = base;
  c["model_type"] = "zz_unknown_family";
  CHECK(test::inspect_ok(safe_dump(c))["params"] == test::inspect_ok(nas_text())["params"]);  // by its exact class
  c.erase("architectures");
  const json e = test::inspect_refused(safe_dump(c));
  CHECK(e["message"].get<std::string>().find("block_configs") != std::string::npos);
}

TEST_CASE("Nemotron-NAS: training is refused (one MLP width per layer is priced there), serving runs") {
  json t = test::preset("scenarios", "T1.1");
  t["model"] = {{"hf_config", parse_json_text(nas_text())}};
  const json e = test::validate(t);
  REQUIRE(e["ok"] == false);
  CHECK(e["error"]["code"] == "not_implemented");
  CHECK(e["error"]["message"].get<std::string>().find("MLP width") != std::string::npos);
  json s = test::preset("scenarios", "I1.1");
  s["model"] = {{"hf_config", parse_json_text(nas_text())}};
  s["hardware"] = {{"gpu", "h200"}, {"gpus_per_node", 1}};
  s.erase("precision");
  const json ok = test::validate(s);
  CHECK_MESSAGE(ok["ok"] == true, ok.dump().substr(0, 400));
}
