// DeepSeek sparse attention (DSA: DeepSeek-V3.2, GLM-5) and latent MoE
// (Nemotron-3 Super) read from their published config.json files
// (tests/data/hf/published/SOURCES.md) and priced from the architecture:
// parameters, KV bytes per token and weight bytes against the formulas written
// out here; the indexer's key cache and top-k attention in the step's kernels.
#include <doctest/doctest.h>

#include "core/json_text.hpp"
#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "model/kv_footprint.hpp"
#include "model/operators.hpp"
#include "perf/cost_setup.hpp"
#include "hf_inspect.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace dsa_latent {

using json = nlohmann::json;

std::string published_config(const std::string& file) { return test::read_source_file("tests/data/hf/published/" + file); }

json read_ok(const std::string& text) { return test::inspect_ok(text); }
json read_refused(const json& config) { return test::inspect_refused(safe_dump(config)); }

double params_of(const json& r, const char* part) { return r["params"][part].get<double>() * 1e9; }
double kv_at(const json& r, const char* at) { return r["kv_cache"]["at"][at]["bytes_per_token"].get<double>(); }
double weight_bytes_of(const json& r) { return r["weights"]["GiB"].get<double>() * 1073741824.0; }

// DSA's indexer per layer (DeepSeek-V3.2-Exp inference/model.py, class Indexer):
// wq_b q_lora x (heads x dim), wk hidden x dim, k_norm (LayerNorm: weight and
// bias) 2 dim, weights_proj hidden x heads.
double indexer_formula(double h, double q_lora, double heads, double dim) {
  return q_lora * heads * dim + h * dim + 2 * dim + h * heads;
}
// Its key cache per token per layer: FP8 keys and one fp32 scale per 128.
double indexer_key_bytes(double dim) { return dim + 4 * (dim / 128); }

// MLA with a low-rank query (q_a, its norm, q_b), the joint KV latent and rope
// key (kv_a, its norm, kv_b) and the output projection.
double mla_formula(double h, double heads, double q_lora, double kv_lora, double nope, double rope, double v) {
  return h * q_lora + q_lora + q_lora * heads * (nope + rope) + h * (kv_lora + rope) + kv_lora +
         kv_lora * heads * (nope + v) + heads * v * h;
}

const Operator* dsa_find_op(const StepOperators& s, const std::string& name) {
  for (const Operator& op : s.ops)
    if (op.name == name) return &op;
  return nullptr;
}

}  // namespace dsa_latent

using namespace dsa_latent;

TEST_CASE("hf import: DeepSeek-V3.2 (deepseek_v32): MLA with the lightning indexer in every layer") {
  const json r = read_ok(published_config("nvidia--DeepSeek-V3.2-NVFP4.json"));
  CHECK(r["family"] == "deepseek_v32");
  for (const json& g : r["layers_by_kind"]) CHECK(g["attention"].get<std::string>().find("DSA top-2048") != std::string::npos);
  CHECK(r["heads"]["sparse_attention"]["index_topk"] == 2048);
  // hidden 7168, 61 layers (3 dense, FFN 18432; 58 MoE: 256 experts of 2048, top-8, one shared),
  // 128 heads of MLA (q_lora 1536, kv_lora 512, nope 128, rope 64, v 128), indexer 64 heads x 128,
  // two RMSNorms per layer, vocabulary 129280, untied head.
  const double h = 7168, V = 129280;
  const double attn = mla_formula(h, 128, 1536, 512, 128, 64, 128) + indexer_formula(h, 1536, 64, 128);
  const double expert = 3 * h * 2048, dense = 3 * h * 18432, router = h * 256;
  const double total = 3 * (attn + dense + 2 * h) + 58 * (attn + 256 * expert + expert + router + 2 * h) + h + 2 * V * h;
  const double active = 3 * (attn + dense + 2 * h) + 58 * (attn + 8 * expert + expert + router + 2 * h) + h + V * h;
  CHECK(params_of(r, "total_B") == doctest::Approx(total).epsilon(1e-12));
  CHECK(params_of(r, "active_B") == doctest::Approx(active).epsilon(1e-12));
  // DeepSeek: 671B main model (685B with the 14B MTP module), 37B activated; the indexers add 0.85B.
  CHECK(total / 1e9 == doctest::Approx(671.9).epsilon(0.001));
  CHECK(active / 1e9 == doctest::Approx(37.5).epsilon(0.002));
  // Per token and layer: the latent and rope key in bf16 plus the indexer's FP8 key and scale.
  for (const char* at : {"4K", "32K", "128K"}) CHECK(kv_at(r, at) == 61 * ((512 + 64) * 2.0 + indexer_key_bytes(128)));
  CHECK(kv_at(r, "4K") == 78324);
  // This copy (nvidia's NVFP4 repository) keeps its quantization in hf_quant_config.json: read alone, bf16.
  CHECK(r["weights"]["dtype"] == "bf16");
  CHECK(weight_bytes_of(r) == doctest::Approx(2 * total).epsilon(1e-12));
}

