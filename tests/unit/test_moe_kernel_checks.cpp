// The kernels of a large-batch DeepSeek-V3/R1 step (issue 38, points 1 and 2)
// against their authors' kernel-level figures on H800 SXM5
// (presets/calibrations/data/published_moe_kernels.csv, sources there):
// DeepGEMM's FP8 block-scaled GEMMs (dense, and grouped by tokens per expert),
// DeepEP's dispatch / combine (normal intranode, low-latency over RDMA) and
// FlashMLA's decode ceiling. Each row is priced as the engine prices it: the
// H800's values with the h100-sxm calibration (the same die, clocks and HBM),
// the all-to-alls through serve::append_moe_all_to_all on the DeepSeek-V3
// model. Nothing is fitted to these rows; the checks say how far the engine
// may be from them, and the printed tables are the figures the docs quote.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "model/operators.hpp"
#include "perf/cost_setup.hpp"
#include "serve/moe_step.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace {

struct MoeKernelRow {
  std::string kind, layout, gpu;
  double groups = 0, m = 0, n = 0, k = 0, tokens = 0, ep = 0, time_us = 0, tflops = 0, GBps = 0;
};

double moe_kernel_cell(const std::string& s) { return s.empty() ? 0.0 : std::stod(s); }

std::vector<MoeKernelRow> moe_kernel_rows() {
  std::istringstream in(test::read_source_file("presets/calibrations/data/published_moe_kernels.csv"));
  std::vector<MoeKernelRow> rows;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {  // kind,layout_or_mode,groups,m,n,k,tokens,ep,time_us,tflops,GBps,gpu,source
      header = false;
      continue;
    }
    std::vector<std::string> c;
    std::string cell;
    std::istringstream row(line);
    while (std::getline(row, cell, ',')) c.push_back(cell);
    REQUIRE(c.size() == 13);
    rows.push_back({c[0], c[1], c[11], moe_kernel_cell(c[2]), moe_kernel_cell(c[3]), moe_kernel_cell(c[4]), moe_kernel_cell(c[5]),
                    moe_kernel_cell(c[6]), moe_kernel_cell(c[7]), moe_kernel_cell(c[8]), moe_kernel_cell(c[9]), moe_kernel_cell(c[10])});
  }
  return rows;
}

// The H800 as the engine prices it when its kernels are the H100 SXM's (same silicon).
GpuSpec h800_on_h100_calibration() {
  GpuSpec g = read_gpu(json("h800"), "/gpu");
  g.calibration = "h100-sxm";
  return g;
}

// One DeepGEMM problem as the engine's operator: `groups` problems of m x n x k,
// FP8 inputs and weights, BF16 output (the bytes the source counts); with
// `block_scaled`, as the engine prices a block-scaled FP8 GEMM (its output
// written after the main loop, model/operators.hpp), else as a per-tensor one.
Operator deepgemm_operator(const MoeKernelRow& r, bool block_scaled = true) {
  const auto m = static_cast<int64_t>(r.m), n = static_cast<int64_t>(r.n), k = static_cast<int64_t>(r.k);
  Operator op = make_gemm_operator("deepgemm", 1, m, n, k, 1.0, 1.0, Dtype::FP8);
  op.groups = r.groups;
  op.flops = 2.0 * r.groups * r.m * r.n * r.k;
  op.bytes = r.groups * (r.m * r.k + r.k * r.n + 2.0 * r.m * r.n);
  op.weight_bytes = r.groups * r.k * r.n;
  if (block_scaled) mark_block_scaled_fp8_output(op, r.groups * r.m * r.n, 2.0);
  return op;
}

double deepgemm_published_time_s(const MoeKernelRow& r) { return 2.0 * r.groups * r.m * r.n * r.k / (r.tflops * 1e12); }

// engine / published time of every DeepGEMM row.
struct DeepGemmCheck {
  MoeKernelRow row;
  double engine_us = 0, published_us = 0;
  double overlapped_us = 0;  // the same GEMM priced with its output overlapped (per-tensor FP8)
  double ratio() const { return engine_us / published_us; }
};

