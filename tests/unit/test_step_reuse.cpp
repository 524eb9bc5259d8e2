// StepOptions::reuse_unchanged (issue 41): a step built over the last one,
// rebuilding only its attention cores when the batch's summary is unchanged,
// is the step a whole build makes, operator for operator and bit for bit, and
// a pricing memo that takes the unchanged operators' costs without comparing
// them prices it as a fresh pricing does.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "model/operators.hpp"
#include "perf/cost_setup.hpp"
#include "perf/step_cost.hpp"
#include "serve/rng.hpp"

using namespace sightline;

namespace {

// A serving-like walk of batches: decodes that grow by a token a step, with
// prompts (whole or in chunks) joining and sequences leaving now and then, so
// that most consecutive batches share their summary and some do not.
std::vector<BatchShape> sr_batches(uint64_t seed, int steps) {
  serve::Rng rng(seed);
  std::vector<SeqChunk> running;
  std::vector<BatchShape> out;
  for (int i = 0; i < steps; ++i) {
    for (SeqChunk& s : running) {
      s.cached_tokens += s.new_tokens;
      s.new_tokens = 1;
    }
    const double u = rng.uniform01();
    if (u < 0.1 && !running.empty()) running.erase(running.begin() + static_cast<std::ptrdiff_t>(rng.uniform01() * running.size()));
    else if (u < 0.2) running.push_back(SeqChunk{1 + static_cast<int64_t>(rng.uniform01() * 700), 0});
    else if (u < 0.25) running.push_back(SeqChunk{256, 4096});  // a later chunk of a long prompt
    BatchShape b;
    b.seqs = running;
    out.push_back(b);
  }
  return out;
}

bool sr_same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("a step rebuilt over the last one is the step built whole") {
  // Dense RMSNorm and LayerNorm models, learned positions, sliding windows, a
  // Mamba hybrid (its phase counts), and an MoE model (always built whole).
  const char* models[] = {"llama-2-7b", "gemma-3-27b", "falcon-40b", "gpt2", "nemotron-h-56b", "mixtral-8x7b"};
  for (const char* id : models) {
    for (int tp : {1, 2}) {
      CAPTURE(id);
      CAPTURE(tp);
      const ModelArch m = read_model(json(id), "/model");
      const std::vector<LayerGroup> groups = m.layer_groups();
      Precision p;
      ParallelLayout layout;
      layout.tp = tp;
      StepOptions reuse;
      reuse.layer_groups = &groups;
      reuse.fusion.fused_add_rms_norm = true;
      reuse.reuse_unchanged = true;
      StepOptions whole = reuse;
      whole.reuse_unchanged = false;
      HardwareSpec h;
      h.gpu = read_gpu(json("h100-sxm"), "/hardware/gpu");
      const CostSetup setup = make_cost_setup(CostModelSpec{}, h);
      StepOperators kept;
      OpCostMemo memo;
      StepCost priced;
      int64_t rebuilt = 0, resumable = 0;  // steps priced from the memo's sums before the cores
      for (const BatchShape& b : sr_batches(7 + static_cast<uint64_t>(tp), 300)) {
        const bool same_summary = kept.reuse.valid && kept.reuse.batch == summarize_batch(b);
        build_forward_step_into(m, p, layout, b, reuse, kept);
        kept.ops.push_back(kept.ops.front());  // what a caller appends after the build is dropped by the next one
        kept.ops.back().name = "appended";
        StepOperators fresh = build_forward_step(m, p, layout, b, whole);
        fresh.ops.push_back(kept.ops.back());
        REQUIRE(kept.ops.size() == fresh.ops.size());
        for (size_t i = 0; i < fresh.ops.size(); ++i) REQUIRE(same_operator(kept.ops[i], fresh.ops[i]));
        CHECK(kept.sequences == fresh.sequences);
        CHECK(kept.padding_sequences == fresh.padding_sequences);
        setup.price_into(kept, priced, false, &memo);
        const StepCost alone = setup.price(fresh);
        CHECK(sr_same_bits(priced.time_s, alone.time_s));
        CHECK(sr_same_bits(priced.time_low_s, alone.time_low_s));
        CHECK(sr_same_bits(priced.time_high_s, alone.time_high_s));
        CHECK(sr_same_bits(priced.flops, alone.flops));
        CHECK(sr_same_bits(priced.bytes, alone.bytes));
        CHECK(sr_same_bits(priced.compute_peak_s, alone.compute_peak_s));
        CHECK(sr_same_bits(priced.memory_peak_s, alone.memory_peak_s));
        // The kernel count host_time takes from the pricing: its own walk's.
        double kernels = 0;
        bool prefill = false;
        for (const Operator& op : fresh.ops) {
          kernels += op.count;
          prefill = prefill || op.family == OpFamily::AttentionPrefill;
        }
        CHECK(sr_same_bits(priced.kernels, kernels));
        CHECK(priced.has_prefill == prefill);
        rebuilt += same_summary ? 1 : 0;
        resumable += memo.resume_at != 0 ? 1 : 0;
      }
      CHECK(memo.reused > memo.priced);
      // The walk exercised the rebuild (most steps), except for the MoE model.
      if (m.is_moe()) CHECK(rebuilt == 0);
      else CHECK(rebuilt > 150);
      // The sums before the first core were kept for the next rebuild (and
      // the checks above held for the steps that started from them).
      if (m.is_moe()) CHECK(resumable == 0);
      else CHECK(resumable > 100);
    }
  }
}

namespace {

// Two decode steps in a row: the same summary (four decodes), longer caches.
BatchShape sr_decode_step(int64_t cached) {
  BatchShape b;
  for (int64_t i = 0; i < 4; ++i) b.seqs.push_back(SeqChunk{1, cached + 100 * i});
  return b;
}

}  // namespace

TEST_CASE("a step whose options, layout or precision changed is built whole, not over the last one") {
  // A caller that changes what a build is made from between two batches of the
  // same summary gets the whole build of the new inputs: reusing the last
  // build's operators would keep the old ones (the fused norm, the other tp's
  // shapes, the other weight dtype; a changed attention kernel only its cores
  // would see, and the rebuild is whole there too). Reuse that ignored the
  // inputs fails every case (measured by disabling the check: ten failures).
  const ModelArch m = read_model(json("llama-2-7b"), "/model");
  const std::vector<LayerGroup> groups = m.layer_groups();
  Precision p;
  Precision fp8 = p;
  fp8.weights = fp8.activations = Dtype::FP8;
  ParallelLayout one, two;
  two.tp = 2;
  StepOptions base;
  base.layer_groups = &groups;
  base.fusion.fused_add_rms_norm = true;
  base.reuse_unchanged = true;
  struct Change {
    const char* what;
    StepOptions options;
    const ParallelLayout* layout;
    const Precision* precision;
  };
  StepOptions unfused = base, standard = base;
  unfused.fusion.fused_add_rms_norm = false;
  standard.attention = AttentionImpl::Standard;
  const Change changes[] = {{"fusion", unfused, &one, &p},
                            {"attention kernel", standard, &one, &p},
                            {"tp", base, &two, &p},
                            {"precision", base, &one, &fp8}};
  for (const Change& c : changes) {
    const std::string what = c.what;
    CAPTURE(what);
    StepOperators kept;
    build_forward_step_into(m, p, one, sr_decode_step(500), base, kept);
    REQUIRE(kept.reuse.valid);
    REQUIRE(kept.reuse.batch == summarize_batch(sr_decode_step(501)));
    StepOptions whole = c.options;
    whole.reuse_unchanged = false;
    for (int64_t cached : {501, 502}) {  // the change, then the next step with the same inputs
      build_forward_step_into(m, *c.precision, *c.layout, sr_decode_step(cached), c.options, kept);
      const StepOperators fresh = build_forward_step(m, *c.precision, *c.layout, sr_decode_step(cached), whole);
      bool same = kept.ops.size() == fresh.ops.size();
      for (size_t i = 0; same && i < fresh.ops.size(); ++i) same = same_operator(kept.ops[i], fresh.ops[i]);
      CHECK(same);
      // The changed inputs' first build is whole; the next, with its inputs unchanged, reuses it.
      CHECK(kept.reuse.cores_only == (cached == 502));
    }
  }
}

namespace {

// The attention decode core's flops and bytes added one sequence after
// another, in batch order, as a step builder did before it summed plain
// decodes from their counts (the formula of add_decode_core_term, one-token
// decodes without a window, top-k or MLA).
void sr_decode_sums_in_order(const ModelArch& m, const Precision& p, int tp, const BatchShape& b, double& flops,
                             double& bytes) {
  const ShardDims d = shard_dims(m, tp);
  const double heads = d.heads, kv_heads = d.kv_heads, qk = static_cast<double>(m.head_dim), v = qk;
  flops = bytes = 0;
  for (const SeqChunk& s : b.seqs) {
    if (!(s.new_tokens == 1 && s.cached_tokens > 0)) continue;
    const double keys = static_cast<double>(s.cached_tokens) + 1.0;
    flops += 1.0 * heads * keys * 2.0 * (qk + v);
    bytes += keys * kv_heads * (qk + v) * dtype_bytes(p.kv_cache) + 2.0 * 1.0 * heads * qk * dtype_bytes(p.activations);
  }
}

}  // namespace

TEST_CASE("plain decodes' attention sums made from their counts are the in-order sums, bit for bit") {
  // Exact whole numbers (and sixteenths of a byte) under 2^36 add in any
  // order to the same double; past that bound (caches of 2^37 tokens) the
  // builder adds them one by one. KV in bf16, fp8, int4 (0.5 bytes) and
  // nvfp4 (0.5625); serving-like walks of mixed batches.
  const ModelArch m = read_model(json("llama-2-7b"), "/model");
  Dtype kv_types[] = {Dtype::BF16, Dtype::FP8, Dtype::INT4, Dtype::NVFP4};
  int64_t checked = 0;
  for (Dtype kv : kv_types) {
    for (int tp : {1, 2}) {
      Precision p;
      p.kv_cache = kv;
      ParallelLayout layout;
      layout.tp = tp;
      std::vector<BatchShape> batches = sr_batches(11 + static_cast<uint64_t>(tp), 200);
      BatchShape huge;
      for (int64_t i = 0; i < 5; ++i) huge.seqs.push_back(SeqChunk{1, (int64_t{1} << 37) + 977 * i});
      batches.push_back(huge);
      for (const BatchShape& b : batches) {
        double flops = 0, bytes = 0;
        sr_decode_sums_in_order(m, p, tp, b, flops, bytes);
        const StepOperators ops = build_forward_step(m, p, layout, b, StepOptions{});
        for (const Operator& op : ops.ops) {
          if (op.family != OpFamily::AttentionDecode) continue;
          CHECK(sr_same_bits(op.flops, flops));
          CHECK(sr_same_bits(op.bytes, bytes));
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 1000);
}

TEST_CASE("a summary's add_alike counts what add makes chunk by chunk") {
  // The scheduler's walk counts its alike decodes (or verifies) and adds them
  // at once: the same summary as one add per chunk, decodes with and without
  // cached tokens (a prompt of none), one new token or several.
  serve::Rng rng(7);
  int64_t checked = 0;
  for (int64_t new_tokens : {1, 2, 5}) {
    for (int round = 0; round < 50; ++round) {
      BatchSummary start;
      start.add(SeqChunk{300, 0});  // the walk adds to what the step already holds
      BatchSummary one_by_one = start, at_once = start;
      int64_t n = 0, with_cache = 0, keys = 0;
      const int chunks = static_cast<int>(rng.uniform01() * 40);
      for (int i = 0; i < chunks; ++i) {
        const int64_t cached = rng.uniform01() < 0.1 ? 0 : 1 + static_cast<int64_t>(rng.uniform01() * 5000);
        one_by_one.add(SeqChunk{new_tokens, cached});
        ++n;
        if (cached > 0) {
          ++with_cache;
          keys += cached + 1;
        }
      }
      at_once.add_alike(new_tokens, n, with_cache, keys);
      CHECK(at_once == one_by_one);
      CHECK(at_once.decode_keys == one_by_one.decode_keys);  // which == leaves out
      ++checked;
    }
  }
  CHECK(checked == 150);
}
