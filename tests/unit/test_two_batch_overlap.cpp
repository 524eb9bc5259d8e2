// Two-batch overlap (issue 38, "What to build" 1: the all-to-all's overlap):
// a step runs as two micro-batches, split as SGLang splits them, and each
// micro-batch's dispatch and combine hide behind what the other runs between
// the send and the receive in SGLang's stage plans; only what outlasts that
// is exposed. Each half reads the weights again, so a memory-bound decode
// step gets slower and a communication-heavy prefill faster.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "error_checks.hpp"
#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "model/operators.hpp"
#include "perf/step_cost.hpp"
#include "serve/moe_step.hpp"
#include "serve/step_pricer.hpp"
#include "serve/two_batch_overlap.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace {

BatchShape shape_of(std::initializer_list<SeqChunk> seqs) {
  BatchShape b;
  b.seqs.assign(seqs);
  return b;
}

// One micro-batch's step with the named parts, each `per_layer_us` a layer:
// the all-to-alls, gate, routed and shared experts on every MoE layer, the
// attention's parts on every layer, as the step builder counts them.
struct Part {
  OpStage part;
  OpFamily family;
  double per_layer_us;
  Dtype dtype = Dtype::BF16;
};

bool on_moe_layers(OpStage p) {
  return p != OpStage::AttentionPrep && p != OpStage::AttentionCore && p != OpStage::Other;
}

void micro_batch(const ModelArch& m, const std::vector<Part>& parts, StepOperators& ops, StepCost& cost) {
  for (const Part& p : parts) {
    Operator op;
    op.stage = p.part;
    op.family = p.family;
    op.compute_dtype = p.dtype;
    op.count = on_moe_layers(p.part) ? m.num_moe_layers() : m.num_layers;
    ops.ops.push_back(op);
    PricedOperator priced;
    priced.family = p.family;
    priced.time_s = p.per_layer_us * 1e-6 * op.count;
    cost.parts.push_back(priced);
    cost.gpu_time_s += priced.time_s;
  }
}

// dispatch 10, combine 20, prep 5 (norm 2 + projection 3), core 15
// (attention 12 + output projection 3), gate 1, routed 30, shared 3 µs a
// layer, and a head (once a step) of 50 µs that hides nothing.
std::vector<Part> layer_parts(Dtype gemm_dtype) {
  using P = OpStage;
  return {{P::AttentionPrep, OpFamily::Norm, 2},
          {P::AttentionPrep, OpFamily::Gemm, 3, gemm_dtype},
          {P::AttentionCore, OpFamily::AttentionDecode, 12},
          {P::AttentionCore, OpFamily::Gemm, 3, gemm_dtype},
          {P::MoeGate, OpFamily::MoeRouter, 1},
          {P::MoeDispatch, OpFamily::Collective, 10},
          {P::RoutedExperts, OpFamily::Gemm, 30, gemm_dtype},
          {P::MoeCombine, OpFamily::Collective, 20},
          {P::SharedExperts, OpFamily::Gemm, 3, gemm_dtype},
          {P::Other, OpFamily::Gemm, 50.0 / 61, Dtype::BF16}};
}

serve::TwoBatchOverlapTime overlap(const StepOperators& ops_a, const StepCost& a, const StepOperators& ops_b,
                                   const StepCost& b, bool decode, const ModelArch& m, const GpuSpec& gpu) {
  return serve::two_batch_overlap_time(serve::micro_batch_parts(ops_a, a, m), serve::micro_batch_parts(ops_b, b, m),
                                       decode, m.num_moe_layers(), gpu);
}

json wide_ep(int requests, int prompt, int output, bool overlap) {
  json s = {{"schema_version", 1},
            {"seed", 1},
            {"model", "deepseek-v3"},
            {"hardware",
             {{"gpu", "h100-sxm"}, {"gpus_per_node", 8}, {"nodes", 2}, {"intra_node", "nvlink4-nvswitch"},
              {"inter_node", "ib-ndr"}}},
            {"precision", {{"weights", "fp8"}, {"activations", "fp8"}, {"fp8_scaling", "block"}}},
            {"cost_model", {{"software_stack", "sglang-overlap-like"}}},
            {"serving",
             {{"mode", "simulate"},
              {"parallelism", {{"tp", 1}, {"pp", 1}}},
              {"moe", {{"expert_parallel", 16}, {"attention_data_parallel", 16}}},
              {"scheduler", {{"policy", "continuous"}, {"max_num_batched_tokens", 16384}}},
              {"workload",
               {{"arrival", {{"process", "all_at_once"}}},
                {"num_requests", requests},
                {"prompt_tokens", prompt},
                {"output_tokens", output}}}}}};
  if (overlap) s["serving"]["moe"]["two_batch_overlap"] = true;
  return s;
}

}  // namespace