TEST_CASE("hf import: GLM-5 (glm_moe_dsa): DSA on MLA, 256 experts, block FP8 with its unquantized list") {
  const json r = read_ok(published_config("zai-org--GLM-5-FP8.json"));
  CHECK(r["family"] == "glm_moe_dsa");
  // hidden 6144, 78 layers (3 dense, FFN 12288; 75 MoE: 256 experts of 2048, top-8, one shared),
  // 64 heads of MLA (q_lora 2048, kv_lora 512, nope 192, rope 64, v 256), indexer 32 heads x 128,
  // vocabulary 154880, untied head.
  const double h = 6144, V = 154880;
  const double attn = mla_formula(h, 64, 2048, 512, 192, 64, 256) + indexer_formula(h, 2048, 32, 128);
  const double expert = 3 * h * 2048, dense = 3 * h * 12288, router = h * 256;
  const double dense_layer = attn + dense, moe_layer = attn + 256 * expert + expert + router;
  const double norms = 78 * 2 * h + h;
  const double total = 3 * dense_layer + 75 * moe_layer + norms + 2 * V * h;
  const double active = 3 * dense_layer + 75 * (attn + 8 * expert + expert + router) + norms + V * h;
  CHECK(params_of(r, "total_B") == doctest::Approx(total).epsilon(1e-12));
  CHECK(params_of(r, "active_B") == doctest::Approx(active).epsilon(1e-12));
  // Z.ai: 744B total, 40B active.
  CHECK(total / 1e9 == doctest::Approx(744.0).epsilon(0.001));
  CHECK(active / 1e9 == doctest::Approx(40.8).epsilon(0.002));
  for (const char* at : {"4K", "32K", "128K"}) CHECK(kv_at(r, at) == 78 * ((512 + 64) * 2.0 + indexer_key_bytes(128)));
  // Block FP8: every layer's linear weights at one byte (the latent norms and the router priced
  // with their layer, as for DeepSeek-V3); the block norms, the embedding and the head in bf16.
  // Its modules_to_not_convert (norms, routers, the indexer's weights_proj, the MTP's eh_proj)
  // leaves nothing else unquantized.
  CHECK(r["weights"]["dtype"] == "fp8");
  CHECK(r["weights"]["attention_unquantized"] == false);
  CHECK(r["weights"]["dense_mlp_unquantized"] == false);
  CHECK(weight_bytes_of(r) == doctest::Approx(3 * dense_layer + 75 * moe_layer + 2 * (norms + 2 * V * h)).epsilon(1e-12));
}