std::vector<DeepGemmCheck> deepgemm_checks() {
  const GpuSpec g = h800_on_h100_calibration();
  std::string provenance;
  const auto model = make_kernel_cost_model("target-measured", g, &provenance);
  CostContext ctx;
  ctx.gpu = &g;
  std::vector<DeepGemmCheck> out;
  for (const MoeKernelRow& r : moe_kernel_rows()) {
    if (r.kind != "gemm") continue;
    out.push_back({r, model->cost(deepgemm_operator(r), ctx).time_s * 1e6, deepgemm_published_time_s(r) * 1e6,
                   model->cost(deepgemm_operator(r, false), ctx).time_s * 1e6});
  }
  return out;
}

// The decode-time shapes: at most 256 tokens per expert (or per dense GEMM),
// where the weights stream from HBM or the GEMM sits near the ridge.
bool deepgemm_decode_shape(const MoeKernelRow& r) { return r.m <= 256; }

}  // namespace

TEST_CASE("moe kernels: the published rows are transcribed whole and agree with themselves") {
  const std::vector<MoeKernelRow> rows = moe_kernel_rows();
  int gemms = 0, a2a = 0;
  for (const MoeKernelRow& r : rows) {
    if (r.kind == "gemm") {
      ++gemms;
      // The table's two rates describe one time: FLOPs / TFLOPS and bytes / GB/s agree.
      const double bytes = r.groups * (r.m * r.k + r.k * r.n + 2.0 * r.m * r.n);
      CHECK(bytes / (r.GBps * 1e9) == doctest::Approx(deepgemm_published_time_s(r)).epsilon(0.01));
    } else {
      ++a2a;
      CHECK(r.kind == "all_to_all");
    }
  }
  CHECK(gemms == 28);
  CHECK(a2a == 23);  // DeepEP's 14, MORI's 9 on MI300X
}

TEST_CASE("moe kernels: FP8 block-scaled GEMMs at decode shapes are never priced >15% faster than DeepGEMM") {
  // Memory-bound and near-ridge shapes (tokens per expert <= 256): the engine
  // is at most 14% faster (the masked grouped rows at 256 tokens per expert,
  // 0.86-0.93; 0.84-0.87 with the output overlapped) and at most 1.7x slower (its fitted per-kernel intercept of
  // graph-replayed kernels, ~5 us, weighs on the 6-15 us kernels of the table).
  std::ostringstream table;
  table << "DeepGEMM on H800 (published) against the engine (h100-sxm calibration on the H800's values)\n"
        << "layout      groups     m      n      k   published_us  engine_us  engine/published  "
           "(output overlapped: engine/published)\n";
  double worst_fast = 1e9;
  for (const DeepGemmCheck& c : deepgemm_checks()) {
    table << c.row.layout << "\t" << c.row.groups << "\t" << c.row.m << "\t" << c.row.n << "\t" << c.row.k << "\t"
          << c.published_us << "\t" << c.engine_us << "\t" << c.ratio() << "\t(" << c.overlapped_us / c.published_us
          << ")\n";
    if (!deepgemm_decode_shape(c.row)) continue;
    CAPTURE(c.row.layout);
    CAPTURE(c.row.m);
    CAPTURE(c.row.n);
    CAPTURE(c.row.k);
    CHECK(c.ratio() >= 0.85);
    CHECK(c.ratio() <= 1.75);
    worst_fast = std::min(worst_fast, c.ratio());
  }
  MESSAGE(table.str());
  MESSAGE("decode shapes: the engine is at most " << (1.0 - worst_fast) * 100 << "% faster than DeepGEMM");
}

TEST_CASE("moe kernels: block-scaled FP8 GEMMs write their output after the main loop, as DeepGEMM's table shows") {
  // At 512+ tokens per expert (prefill, the ridge and past it) the engine
  // prices every DeepGEMM row within 14% once the BF16 output tile's write is
  // serial: the short-K, wide-output rows (K = 512-2048) were 13-51% fast with
  // the output overlapped like a cuBLAS GEMM's, and are 0.86-1.01 now. No
  // constant is fitted: the write streams at the calibration's own GEMM
  // memory efficiency.
  int short_k = 0;
  for (const DeepGemmCheck& c : deepgemm_checks()) {
    if (c.row.m < 512) continue;
    CAPTURE(c.row.layout);
    CAPTURE(c.row.m);
    CAPTURE(c.row.n);
    CAPTURE(c.row.k);
    CHECK(c.ratio() == doctest::Approx(1.0).epsilon(0.14));
    CHECK(c.engine_us >= c.overlapped_us);  // the serial write only ever adds
    if (c.row.k <= 2048) {
      ++short_k;
      CHECK(c.overlapped_us / c.published_us < 0.88);  // what overlapping it had missed
    }
  }
  CHECK(short_k == 7);
}