TEST_CASE("two-batch overlap: steps split as SGLang splits them") {
  BatchShape a, b;
  // A decode halves its sequences by count.
  BatchShape decode;
  decode.seqs.assign(65, SeqChunk{1, 2048});
  REQUIRE(serve::split_two_batches(decode, a, b));
  CHECK(a.seqs.size() == 32);
  CHECK(b.seqs.size() == 33);
  // An extend splits after the sequence whose new tokens first reach half their sum.
  REQUIRE(serve::split_two_batches(shape_of({{100, 0}, {2000, 0}}), a, b));
  CHECK(a.seqs.size() == 1);
  CHECK(b.seqs.front().new_tokens == 2000);
  REQUIRE(serve::split_two_batches(shape_of({{500, 0}, {500, 0}, {500, 0}, {500, 0}}), a, b));
  CHECK(a.seqs.size() == 2);
  CHECK(b.seqs.size() == 2);
  // Decodes before a prompt never reach half: the prompt runs alone, the
  // split never after the last sequence.
  BatchShape mixed = decode;
  mixed.seqs.push_back(SeqChunk{1024, 0});
  REQUIRE(serve::split_two_batches(mixed, a, b));
  CHECK(a.seqs.size() == 65);
  CHECK(b.seqs.size() == 1);
  // One sequence runs as one batch.
  CHECK_FALSE(serve::split_two_batches(shape_of({{4096, 0}}), a, b));
  CHECK(a.seqs.empty());
  CHECK(b.seqs.empty());
}

TEST_CASE("two-batch overlap: each all-to-all hides behind the other micro-batch's stages, no more") {
  const ModelArch m = read_model(json("deepseek-v3"), "/model");
  const double moe_layers = m.num_moe_layers();
  GpuSpec gpu;
  gpu.vendor = "nvidia";
  gpu.sm_count = 132;
  StepOperators ops_a, ops_b;
  StepCost a, b;
  micro_batch(m, layer_parts(Dtype::FP8), ops_a, a);
  micro_batch(m, layer_parts(Dtype::FP8), ops_b, b);
  const double all_to_all_s = 2 * 30e-6 * moe_layers;

  // Decode: a's dispatch behind its shared experts and b's prep (10 - 8),
  // a's combine behind b's core and gate (20 - 16), b's dispatch behind its
  // own shared experts only (10 - 3), b's combine behind a's next prep (20 - 5).
  const serve::TwoBatchOverlapTime d = overlap(ops_a, a, ops_b, b, true, m, gpu);
  CHECK(d.all_to_all_s == doctest::Approx(all_to_all_s));
  CHECK(d.exposed_s == doctest::Approx((2 + 4 + 7 + 15) * 1e-6 * moe_layers));
  CHECK(d.sm_share_s == 0);  // decode's low-latency kernels hold no SMs while they wait
  CHECK(d.gpu_s == doctest::Approx(a.gpu_time_s + b.gpu_time_s - all_to_all_s + d.exposed_s));

  // Prefill: a's dispatch behind b's attention and gate (21 > 10), a's
  // combine behind b's routed and its own shared experts (33 > 20), b's
  // dispatch behind a's routed experts (30 > 10), b's combine behind both
  // shared experts (20 - 6); DeepGEMM on 112 of 132 SMs.
  const serve::TwoBatchOverlapTime p = overlap(ops_a, a, ops_b, b, false, m, gpu);
  CHECK(p.exposed_s == doctest::Approx(14e-6 * moe_layers));
  const double fp8_gemm_s = 2 * ((3 + 3) * m.num_layers + (30 + 3) * moe_layers) * 1e-6;
  CHECK(p.sm_share_s == doctest::Approx(fp8_gemm_s * 20 / 112));
  // BF16 GEMMs are not DeepGEMM's, and on ROCm SGLang leaves the SMs alone.
  StepOperators bf_a, bf_b;
  StepCost cbf_a, cbf_b;
  micro_batch(m, layer_parts(Dtype::BF16), bf_a, cbf_a);
  micro_batch(m, layer_parts(Dtype::BF16), bf_b, cbf_b);
  CHECK(overlap(bf_a, cbf_a, bf_b, cbf_b, false, m, gpu).sm_share_s == 0);
  GpuSpec amd = gpu;
  amd.vendor = "amd";
  CHECK(overlap(ops_a, a, ops_b, b, false, m, amd).sm_share_s == 0);

  // Property: the overlap never exposes more than the all-to-all, nor hides
  // any compute, whatever the comm's size.
  for (const double scale : {0.0, 0.1, 1.0, 10.0, 1000.0})
    for (const bool decode : {true, false}) {
      StepOperators oa, ob;
      StepCost ca, cb;
      std::vector<Part> parts = layer_parts(Dtype::FP8);
      for (Part& q : parts)
        if (q.family == OpFamily::Collective) q.per_layer_us *= scale;
      micro_batch(m, parts, oa, ca);
      micro_batch(m, parts, ob, cb);
      const serve::TwoBatchOverlapTime t = overlap(oa, ca, ob, cb, decode, m, gpu);
      CAPTURE(scale);
      CHECK(t.exposed_s <= t.all_to_all_s + 1e-15);
      CHECK(t.gpu_s >= ca.gpu_time_s + cb.gpu_time_s - t.all_to_all_s - 1e-12);
      CHECK(t.gpu_s <= ca.gpu_time_s + cb.gpu_time_s + t.sm_share_s + 1e-12);
    }
}

