// Memory figures of an inference deployment against hand arithmetic on
// Llama-2-7B (32 layers, hidden 4096, 32 heads of 128, MHA, MLP 11008 gated,
// vocabulary 32000, untied embeddings): not snapshots of today's output.
#include <doctest/doctest.h>

#include "mem/attention_memory.hpp"
#include "mem/inference_memory.hpp"
#include "model/architecture.hpp"
#include "model/param_count.hpp"

using namespace sightline;

namespace {

ModelArch llama2_7b() { return read_model(json("llama-2-7b"), "/model"); }

// Per layer: attention 4·4096², gated MLP 3·4096·11008, two RMSNorm weights.
constexpr double kAttention = 4.0 * 4096 * 4096;        // 67,108,864
constexpr double kMlp = 3.0 * 4096 * 11008;             // 135,266,304
constexpr double kNorms = 2.0 * 4096;                   // 8,192
constexpr double kEmbedding = 32000.0 * 4096;           // 131,072,000 (and the LM head)
constexpr double kFinalNorm = 4096;

}  // namespace

TEST_CASE("mem: Llama-2-7B has 6,738,415,616 parameters, two bytes each in bf16") {
  const ModelArch m = llama2_7b();
  const double total = 32 * (kAttention + kMlp + kNorms) + 2 * kEmbedding + kFinalNorm;
  CHECK(total == 6738415616.0);
  CHECK(static_cast<double>(count_params(m).total) == total);
  CHECK(weight_bytes_per_gpu(m, Precision{}, ParallelLayout{1, 1}) == 2 * total);
}

TEST_CASE("mem: tensor parallelism shards every matrix but replicates the layer norms") {
  const ModelArch m = llama2_7b();
  const double tp2 = 32 * (kAttention + kMlp) * 2 / 2 + 32 * kNorms * 2 + (2 * kEmbedding + kFinalNorm) * 2 / 2;
  CHECK(weight_bytes_per_gpu(m, Precision{}, ParallelLayout{2, 1}) == doctest::Approx(tp2).epsilon(1e-12));
}

TEST_CASE("mem: a pipeline stage holds its layers plus the larger of embedding and LM head") {
  const ModelArch m = llama2_7b();
  const double stage = 32 * (kAttention + kMlp + kNorms) * 2 / 2 + (kEmbedding + kFinalNorm) * 2;
  CHECK(weight_bytes_per_gpu(m, Precision{}, ParallelLayout{1, 2}) == doctest::Approx(stage).epsilon(1e-12));
}

TEST_CASE("mem: int4 weight-only quantization stores half a byte plus an fp16 scale and zero per group") {
  const ModelArch m = llama2_7b();
  Precision int4;
  int4.weights = Dtype::INT4;
  int4.weight_group_size = 128;
  // Matrices at 0.5 + 4/128 bytes per weight; norms, embedding and LM head stay bf16.
  const double expected = 32 * (kAttention + kMlp) * (0.5 + 4.0 / 128) + 32 * kNorms * 2 + (2 * kEmbedding + kFinalNorm) * 2;
  CHECK(weight_bytes_per_gpu(m, int4, ParallelLayout{1, 1}) == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("mem: KV cache per token is 2 (K and V) x layers x KV heads x head dim x bytes, split by TP") {
  const ModelArch m = llama2_7b();
  Precision p;
  CHECK(kv_bytes_per_token_per_gpu(m, p, 1, 32) == 2.0 * 32 * 32 * 128 * 2);  // 512 KiB
  CHECK(kv_bytes_per_token_per_gpu(m, p, 2, 32) == 2.0 * 32 * 16 * 128 * 2);
  CHECK(kv_bytes_per_token_per_gpu(m, p, 1, 16) == 2.0 * 16 * 32 * 128 * 2);  // one of two pipeline stages
  p.kv_cache = Dtype::FP8;
  CHECK(kv_bytes_per_token_per_gpu(m, p, 1, 32) == 2.0 * 32 * 32 * 128 * 1);
  // Grouped-query attention: Llama-3-8B keeps 8 KV heads of 128 over 32 layers.
  const ModelArch gqa = read_model(json("llama-3-8b"), "/model");
  CHECK(kv_bytes_per_token_per_gpu(gqa, Precision{}, 1, 32) == 2.0 * 32 * 8 * 128 * 2);
}

TEST_CASE("mem: the transient peak is the forward's MLP peak or, after it, the sampler beside the step's output") {
  const ModelArch m = llama2_7b();
  // 1000 tokens: residual + normed input (2·4096), gate and up (2·11008), activation output (11008), bf16.
  const double mlp = 1000.0 * (2 * 4096 + 2 * 11008 + 11008) * 2;
  // The attention peak (residual, normed input, q, k, v, output) is smaller: 1000·(8192 + 3·4096 + 4096)·2.
  const double attention = 1000.0 * (8192 + 3 * 4096 + 4096) * 2;
  CHECK(attention < mlp);
  // One sampled row of fp32 logits and probabilities (8 B an entry) is below the forward's peak.
  CHECK(activation_peak_bytes(m, Precision{}, 1, 1000, 1, 8.0) == mlp);
  // 256 rows at 38 B an entry (vLLM's profiled sort, presets/stacks/vllm-v1-like.json) exceed it:
  // the sampler's tensors plus the step's output hidden states (1000·4096 bf16).
  const double sampler = 256.0 * 32000 * 38;
  CHECK(sampler > mlp);
  CHECK(activation_peak_bytes(m, Precision{}, 1, 1000, 256, 38.0) == 1000.0 * 4096 * 2 + sampler);
}

TEST_CASE("mem: the sampler reserve grows with rows x vocabulary x bytes per entry, not with the tensor-parallel split") {
  const ModelArch m = llama2_7b();
  const auto peak = [&](int tp, int64_t rows, double bytes) { return activation_peak_bytes(m, Precision{}, tp, 64, rows, bytes); };
  // 64 tokens: the forward's peak is small, so the sampler decides the peak.
  CHECK(peak(1, 512, 38.0) - peak(1, 256, 38.0) == doctest::Approx(256.0 * 32000 * 38));
  CHECK(peak(1, 256, 38.0) - peak(1, 256, 8.0) == doctest::Approx(256.0 * 32000 * 30));
  // Every tensor-parallel rank samples the full (gathered) vocabulary.
  CHECK(peak(2, 256, 38.0) == peak(1, 256, 38.0));
}

TEST_CASE("mem: FlashAttention saves bytes linear in the sequence, standard attention quadratic") {
  // Output (tokens·heads·dim·2 bytes) + fp32 log-sum-exp (tokens·heads·4).
  const double flash = attention_saved_bytes(AttentionImpl::Flash, 2, 1024, 32, 128, 2.0);
  CHECK(flash == 2.0 * 1024 * 32 * 128 * 2 + 2.0 * 1024 * 32 * 4);
  CHECK(attention_saved_bytes(AttentionImpl::Flash, 2, 2048, 32, 128, 2.0) == doctest::Approx(2 * flash));
  // Standard attention adds scores and probabilities: 2·batch·heads·seq²·bytes.
  const double standard = attention_saved_bytes(AttentionImpl::Standard, 2, 1024, 32, 128, 2.0);
  CHECK(standard - flash == 2.0 * 2 * 32 * 1024.0 * 1024.0 * 2);
  const double standard_2x = attention_saved_bytes(AttentionImpl::Standard, 2, 2048, 32, 128, 2.0);
  CHECK(standard_2x - 2 * flash == doctest::Approx(4 * (standard - flash)));
}
