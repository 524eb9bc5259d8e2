// The expert-parallel all-to-all as engines pick it (issue 38, "What to
// build" 1): with `all_to_all: "auto"` a decode-only step runs DeepEP's
// low-latency kernels and a step with a prompt its normal ones, and the same
// dispatch costs more over RDMA between nodes than over NVLink inside one.
#include <doctest/doctest.h>

#include <cmath>

#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "model/operators.hpp"
#include "perf/cost_setup.hpp"
#include "serve/moe_step.hpp"

using namespace sightline;

namespace {

struct AllToAllOps {
  const Operator* counts = nullptr;
  const Operator* dispatch = nullptr;
  const Operator* combine = nullptr;
};

AllToAllOps find_all_to_all(const StepOperators& ops) {
  AllToAllOps a;
  for (const Operator& o : ops.ops) {
    if (o.name == "moe_dispatch_counts") a.counts = &o;
    if (o.name == "moe_dispatch") a.dispatch = &o;
    if (o.name == "moe_combine") a.combine = &o;
  }
  return a;
}

StepOperators all_to_all_step(const ModelArch& m, int ep, const BatchShape& shape, Dtype activations) {
  serve::MoeServingSpec spec;
  spec.expert_parallel = ep;
  spec.attention_data_parallel = ep;
  // Even routing (no hot experts): these checks are about the modes' bytes.
  spec.load_imbalance_given = true;
  const MoeRouting routing = serve::serving_moe_routing(spec, m, ParallelLayout{}, 0);
  StepOperators ops;
  serve::append_moe_all_to_all(spec, m, activations, shape, routing, ops);
  return ops;
}

}  // namespace

TEST_CASE("EP all-to-all: decode-only steps run the low-latency kernels, a step with a prompt the normal ones") {
  const ModelArch m = read_model(json("deepseek-v3"), "/model");
  const double h = static_cast<double>(m.hidden_size);
  BatchShape decode;
  decode.seqs.assign(128, SeqChunk{1, 2048});
  BatchShape mixed = decode;
  mixed.seqs.push_back(SeqChunk{1024, 0});  // one prompt admitted

  const StepOperators d = all_to_all_step(m, 8, decode, Dtype::BF16);
  const AllToAllOps ld = find_all_to_all(d);
  REQUIRE(ld.dispatch != nullptr);
  REQUIRE(ld.combine != nullptr);
  CHECK(ld.counts == nullptr);  // low latency: no counts exchange
  const StepOperators p = all_to_all_step(m, 8, mixed, Dtype::BF16);
  const AllToAllOps lp = find_all_to_all(p);
  REQUIRE(lp.dispatch != nullptr);
  CHECK(lp.counts != nullptr);  // normal: the GPUs first exchange counts

  // Per token: low latency sends top_k fp8 copies (one fp32 scale per 128
  // channels); normal mode one bf16 copy per distinct destination GPU, fewer
  // than top_k, and its combine returns the same copies.
  const double tokens_d = 128, tokens_p = 128 + 1024;
  const double k = m.moe.top_k;
  const double ll_row = h * (1.0 + 4.0 / 128.0);
  const double hot_d = ld.dispatch->message_bytes / (tokens_d * k * ll_row);
  CHECK(hot_d >= 1.0);  // the busiest GPU's share, at least the mean
  CHECK(hot_d < 1.2);
  const double copies = 8.0 * (1.0 - std::pow(1.0 - 1.0 / 8.0, k));
  CHECK(copies < k);
  const double hot_p = lp.dispatch->message_bytes / (tokens_p * copies * h * 2.0);
  CHECK(hot_p >= 1.0);
  CHECK(hot_p < 1.1);
  CHECK(lp.combine->message_bytes == doctest::Approx(lp.dispatch->message_bytes));
  // Low latency's combine returns bf16 rows: about twice its fp8 dispatch.
  CHECK(ld.combine->message_bytes / ld.dispatch->message_bytes == doctest::Approx(2.0 / (1.0 + 4.0 / 128.0)));
}

TEST_CASE("EP all-to-all: the same dispatch costs more over RDMA between nodes than over NVLink in one") {
  const ModelArch m = read_model(json("deepseek-v3"), "/model");
  const GpuSpec g = read_gpu(json("h200"), "/gpu");
  const InterconnectSpec nvlink = read_interconnect(json(g.default_intra_node), "/i");
  const InterconnectSpec ib = read_interconnect(json("ib-ndr"), "/i");
  std::string provenance;
  const auto model = make_kernel_cost_model("auto", g, &provenance);
  BatchShape decode;
  decode.seqs.assign(128, SeqChunk{1, 2048});
  // 128 tokens on each of 8 GPUs in one node, then on each of 16 over two.
  const AllToAllOps in_node = find_all_to_all(all_to_all_step(m, 8, decode, Dtype::BF16));
  const StepOperators wide_ops = all_to_all_step(m, 16, decode, Dtype::BF16);
  const AllToAllOps two_nodes = find_all_to_all(wide_ops);
  REQUIRE(in_node.dispatch != nullptr);
  REQUIRE(two_nodes.dispatch != nullptr);
  CostContext one;
  one.gpu = &g;
  one.tp_link = &nvlink;
  CostContext two = one;
  two.inter_link = &ib;
  two.gpus_per_node = 8;
  const double t_one = model->cost(*in_node.dispatch, one).time_s;
  const double t_two = model->cost(*two_nodes.dispatch, two).time_s;
  // Each GPU sends about the same bytes (its tokens' copies), but half of
  // them now leave the node at the NIC's 50 GB/s instead of NVLink's 450.
  CHECK(two_nodes.dispatch->message_bytes == doctest::Approx(in_node.dispatch->message_bytes).epsilon(0.1));
  CHECK(t_two > 2.0 * t_one);
}