TEST_CASE("two-batch overlap: a comm-heavy prefill gets faster, a small decode batch slower") {
  // DeepSeek-V3 fp8 over two H100 nodes (EP 16 across InfiniBand): 128
  // prompts of 4,096 tokens, four a step on each rank, split two and two.
  const json plain = test::central_result(wide_ep(128, 4096, 1, false));
  const json overlap = test::central_result(wide_ep(128, 4096, 1, true));
  const double plain_s = plain["metrics"]["duration_s"].get<double>();
  const double overlap_s = overlap["metrics"]["duration_s"].get<double>();
  CHECK(overlap_s < plain_s);
  // A decode of 4 sequences a rank is memory-bound: each half streams the
  // experts' and the attention's weights again, and the LL all-to-all it
  // hides is small.
  const json small_plain = test::central_result(wide_ep(64, 128, 64, false));
  const json small_overlap = test::central_result(wide_ep(64, 128, 64, true));
  CHECK(small_overlap["metrics"]["tpot_ms"]["mean"].get<double>() >
        1.3 * small_plain["metrics"]["tpot_ms"]["mean"].get<double>());
}

TEST_CASE("two-batch overlap: needs expert parallelism, said where") {
  json s = wide_ep(8, 128, 4, true);
  s["serving"]["moe"] = {{"two_batch_overlap", true}};
  test::check_error(test::validate(s), "constraint_violation", "/serving/moe/two_batch_overlap");
  s["serving"]["moe"] = {{"expert_parallel", 16}, {"attention_data_parallel", 16}, {"two_batch_overlap", "yes"}};
  test::check_error(test::validate(s), "type_error", "/serving/moe/two_batch_overlap");
}

