// CUDA-graph batch buckets (issue 38, point 2): engines capture decode graphs
// at fixed batch sizes, pad a decode batch to the next captured size and run a
// batch above the largest one eagerly. The lists are the engines' own defaults
// (presets/stacks/*.json, with their sources).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "perf/cost_setup.hpp"
#include "perf/graph_buckets.hpp"
#include "perf/host_overhead.hpp"
#include "perf/step_cost.hpp"

using namespace sightline;

namespace {

SoftwareStack gb_stack(const std::string& id) { return read_software_stack(json(id), "/cost_model/software_stack"); }

BatchShape gb_decode(int64_t seqs, int64_t kv) {
  BatchShape b;
  b.seqs.assign(static_cast<size_t>(seqs), SeqChunk{1, kv});
  return b;
}

CostSetup gb_setup(const CostModelSpec& spec, HardwareSpec& h) {
  h.gpu = read_gpu(json("h100-sxm"), "/hardware/gpu");
  return make_cost_setup(spec, h);
}

}  // namespace

TEST_CASE("a decode batch of 65 is padded to the next captured size") {
  // vLLM's lists (v0.5: 1, 2, 4, 8, ..., 256; V1: ..., 248, 256, 272, ..., 512),
  // SGLang's and TensorRT-LLM's padded lists all capture 64 and 72.
  for (const char* id : {"vllm-like", "vllm-v1-like", "sglang-overlap-like", "trtllm-like"}) {
    CAPTURE(id);
    const SoftwareStack s = gb_stack(id);
    CHECK(graph_bucket(s.graph_batch_sizes, 65) == 72);
    CHECK(graph_bucket(s.graph_batch_sizes, 64) == 64);
    CHECK(graph_bucket(s.graph_batch_sizes, 3) == 4);
    int64_t padding = -1;
    const BatchShape ran = graph_padded_batch(gb_decode(65, 700), s.graph_batch_sizes, true, &padding);
    CHECK(ran.seqs.size() == 72);
    CHECK(padding == 7);
    CHECK(ran.seqs.back().new_tokens == 1);
    CHECK(ran.seqs.back().cached_tokens == 1);  // a dummy slot attends to almost nothing
  }
  // Past the largest captured size: no graph, no padding.
  const SoftwareStack v05 = gb_stack("vllm-like");
  CHECK(graph_bucket(v05.graph_batch_sizes, 257) == 0);
  int64_t padding = -1;
  CHECK(graph_padded_batch(gb_decode(257, 700), v05.graph_batch_sizes, true, &padding).seqs.size() == 257);
  CHECK(padding == 0);
  // gpt-fast style ("every") and graph-less stacks pad nothing.
  CHECK(graph_bucket(gb_stack("torch-compile-like").graph_batch_sizes, 65) == 65);
  CHECK(graph_padded_batch(gb_decode(65, 700), v05.graph_batch_sizes, false, &padding).seqs.size() == 65);
}

TEST_CASE("only uniform decode batches are graph batches") {
  const SoftwareStack s = gb_stack("vllm-like");
  BatchShape mixed = gb_decode(65, 700);
  mixed.seqs.push_back(SeqChunk{512, 0});  // a prompt chunk: eager, unpadded
  int64_t padding = -1;
  CHECK_FALSE(is_graph_decode_batch(mixed));
  CHECK(graph_padded_batch(mixed, s.graph_batch_sizes, true, &padding).seqs.size() == 66);
  CHECK(padding == 0);
  BatchShape verify;
  verify.seqs.assign(65, SeqChunk{4, 700});  // speculative verify: 4 tokens each
  CHECK(is_graph_decode_batch(verify));
  CHECK(graph_padded_batch(verify, s.graph_batch_sizes, true, &padding).seqs.back().new_tokens == 4);
}

