// MoE layers priced as serving stacks run them: one grouped GEMM per
// projection over the experts a batch hits. Physics properties, not fitted
// numbers: the expected-experts formula, a kernel count that does not grow
// with the number of experts, a step bounded below by the weight bytes it
// reads, and time monotone in batch.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "model/architecture.hpp"
#include "model/moe_routing.hpp"
#include "model/operators.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace {

json latency_scenario(const std::string& model, const std::string& gpu, int gpus, int tp, int batch,
                      const std::string& dtype) {
  return {{"schema_version", 1},
          {"seed", 1},
          {"model", model},
          {"hardware", {{"gpu", gpu}, {"gpus_per_node", gpus}, {"intra_node", "nvlink4-nvswitch"}}},
          {"precision", {{"weights", dtype}, {"activations", dtype}, {"kv_cache", "bf16"}}},
          {"serving",
           {{"mode", "latency"},
            {"parallelism", {{"tp", tp}, {"pp", 1}}},
            {"workload", {{"prompt_tokens", 512}, {"output_tokens", 8}, {"batch_size", batch}}}}}};
}

StepOperators decode_step(const ModelArch& m, int batch) {
  BatchShape b;
  b.seqs.assign(static_cast<size_t>(batch), SeqChunk{1, 512});
  return build_forward_step(m, Precision{}, ParallelLayout{}, b, StepOptions{});
}

double kernels(const StepOperators& s) {
  double n = 0;
  for (const Operator& op : s.ops) n += op.count;
  return n;
}

}  // namespace

TEST_CASE("expected experts hit under top-k routing") {
  MoeRouting uniform;
  // One token hits exactly top_k experts; many tokens hit them all.
  CHECK(expected_moe_load(8, 2, 1, uniform).experts_hit == doctest::Approx(2.0));
  CHECK(expected_moe_load(8, 2, 4096, uniform).experts_hit == doctest::Approx(8.0));
  // E·(1 − (1 − k/E)^T) at T = 4: 8·(1 − 0.75^4).
  CHECK(expected_moe_load(8, 2, 4, uniform).experts_hit == doctest::Approx(8.0 * (1.0 - std::pow(0.75, 4))));
  // Every routed pair is computed somewhere: T·k assignments, at least one token per hit expert.
  for (int64_t t : {1, 3, 17, 256}) {
    const MoeLoad l = expected_moe_load(256, 8, t, uniform);
    CHECK(l.assignments == doctest::Approx(8.0 * t));
    CHECK(l.tokens_per_expert >= 1.0);
  }
  double last = 0;
  for (int64_t t = 1; t <= 1024; t *= 2) {
    const double hit = expected_moe_load(128, 8, t, uniform).experts_hit;
    CHECK(hit >= last);
    last = hit;
  }
  // Expert parallelism: a GPU holding E/8 experts sees an eighth of the load,
  // times the busiest of the 8 GPUs' sampling excess (test_moe_imbalance.cpp).
  MoeRouting ep8;
  ep8.experts_per_gpu = 32;
  const MoeLoad all = expected_moe_load(256, 8, 64, uniform), part = expected_moe_load(256, 8, 64, ep8);
  const double busiest = busiest_rank_sampling_factor(64.0 * 8, 8);
  CHECK(busiest > 1.0);
  CHECK(part.assignments == doctest::Approx(all.assignments / 8 * busiest));
  CHECK(part.experts_hit <= all.experts_hit / 8 * busiest);
  // Imbalance makes the busiest GPU's experts hotter: more hits and more rows.
  MoeRouting hot = ep8;
  hot.load_imbalance = 1.5;
  CHECK(expected_moe_load(256, 8, 64, hot).assignments == doctest::Approx(1.5 * part.assignments));
  CHECK(expected_moe_load(256, 8, 64, hot).experts_hit > part.experts_hit);
}

TEST_CASE("the kernel count of an MoE layer does not grow with the number of experts") {
  ModelArch m = read_model(json("mixtral-8x7b"), "/model");
  std::set<double> counts;
  std::set<size_t> op_counts;
  for (int experts : {8, 16, 64, 256}) {
    m.moe.num_experts = experts;
    for (int batch : {1, 8, 256}) {
      const StepOperators s = decode_step(m, batch);
      counts.insert(kernels(s));
      op_counts.insert(s.ops.size());
      for (const Operator& op : s.ops)
        if (op.name.rfind("moe_expert_", 0) == 0 && op.family == OpFamily::Gemm) {
          CAPTURE(experts);
          CAPTURE(batch);
          CHECK(op.count == doctest::Approx(m.num_moe_layers()));  // one grouped launch per layer
          CHECK(op.groups <= experts);
        }
    }
  }
  CHECK(counts.size() == 1);
  CHECK(op_counts.size() == 1);
}

TEST_CASE("an MoE decode step reads only the experts the batch hits") {
  const ModelArch m = read_model(json("mixtral-8x7b"), "/model");
  double last = 0;
  for (int batch : {1, 2, 4, 8, 16, 64}) {
    const double read = weight_bytes_read(decode_step(m, batch));
    CHECK(read > last);  // more experts hit
    last = read;
  }
  // Batch 1: 2 of 8 experts per layer.
  const double expert = 3.0 * 4096 * 14336 * 2;  // bytes of one bf16 expert
  const double b1 = weight_bytes_read(decode_step(m, 1)), b64 = weight_bytes_read(decode_step(m, 64));
  CHECK(b64 - b1 == doctest::Approx(32 * 6 * expert).epsilon(0.01));
}

TEST_CASE("MoE decode is bounded below by the weights read and monotone in batch") {
  struct Case {
    const char* model;
    const char* gpu;
    int tp;
    const char* dtype;
  };
  for (const Case& c : {Case{"mixtral-8x7b", "h100-sxm", 1, "fp8"}, Case{"mixtral-8x7b", "h100-sxm", 2, "bf16"},
                        Case{"deepseek-v3", "h200", 8, "fp8"}}) {
    double last_tpot = 0;
    for (int batch : {1, 2, 8, 32, 128}) {
      const std::string model = c.model;
      CAPTURE(model);
      CAPTURE(batch);
      const json r = test::run(latency_scenario(c.model, c.gpu, c.tp, c.tp, batch, c.dtype));
      INFO(r.dump().substr(0, 400));
      REQUIRE(r["ok"].get<bool>());
      const double tpot = r["result"]["metrics"]["tpot_ms"].get<double>();
      const double floor = r["result"]["floors"]["decode_weight_read_ms"].get<double>();
      CHECK(floor > 0);
      CHECK(tpot >= floor);  // no step reads its weights faster than HBM allows
      CHECK(tpot >= last_tpot);
      last_tpot = tpot;
    }
  }
}