TEST_CASE("two-batch overlap: the builder marks each operator's part of the layer, a core-only rebuild too") {
  // (A MoE model's steps are always built whole: model/operators.cpp reusable.)
  const ModelArch m = read_model(json("deepseek-v3"), "/model");
  Precision p;
  p.weights = p.activations = Dtype::FP8;
  ParallelLayout layout;
  StepOptions o;
  o.reuse_unchanged = true;
  BatchShape b;
  b.seqs.assign(32, SeqChunk{1, 2048});
  StepOperators ops;
  const auto parts_by_name = [&]() {
    std::map<std::string, std::set<OpStage>> by;
    for (const Operator& op : ops.ops) by[op.name].insert(op.stage);
    return by;
  };
  const auto check_parts = [&]() {
    const auto by = parts_by_name();
    using P = OpStage;
    const std::pair<const char*, P> expected[] = {
        {"input_layernorm", P::AttentionPrep}, {"attn_q_a_proj", P::AttentionPrep},
        {"attn_kv_a_proj", P::AttentionPrep},  {"kv_cache_write", P::AttentionPrep},
        {"attn_decode", P::AttentionCore},     {"attn_post_proj", P::AttentionCore},
        {"post_attention_layernorm", P::AttentionCore}, {"moe_router", P::MoeGate},
        {"moe_topk", P::MoeGate},              {"moe_expert_up_proj", P::RoutedExperts},
        {"moe_expert_down_proj", P::RoutedExperts}, {"moe_shared_up_proj", P::SharedExperts},
        {"mlp_up_proj", P::Other},             {"lm_head", P::Other},
        {"emb", P::Other}};
    for (const auto& e : expected) {
      const std::string name = e.first;
      CAPTURE(name);
      REQUIRE(by.count(name) == 1);
      CHECK(by.at(name) == std::set<P>{e.second});
    }
  };
  build_forward_step_into(m, p, layout, b, o, ops);
  check_parts();
  // The all-to-alls are the dispatch's and the combine's.
  serve::MoeServingSpec spec;
  spec.expert_parallel = 8;
  spec.attention_data_parallel = 8;
  serve::append_moe_all_to_all(spec, m, Dtype::FP8, b, serve::serving_moe_routing(spec, m, layout, 0), ops);
  const auto by = parts_by_name();
  CHECK(by.at("moe_dispatch") == std::set<OpStage>{OpStage::MoeDispatch});
  CHECK(by.at("moe_combine") == std::set<OpStage>{OpStage::MoeCombine});

  // A dense model's next decode step (one more cached token each) rebuilds
  // only its attention cores, in place: they stay the core.
  const ModelArch dense = read_model(json("llama-3-8b"), "/model");
  StepOperators d;
  build_forward_step_into(dense, p, layout, b, o, d);
  for (SeqChunk& q : b.seqs) q.cached_tokens += 1;
  build_forward_step_into(dense, p, layout, b, o, d);
  REQUIRE(d.reuse.cores_only);
  for (const Operator& op : d.ops) {
    CAPTURE(op.name);
    if (op.family == OpFamily::AttentionDecode) CHECK(op.stage == OpStage::AttentionCore);
    if (op.role == OpRole::AttnProj) CHECK((op.stage == OpStage::AttentionPrep || op.stage == OpStage::AttentionCore));
    if (op.name == "attn_pre_proj") CHECK(op.stage == OpStage::AttentionPrep);
    if (op.name == "lm_head" || op.name == "mlp_up_proj") CHECK(op.stage == OpStage::Other);
  }
}

TEST_CASE("two-batch overlap: halves that share a batch summary are each priced as themselves") {
  // Two halves of 32 decodes have equal batch summaries (the built step's
  // key) whatever their contexts: the first must be read before the second
  // is built over it. A step of long and short contexts costs between the
  // all-short and the all-long one, in either order.
  const Scenario s = read_scenario(wide_ep(8, 128, 4, true));
  const std::vector<serve::SimRequest> reqs;
  serve::StepPricer pricer(s, reqs);
  const serve::PoolCosts costs = pricer.add_pool(s.serving->simulation->cluster.pools.front(), s.hardware.gpu, true);
  const auto step_s = [&](int64_t first_kv, int64_t second_kv) {
    BatchShape b;
    b.seqs.assign(32, SeqChunk{1, first_kv});
    b.seqs.insert(b.seqs.end(), 32, SeqChunk{1, second_kv});
    return pricer.price(costs.models[0], b, 0, false, nullptr);
  };
  const double short_s = step_s(512, 512), long_s = step_s(32768, 32768);
  CAPTURE(short_s);
  CAPTURE(long_s);
  REQUIRE(long_s > 1.1 * short_s);
  for (const int64_t first : {int64_t{32768}, int64_t{512}}) {
    const double mixed_s = step_s(first, first == 512 ? 32768 : 512);
    CAPTURE(first);
    CAPTURE(mixed_s);
    CHECK(mixed_s > short_s * 1.02);
    CHECK(mixed_s < long_s / 1.02);
  }
}