TEST_CASE("padding costs GPU time, not host time; above the captured sizes the step runs eagerly") {
  const ModelArch m = read_model(json("llama-3-8b"), "/model");
  const SoftwareStack vllm = gb_stack("vllm-like");
  StepOptions o;
  o.fusion = vllm.fusion;
  const StepOperators padded = build_served_step(m, Precision{}, ParallelLayout{}, gb_decode(65, 2000), o, vllm);
  const StepOperators exact = build_forward_step(m, Precision{}, ParallelLayout{}, gb_decode(65, 2000), o);
  const StepOperators full = build_forward_step(m, Precision{}, ParallelLayout{}, gb_decode(72, 2000), o);
  CHECK(padded.sequences == 72);
  CHECK(padded.padding_sequences == 7);
  const HostTime hp = host_time(padded, vllm), he = host_time(exact, vllm);
  CHECK(hp.sequences == 65);
  CHECK(hp.scheduler_s == doctest::Approx(he.scheduler_s));
  CHECK(hp.graphs);
  CostModelSpec spec;
  spec.software_stack = vllm;
  HardwareSpec h;
  const CostSetup setup = gb_setup(spec, h);
  const double t_exact = setup.price_kernels(exact).gpu_time_s, t_padded = setup.price_kernels(padded).gpu_time_s;
  CHECK(t_padded > t_exact);                                    // seven more rows in every GEMM
  CHECK(t_padded < setup.price_kernels(full).gpu_time_s);       // but the dummies read almost no KV
  // 257 sequences on vLLM v0.5 (largest graph 256): eager launches.
  const HostTime eager = host_time(build_served_step(m, Precision{}, ParallelLayout{}, gb_decode(257, 2000), o, vllm), vllm);
  CHECK_FALSE(eager.graphs);
  CHECK(eager.launch_s == doctest::Approx(vllm.kernel_launch_us * 1e-6 * static_cast<double>(eager.kernels)));
}

TEST_CASE("captured batch sizes are read strictly") {
  json s = json::parse(R"({"id": "x", "cuda_graphs": "decode", "cuda_graph_batch_sizes": [1, 2, 2],
    "kernel_launch_us": 1, "graph_launch_us": 1, "scheduler_us_per_step": 0, "scheduler_us_per_sequence": 0,
    "overlap_scheduler": true, "fused_kernels": [], "all_reduce": {"source": "test", "implementations": [{"algorithm": "nccl"}]}})");
  auto code_at = [](const json& v) -> std::pair<std::string, std::string> {
    try {
      read_software_stack(v, "/stack");
    } catch (const SightlineError& e) {
      return {e.code(), e.path()};
    }
    return {"", ""};
  };
  CHECK(code_at(s) == std::make_pair(std::string("constraint_violation"), std::string("/stack/cuda_graph_batch_sizes/2")));
  s["cuda_graph_batch_sizes"] = json::array({1, 0});
  CHECK(code_at(s).second == "/stack/cuda_graph_batch_sizes/1");
  s.erase("cuda_graph_batch_sizes");
  CHECK(code_at(s).second == "/stack/cuda_graph_batch_sizes");  // required with graphs
  s["cuda_graphs"] = "none";
  CHECK(code_at(s).first.empty());
  s["cuda_graph_batch_sizes"] = "every";
  CHECK(code_at(s).second == "/stack/cuda_graph_batch_sizes");  // a graph-less stack captures nothing
}

// The simulator pads and prices a step per event into storage it keeps
// (graph_pad_into, CostSetup::price_into): reused storage must give exactly
// what fresh storage gives, whatever the previous step was (larger, smaller,
// with or without a host part), to the bit.
TEST_CASE("padding and pricing into reused storage equal fresh results to the bit") {
  const ModelArch m = read_model(json("llama-3-8b"), "/model");
  const SoftwareStack vllm = gb_stack("vllm-like");
  StepOptions o;
  o.fusion = vllm.fusion;
  CostModelSpec spec;
  spec.software_stack = vllm;
  HardwareSpec h;
  const CostSetup setup = gb_setup(spec, h);
  BatchShape mixed = gb_decode(30, 900);
  mixed.seqs.push_back(SeqChunk{512, 0});
  BatchShape ran;
  StepCost reused, memoized;
  OpCostMemo memo;
  for (const BatchShape& b : {gb_decode(65, 2000), gb_decode(3, 100), mixed, gb_decode(257, 700), gb_decode(65, 2001)}) {
    CAPTURE(b.seqs.size());
    int64_t pad_fresh = -1, pad_reused = -1;
    const BatchShape fresh = graph_padded_batch(b, vllm.graph_batch_sizes, true, &pad_fresh);
    graph_pad_into(b, vllm.graph_batch_sizes, true, ran, &pad_reused);
    CHECK(pad_reused == pad_fresh);
    REQUIRE(ran.seqs.size() == fresh.seqs.size());
    for (size_t i = 0; i < ran.seqs.size(); ++i) {
      CHECK(ran.seqs[i].new_tokens == fresh.seqs[i].new_tokens);
      CHECK(ran.seqs[i].cached_tokens == fresh.seqs[i].cached_tokens);
    }
    const StepOperators ops = build_served_step(m, Precision{}, ParallelLayout{}, b, o, vllm);
    const StepCost want = setup.price(ops);
    setup.price_into(ops, reused);
    auto totals = [](const StepCost& c) {
      return std::vector<double>{c.time_s, c.gpu_time_s, c.time_low_s,     c.time_high_s,
                                 c.flops,  c.bytes,      c.compute_peak_s, c.memory_peak_s};
    };
    auto figures = [](const PricedOperator& p) {
      return std::vector<double>{static_cast<double>(p.family), p.count, p.time_s, p.time_low_s, p.time_high_s, p.flops,
                                 p.bytes};
    };
    CHECK(totals(reused) == totals(want));
    REQUIRE(reused.parts.size() == want.parts.size());
    for (size_t i = 0; i < want.parts.size(); ++i) {
      CHECK(reused.parts[i].name == want.parts[i].name);
      CHECK(reused.parts[i].bound == want.parts[i].bound);
      CHECK(figures(reused.parts[i]) == figures(want.parts[i]));
    }
    // The serving simulator's way: unlabeled, through a memo of the previous
    // step's operator costs. The same figures to the bit.
    setup.price_into(ops, memoized, false, &memo);
    CHECK(totals(memoized) == totals(want));
    REQUIRE(memoized.parts.size() == want.parts.size());
    for (size_t i = 0; i < want.parts.size(); ++i) CHECK(figures(memoized.parts[i]) == figures(want.parts[i]));
  }
  // 65 sequences at 2000, then at 2001 cached tokens: the attention
  // operators changed, the GEMMs and the rest came from the memo.
  setup.price_into(build_served_step(m, Precision{}, ParallelLayout{}, gb_decode(65, 2000), o, vllm), memoized, false, &memo);
  const int64_t reused_before = memo.reused, priced_before = memo.priced;
  setup.price_into(build_served_step(m, Precision{}, ParallelLayout{}, gb_decode(65, 2001), o, vllm), memoized, false, &memo);
  CHECK(memo.reused - reused_before >= 10);
  CHECK(memo.priced - priced_before >= 1);
  CHECK(memo.priced - priced_before <= 3);
  CHECK(memoized.time_s == setup.price(build_served_step(m, Precision{}, ParallelLayout{}, gb_decode(65, 2001), o, vllm)).time_s);
}