TEST_CASE("moe kernels: a block-scaled FP8 step prices its GEMMs' BF16 output as a serial write") {
  const ModelArch m = read_model(json("deepseek-v3"), "/model");
  Precision p;
  p.weights = Dtype::FP8;
  p.activations = Dtype::FP8;
  ParallelLayout layout;
  BatchShape b;
  b.seqs.push_back(SeqChunk{1024, 0});
  const StepOperators tensor = build_forward_step(m, p, layout, b, StepOptions{});
  p.fp8_block_scaled = true;
  const StepOperators block = build_forward_step(m, p, layout, b, StepOptions{});
  REQUIRE(tensor.ops.size() == block.ops.size());
  int marked = 0;
  for (size_t i = 0; i < block.ops.size(); ++i) {
    const Operator& t = tensor.ops[i];
    const Operator& o = block.ops[i];
    CAPTURE(o.name);
    if (o.family == OpFamily::Gemm && o.compute_dtype == Dtype::FP8) {
      ++marked;
      CHECK(o.serial_bytes > 0);
      // Output elements: m x n (grouped: the routed rows x n), now at 2 bytes, 1 before.
      CHECK(o.bytes - t.bytes == doctest::Approx(o.serial_bytes / 2.0));
    } else {
      CHECK(o.serial_bytes == 0);  // the router and lm_head stay in BF16, attention is no GEMM
      CHECK(o.bytes == t.bytes);
    }
  }
  CHECK(marked >= 8);  // q_a, q_b, kv_a, o, dense MLP, shared and routed experts
}

TEST_CASE("moe kernels: DeepEP dispatch and combine are priced within 15% of DeepEP's H800 tables, MORI's on MI300X from 512 tokens") {
  const ModelArch m = read_model(json("deepseek-v3"), "/model");
  const InterconnectSpec ib = read_interconnect(json("ib-ndr"), "/hardware/inter_node");
  std::ostringstream table;
  table << "DeepEP on H800 (V1) and B200 (V2), MORI on MI300X, published, against the engine\n"
        << "mode                    gpu  ep  tokens/rank  published_us  engine_us  engine/published\n";
  for (const MoeKernelRow& r : moe_kernel_rows()) {
    if (r.kind != "all_to_all") continue;
    // Collectives are priced from the links whatever the kernel calibration.
    const GpuSpec g = r.gpu == "h800" ? h800_on_h100_calibration() : read_gpu(json(r.gpu), "/gpu");
    const InterconnectSpec nvlink = read_interconnect(json(g.default_intra_node), "/hardware/intra_node");
    std::string provenance;
    const auto model = make_kernel_cost_model("auto", g, &provenance);
    const bool low_latency = r.layout.rfind("low_latency", 0) == 0;
    const bool combine = r.layout.find("combine") != std::string::npos;
    serve::MoeServingSpec spec;
    spec.expert_parallel = static_cast<int>(r.ep);
    // Each rank dispatches its own tokens (wide EP: one attention rank per GPU).
    spec.attention_data_parallel = static_cast<int>(r.ep);
    spec.all_to_all = low_latency ? serve::AllToAllMode::LowLatency : serve::AllToAllMode::HighThroughput;
    // DeepEP's tests route with random scores (uniform over experts): no hot experts.
    spec.load_imbalance_given = true;
    ParallelLayout layout;
    const MoeRouting routing = serve::serving_moe_routing(spec, m, layout, 0);
    BatchShape shape;
    // Low latency: decode tokens; normal: one prompt chunk of `tokens`.
    if (low_latency) shape.seqs.assign(static_cast<size_t>(r.tokens), SeqChunk{1, 1024});
    else shape.seqs.push_back(SeqChunk{static_cast<int64_t>(r.tokens), 0});
    StepOperators ops;
    serve::append_moe_all_to_all(spec, m, Dtype::FP8, shape, routing, ops);
    const Operator* op = nullptr;
    for (const Operator& o : ops.ops)
      if (o.name == (combine ? "moe_combine" : "moe_dispatch")) op = &o;
    REQUIRE(op != nullptr);
    CostContext ctx;
    ctx.gpu = &g;
    ctx.tp_link = &nvlink;
    if (r.ep > 8) {
      ctx.inter_link = &ib;
      ctx.gpus_per_node = 8;
    }
    const double engine_s = model->cost(*op, ctx).time_s;
    // Normal mode publishes a bandwidth: the time of the same bytes at it.
    const double published_s = r.time_us > 0 ? r.time_us * 1e-6 : op->message_bytes / (r.GBps * 1e9);
    table << r.layout << "\t" << r.gpu << "\t" << r.ep << "\t" << r.tokens << "\t" << published_s * 1e6 << "\t" << engine_s * 1e6 << "\t"
          << engine_s / published_s << "\n";
    CAPTURE(r.layout);
    CAPTURE(r.gpu);
    CAPTURE(r.ep);
    CAPTURE(r.tokens);
    // MORI on the MI300X's mesh below 512 tokens a rank: the engine's
    // all-to-all starts at the link's RCCL latency (its p2p parameters come
    // from RCCL's all-reduce fit), which MORI's kernels undercut by about
    // 15 us; never faster than MORI there, within 1.6x (the gap is said in
    // docs/acceptance-38.md, "RCCL collectives on xGMI").
    if (r.gpu == "mi300x" && r.tokens < 512) {
      CHECK(engine_s / published_s >= 1.0);
      CHECK(engine_s / published_s <= 1.6);
    } else {
      CHECK(engine_s / published_s == doctest::Approx(1.0).epsilon(0.15));
    }
  }
  MESSAGE(table.str());
}