TEST_CASE("hf import: Nemotron-3 Super (nemotron_h, moe_latent_size): experts at the latent width") {
  const std::string text = published_config("nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8.json");
  const json quant = json::parse(published_config("nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8_hf_quant.json"));
  const json r = read_ok(safe_dump(json{{"hf_config", parse_json_text(text)}, {"hf_quant_config", quant}}));
  CHECK(r["family"] == "nemotron_h");
  CHECK(r["experts"]["latent_size"] == 1024);
  // 88 blocks: 40 Mamba-2 (128 heads of 64, state 128, 8 groups, conv 4), 8 attention (32 query
  // and 2 KV heads of 128), 40 latent MoE: the router (4096 x 512) and one shared expert (up and
  // down, 5376, squared ReLU, no gate) at hidden 4096; 512 routed experts (22 active) of 2688 at
  // the latent 1024, behind fc1_latent_proj 4096 -> 1024 and fc2_latent_proj 1024 -> 4096. One
  // RMSNorm per block, vocabulary 131072, untied head.
  const double h = 4096, V = 131072, d = 128 * 64, bc = 2 * 8 * 128;
  const double mamba = h * (2 * d + bc + 128) + (d + bc) * (4 + 1) + 3 * 128 + d + d * h;
  const double attention = h * (32 * 128 + 2 * 2 * 128) + 32 * 128 * h;
  const double expert = 2 * 1024 * 2688, shared = 2 * h * 5376, router = h * 512, latent = 2 * h * 1024;
  const double layers = 40 * mamba + 8 * attention + 40 * (512 * expert + shared + router + latent);
  const double total = layers + 88 * h + h + 2 * V * h;
  const double active = 40 * mamba + 8 * attention + 40 * (22 * expert + shared + router + latent) + 88 * h + h + V * h;
  CHECK(params_of(r, "total_B") == doctest::Approx(total).epsilon(1e-12));
  CHECK(params_of(r, "active_B") == doctest::Approx(active).epsilon(1e-12));
  // NVIDIA: 120B total, 12B active. Experts at hidden_size (before) made it 458B.
  CHECK(total / 1e9 == doctest::Approx(120.7).epsilon(0.001));
  CHECK(active / 1e9 == doctest::Approx(12.2).epsilon(0.003));
  // FP8 KV (kv_cache_quant_algo): 8 attention layers x 2 x 2 heads x 128 at one byte, plus the
  // Mamba state of each sequence in float32 (mamba_ssm_cache_dtype): per layer 128 x 64 x 128
  // SSM state and the conv window (4 - 1) x (8192 + 2 x 8 x 128).
  const double state = 40 * (128.0 * 64 * 128 + 3.0 * (d + bc)) * 4;
  CHECK(r["kv_cache"]["per_sequence_state_bytes"].get<double>() == state);
  for (const auto& [at, t] : {std::pair<const char*, double>{"4K", 4096}, {"32K", 32768}, {"128K", 131072}})
    CHECK(kv_at(r, at) == doctest::Approx(8 * 2 * 2 * 128 * 1.0 + state / t).epsilon(1e-12));
  // FP8 weights (ModelOpt quant_algo FP8): every block's weights at one byte, norms, embedding and head in bf16.
  CHECK(r["weights"]["dtype"] == "fp8");
  CHECK(weight_bytes_of(r) == doctest::Approx(layers + 2 * (88 * h + h + 2 * V * h)).epsilon(1e-12));
  // The MTP module (attention + MoE blocks) is said, not priced as something else.
  CHECK(r["mtp_layers"] == 0);
  CHECK(r["ignored_parts"].dump().find("mtp_hybrid_override_pattern") != std::string::npos);
}

TEST_CASE("memory fit: Nemotron-3 Super's FP8 checkpoint fits one H200, its bf16 weights do not") {
  auto fit_check = [](const json& model) {
    json s = test::preset("scenarios", "I2.1");
    s["model"] = model;
    s["hardware"] = {{"gpu", "h200"}, {"gpus_per_node", 1}};
    s.erase("precision");
    s["serving"]["parallelism"]["tp"] = 1;
    s["serving"]["scheduler"]["max_num_batched_tokens"] = 8192;
    // Each sequence slot reserves its float32 Mamba state (165 MiB): 16 slots, as a one-GPU deployment runs.
    s["serving"]["scheduler"]["max_num_seqs"] = 16;
    return test::validate(s);
  };
  const json config = parse_json_text(published_config("nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8.json"));
  const json quant = json::parse(published_config("nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8_hf_quant.json"));
  const json fp8 = fit_check(json{{"hf_config", config}, {"hf_quant_config", quant}});
  CHECK_MESSAGE(fp8["ok"] == true, fp8.dump().substr(0, 600));
  const json bf16 = fit_check(json{{"hf_config", config}});
  CHECK(bf16["ok"] == false);
  CHECK(bf16["error"]["code"] == "does_not_fit");
}