TEST_CASE("an operator is the same as another only when every field is") {
  const ModelArch m = read_model(json("llama-3-8b"), "/model");
  const StepOperators ops = build_forward_step(m, Precision{}, ParallelLayout{}, gb_decode(8, 500), StepOptions{});
  REQUIRE(!ops.ops.empty());
  for (const Operator& op : ops.ops) {
    CHECK(same_operator(op, op));
    Operator other = op;
    other.bytes = std::nextafter(op.bytes, 1e300);
    CHECK_FALSE(same_operator(op, other));
    other = op;
    other.name += "_x";
    CHECK_FALSE(same_operator(op, other));
    other = op;
    other.kv_tokens += 1;
    CHECK_FALSE(same_operator(op, other));
  }
  Operator zero, negative_zero;
  negative_zero.flops = -0.0;
  CHECK_FALSE(same_operator(zero, negative_zero));  // bit for bit: a memo never mixes them
}

TEST_CASE("a served step built from the caller's batch summary is the step built without it") {
  // The simulator passes the summary it made (StepOptions::summary): the graph
  // check and the padded batch's summary come from it, not from passes over
  // the sequences. Decodes (padded), verifies (padded, checked by a pass),
  // mixed batches (not padded) and a batch above the largest captured size.
  const ModelArch m = read_model(json("llama-2-7b"), "/model");
  const SoftwareStack vllm = gb_stack("vllm-like");
  BatchShape mixed = gb_decode(27, 700);
  mixed.seqs.push_back(SeqChunk{512, 0});
  BatchShape verify;
  verify.seqs.assign(27, SeqChunk{4, 700});
  const BatchShape batches[] = {gb_decode(27, 700), gb_decode(1, 3), verify, mixed, gb_decode(600, 90)};
  for (const BatchShape& b : batches) {
    CAPTURE(b.seqs.size());
    const BatchSummary summary = summarize_batch(b);
    StepOptions with;
    with.summary = &summary;
    BatchShape s1, s2;
    StepOperators o1, o2;
    const BatchShape& r1 = build_served_step_into(m, Precision{}, ParallelLayout{}, b, StepOptions{}, vllm, s1, o1);
    const BatchShape& r2 = build_served_step_into(m, Precision{}, ParallelLayout{}, b, with, vllm, s2, o2);
    CHECK(r1.seqs.size() == r2.seqs.size());
    CHECK(o1.padding_sequences == o2.padding_sequences);
    CHECK(o1.sequences == o2.sequences);
    REQUIRE(o1.ops.size() == o2.ops.size());
    for (size_t i = 0; i < o1.ops.size(); ++i) CHECK(same_operator(o1.ops[i], o2.ops[i]));
    CHECK(is_graph_decode_batch(b, &summary) == is_graph_decode_batch(b));
  }
}