TEST_CASE("moe kernels: MLA decode attention stays under FlashMLA's H800 ceiling") {
  // FlashMLA publishes maxima (660 TFLOP/s compute-bound, 3000 GB/s
  // memory-bound on H800 SXM5): a ceiling, never a data point. DeepSeek-V3's
  // decode attention at TP1 (128 heads over one latent head) is priced below
  // both at every batch and KV length of a large-batch decode step.
  const ModelArch m = read_model(json("deepseek-v3"), "/model");
  const GpuSpec g = h800_on_h100_calibration();
  std::string provenance;
  const auto model = make_kernel_cost_model("target-measured", g, &provenance);
  CostContext ctx;
  ctx.gpu = &g;
  Precision p;
  p.weights = Dtype::FP8;
  p.activations = Dtype::FP8;
  ParallelLayout layout;
  for (int64_t batch : {32, 128, 512})
    for (int64_t kv : {1024, 4096, 16384}) {
      BatchShape b;
      b.seqs.assign(static_cast<size_t>(batch), SeqChunk{1, kv});
      const StepOperators step = build_forward_step(m, p, layout, b, StepOptions{});
      for (const Operator& op : step.ops) {
        if (op.family != OpFamily::AttentionDecode) continue;
        const double t = model->cost(op, ctx).time_s;
        CAPTURE(batch);
        CAPTURE(kv);
        CHECK(op.flops / t <= 660e12);
        CHECK(op.bytes / t <= 3000e9);
      }
    }
}

TEST_CASE("moe kernels: precision.fp8_scaling is read, written back, and refused without FP8") {
  json s = test::preset("scenarios", "I1.1");
  s["hardware"]["gpu"] = "h100-sxm";
  s["precision"] = {{"weights", "fp8"}, {"activations", "fp8"}, {"fp8_scaling", "block"}};
  json v = test::validate(s);
  REQUIRE(v["ok"] == true);
  CHECK(v["result"]["precision"]["fp8_scaling"] == "block");
  s["precision"]["fp8_scaling"] = "tensor";
  v = test::validate(s);
  REQUIRE(v["ok"] == true);
  CHECK_FALSE(v["result"]["precision"].contains("fp8_scaling"));  // the default is not written
  s["precision"] = {{"weights", "bf16"}, {"activations", "bf16"}, {"fp8_scaling", "block"}};
  v = test::validate(s);
  REQUIRE(v["ok"] == false);
  CHECK(v["error"]["code"] == "constraint_violation");
  CHECK(v["error"]["path"] == "/precision/fp8_scaling");
  s["precision"] = {{"weights", "fp8"}, {"activations", "fp8"}, {"fp8_scaling", "channel"}};
  v = test::validate(s);
  REQUIRE(v["ok"] == false);
  CHECK(v["error"]["path"] == "/precision/fp8_scaling");
}