TEST_CASE("DSA: the indexer's key is exactly what the KV cache adds; decode at 128K reads top-k, not the context") {
  const ModelArch dsa = read_model(json{{"hf_config", json::parse(published_config("nvidia--DeepSeek-V3.2-NVFP4.json"))}}, "");
  ModelArch dense = dsa;  // the same model with dense MLA
  dense.sparse_index = SparseIndexSpec{};
  for (ModelLayer& k : dense.layers) k.indexer = false;
  Precision p;
  for (int tp : {1, 8}) {
    const KvFootprint a = kv_footprint_per_gpu(dsa, p, tp, 1.0), b = kv_footprint_per_gpu(dense, p, tp, 1.0);
    CHECK(a.bytes_per_token_uncapped() - b.bytes_per_token_uncapped() == 61 * indexer_key_bytes(128));
  }
  const GpuSpec gpu = read_gpu(json("h200"), "/gpu");
  std::string provenance;
  const auto model = make_kernel_cost_model("auto", gpu, &provenance);
  CostContext ctx;
  ctx.gpu = &gpu;
  // 32 sequences decoding at a 128K context, TP8.
  BatchShape batch;
  batch.seqs.assign(32, SeqChunk{1, 131072});
  ParallelLayout layout;
  layout.tp = 8;
  auto attention_s = [&](const ModelArch& m) {
    double t = 0;
    for (const Operator& op : build_forward_step(m, p, layout, batch, StepOptions{}).ops)
      if (op.name == "attn_decode" || op.name.rfind("indexer_", 0) == 0) t += op.count * model->cost(op, ctx).time_s;
    return t;
  };
  const StepOperators s = build_forward_step(dsa, p, layout, batch, StepOptions{});
  const Operator* attn = dsa_find_op(s, "attn_decode");
  const Operator* score = dsa_find_op(s, "indexer_score_decode");
  REQUIRE(attn != nullptr);
  REQUIRE(score != nullptr);
  CHECK(attn->kv_tokens == 32 * 2048);            // each query reads its top-k latent entries
  CHECK(score->kv_tokens == 32 * (131072 + 1));   // the indexer scores the whole context
  CHECK(score->bytes >= 32 * (131072 + 1) * indexer_key_bytes(128));
  const double t_dsa = attention_s(dsa), t_dense = attention_s(dense);
  INFO("decode attention at 128K: DSA " << t_dsa * 1e3 << " ms, dense MLA " << t_dense * 1e3 << " ms");
  CHECK(t_dsa < t_dense);
  // Below top-k tokens of context the indexer only adds work: DSA attends to everything anyway.
  batch.seqs.assign(32, SeqChunk{1, 1024});
  CHECK(attention_s(dsa) > attention_s(dense));
}

TEST_CASE("DSA and latent MoE: the engine's own form of the model reads back the same, and unknown names stay exact") {
  for (const char* file : {"nvidia--DeepSeek-V3.2-NVFP4.json", "zai-org--GLM-5-FP8.json",
                           "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8.json"}) {
    CAPTURE(file);
    const std::string text = published_config(file);
    const json r = read_ok(text);
    const json again = read_ok(r["architecture"].dump());
    CHECK(again["params"] == r["params"]);
    CHECK(again["kv_cache"] == r["kv_cache"]);
    CHECK(again["layers_by_kind"] == r["layers_by_kind"]);
    // Leave one family out: an unknown model_type is read by the exact architectures class, or refused.
    json c = parse_json_text(text);
    c["model_type"] = "zz_unknown_family";
    const json by_class = read_ok(safe_dump(c));
    CHECK(by_class["params"] == r["params"]);
    CHECK(by_class["kv_cache"] == r["kv_cache"]);
    c.erase("architectures");
    CHECK(read_refused(c)["code"] == "not_implemented");
  }
}

TEST_CASE("DSA is read from its keys only when the config describes it whole") {
  json ds = json::parse(published_config("nvidia--DeepSeek-V3.2-NVFP4.json"));
  // A DSA model_type without the indexer keys: refused at model_type, naming what is missing.
  json bare = ds;
  for (const char* k : {"index_topk", "index_n_heads", "index_head_dim"}) bare.erase(k);
  const json e = read_refused(bare);
  CHECK(e["code"] == "missing_key");
  CHECK(e["path"] == "/hf_config/model_type");
  CHECK(e["message"].get<std::string>().find("index_topk") != std::string::npos);
  // Part of the indexer: the missing key named.
  json part = ds;
  part.erase("index_n_heads");
  CHECK(read_refused(part)["path"] == "/hf_config/index_n_heads");
  // GLM-5.2's IndexShare (an indexer in some layers only) is not priced: refused at its key.
  json share = ds;
  share["index_topk_freq"] = 4;
  CHECK(read_refused(share)["path"] == "/hf_config/index_topk_freq");
  // An indexer on attention without MLA: the indexer's query has no defined source.
  json llama = json::parse(published_config("meta-llama--Meta-Llama-3.1-70B.json"));
  llama["index_topk"] = 2048, llama["index_n_heads"] = 64, llama["index_head_dim"] = 128;
  const json no_mla = read_refused(llama);
  CHECK(no_mla["code"] == "not_implemented");
  CHECK(no_mla["path"] == "/hf_config/index_topk");
  // A latent size on a family that does not define latent MoE is not understood: refused, named.
  json lat = ds;
  lat["moe_latent_size"] = 1024;
  CHECK(read_refused(lat)["path"] == "/hf_config/moe_latent_size");
}

TEST_CASE("serving: DeepSeek-V3.2 decodes 4 sequences of 100K tokens faster than the same model with dense MLA") {
  // The serving simulator prices the step's kernels: DSA's indexer scans the context, its attention reads
  // top-k. (One sequence alone gains nothing at 100K on 8 GPUs: the indexer's replicated projections read
  // their weights for a single row and add seven kernels per layer, about what the latent reads saved.)
  json dsa = json::parse(published_config("nvidia--DeepSeek-V3.2-NVFP4.json"));
  json dense = dsa;
  for (const char* k : {"index_topk", "index_n_heads", "index_head_dim"}) dense.erase(k);
  dense["model_type"] = "deepseek_v3", dense["architectures"] = json::array({"DeepseekV3ForCausalLM"});
  auto tpot_ms = [](const json& config) {
    const json s = {{"model", {{"hf_config", config}}},
                    {"hardware", {{"gpu", "h200"}, {"gpus_per_node", 8}, {"intra_node", "nvlink4-nvswitch"}}},
                    {"precision", {{"weights", "fp8"}}},
                    {"serving", {{"mode", "latency"},
                                 {"parallelism", {{"tp", 8}, {"pp", 1}}},
                                 {"workload", {{"prompt_tokens", 100000}, {"output_tokens", 64}, {"batch_size", 4}}}}}};
    const json e = test::run(s);
    REQUIRE_MESSAGE(e["ok"] == true, e.dump().substr(0, 400));
    return e["result"]["metrics"]["tpot_ms"].get<double>();
  };
  const double sparse = tpot_ms(dsa), full = tpot_ms(dense);
  INFO("TPOT of 4 x 100K: DSA " << sparse << " ms, dense MLA " << full << " ms");
  CHECK(sparse < full);
}

TEST_CASE("architecture objects: an indexer needs its sparse_attention, and belongs to attention layers") {
  json a = read_ok(published_config("nvidia--DeepSeek-V3.2-NVFP4.json"))["architecture"];
  json no_spec = a;
  no_spec.erase("sparse_attention");
  const json e = test::envelope(api::inspect_model(no_spec.dump()));
  REQUIRE(e["ok"] == false);
  CHECK(e["error"]["code"] == "missing_key");
  CHECK(e["error"]["path"] == "/sparse_attention");
  json on_mamba = a;
  on_mamba["layers"][0]["mixer"] = "mamba";
  const json m = test::envelope(api::inspect_model(on_mamba.dump()));
  REQUIRE(m["ok"] == false);
  CHECK(m["error"]["path"] == "/layers/0/indexer");
  // Training steps carry the indexer too (its scoring is a prefill-like kernel with a backward).
  const ModelArch dsa = read_model(a, "");
  BatchShape b;
  b.seqs.assign(2, SeqChunk{4096, 0});
  StepOptions train;
  train.training = true;
  const StepOperators f = build_forward_step(dsa, Precision{}, ParallelLayout{}, b, train);
  CHECK(dsa_find_op(f, "indexer_score_prefill") != nullptr);
  CHECK(dsa_find_op(f, "indexer_k_cache_write") == nullptr);  // no cache in training
}
