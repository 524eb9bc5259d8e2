// Overlap that really happens (issue 11, point 5): tensor-parallel
// communication hides only behind its adjacent GEMM and slows it down.
#include <doctest/doctest.h>

#include "test_helpers.hpp"
#include "train/tp_overlap.hpp"

using namespace sightline;
using namespace sightline::test;

namespace {

json training_result(const json& scenario) {
  const json e = run(scenario);
  REQUIRE_MESSAGE(e["ok"] == true, e.dump());
  return e["result"];
}

}  // namespace

TEST_CASE("an overlapped TP collective hides behind its own GEMM, which slows while sharing SMs") {
  const double share = tp_overlap_sm_share(132);  // H100: 16 of 132 SMs
  CHECK(share == doctest::Approx(16.0 / 132.0));
  // Short collective behind a long GEMM: only the GEMM slowdown shows.
  CHECK(overlapped_pair_extra_s(10e-6, 100e-6, share) == doctest::Approx(share * 10e-6));
  // Long collective: the GEMM is hidden, the rest of the collective is exposed.
  CHECK(overlapped_pair_extra_s(100e-6, 10e-6, share) == doctest::Approx(90e-6));
  CHECK(tp_overlap_partner("attn_all_gather") == "mlp_up_proj");
  CHECK(tp_overlap_partner("mlp_reduce_scatter_bwd") == "attn_pre_proj_wgrad");
  CHECK(tp_overlap_partner("emb_reduce_scatter").empty());
  // Two collectives cannot both hide behind one pass's total GEMM time: each has its own
  // (bulk overlaps: the weight-gradient gathers behind the data-gradient GEMMs).
  const std::map<std::string, double> gemms = {{"mlp_up_proj_dgrad", 50e-6}, {"attn_pre_proj_dgrad", 1000e-6}};
  const std::vector<NamedTime> comms = {{"attn_all_gather_wgrad", 200e-6}, {"mlp_all_gather_wgrad", 200e-6}};
  CHECK(tp_overlap_method("attn_all_gather_wgrad") == TpOverlapMethod::Bulk);
  CHECK(tp_exposed_with_overlap_s(comms, gemms, 8, 132) == doctest::Approx(150e-6 + share * 200e-6));
}

TEST_CASE("TP overlap by Transformer Engine's method: ring exchange in tp chunks, pipelined reduce-scatter in 4") {
  CHECK(tp_overlap_method("attn_all_gather") == TpOverlapMethod::RingExchange);
  CHECK(tp_overlap_method("mlp_all_gather_bwd") == TpOverlapMethod::RingExchange);
  CHECK(tp_overlap_method("mlp_reduce_scatter") == TpOverlapMethod::Pipeline);
  CHECK(tp_overlap_method("emb_reduce_scatter") == TpOverlapMethod::None);
  // Ring exchange, tp 4: GEMM chunks of g/4, gather steps of c/3 on the copy engine.
  // A gather faster than the GEMM hides entirely (chunk 0 runs on the local shard).
  CHECK(ring_exchange_extra_s(30e-6, 400e-6, 4) == doctest::Approx(0.0));
  // A slow gather: chunk i waits for step i; the last chunk runs after the last step.
  CHECK(ring_exchange_extra_s(300e-6, 40e-6, 4) == doctest::Approx(300e-6 + 10e-6 - 40e-6));
  // Pipelined reduce-scatter: the GEMM on 116 of 132 SMs throughout, the last quarter
  // of the reduce-scatter after it, never hidden.
  const double share = tp_overlap_sm_share(132);
  const double g = 400e-6, c = 40e-6;
  CHECK(pipelined_rs_extra_s(c, g, 132) == doctest::Approx(g / (1 - share) - g + c / 4));
  // The chunks priced at their own (smaller) shape: a chunk slower than an even
  // share costs its excess in every chunk, even when the gather hides.
  CHECK(ring_exchange_extra_s(30e-6, 400e-6, 4, 120e-6) == doctest::Approx(4 * 120e-6 - 400e-6));
  CHECK(pipelined_rs_extra_s(c, g, 132, 120e-6) == doctest::Approx(4 * 120e-6 / (1 - share) - g + c / 4));
  CHECK(tp_overlap_splits("attn_all_gather", 8) == 8);
  CHECK(tp_overlap_splits("attn_reduce_scatter", 8) == 4);
  CHECK(tp_overlap_splits("attn_all_gather_wgrad", 8) == 1);
  // A reduce-scatter longer than the GEMM: all of it after the first chunk.
  CHECK(pipelined_rs_extra_s(4000e-6, g, 132) == doctest::Approx(g / (1 - share) / 4 + 4000e-6 - g));
}

TEST_CASE("T2.2 with TP comm overlap: part of the TP time stays exposed; without SP nothing hides") {
  json s = preset("scenarios", "T2.2");
  const json base = training_result(s);
  const double none = base["step_breakdown_ms"]["exposed_comm"]["tp"].get<double>();
  s["training"]["overlap"] = {{"tp", true}};
  const json ov = training_result(s);
  const double hidden = ov["step_breakdown_ms"]["exposed_comm"]["tp"].get<double>();
  const double total = ov["communication"]["tp"]["total_ms"].get<double>();
  CHECK(hidden < none);
  // Pipelined reduce-scatters: their last quarters are never hidden, and the rest is.
  CHECK(hidden > 0.0);
  CHECK(hidden < total);
  CHECK(ov["metrics"]["step_time_ms"].get<double>() < base["metrics"]["step_time_ms"].get<double>());
  // Megatron's comm overlap needs sequence parallelism: all-reduces do not hide.
  s["training"]["parallelism"]["sequence_parallel"] = false;
  const json no_sp = training_result(s);
  s["training"].erase("overlap");
  const json no_sp_base = training_result(s);
  CHECK(no_sp["step_breakdown_ms"]["exposed_comm"]["tp"].get<double>() ==
        doctest::Approx(no_sp_base["step_breakdown_ms"]["exposed_comm"]["tp"].get<double>()));
}

namespace {

// Llama 3.1 405B (126 layers) on 16 pipeline stages of 8 H100s, as Meta trained it.
json llama405b_pp16() {
  return {{"schema_version", 1},
          {"model", "llama-3.1-405b"},
          {"hardware",
           {{"gpu", "h100-sxm"}, {"gpus_per_node", 8}, {"nodes", 16}, {"intra_node", "nvlink4-nvswitch"},
            {"inter_node", "ib-ndr"}}},
          {"precision", {{"weights", "bf16"}, {"activations", "bf16"}}},
          {"training",
           {{"parallelism", {{"tp", 8}, {"pp", 16}, {"sequence_parallel", true}}},
            {"batch", {{"seq_len", 8192}, {"micro_batch_size", 1}, {"gradient_accumulation", 32}}},
            {"recompute", "full"}}}};
}

json stages(std::initializer_list<std::pair<int, int>> runs) {  // (count, layers) runs
  json a = json::array();
  for (auto [count, layers] : runs)
    for (int i = 0; i < count; ++i) a.push_back(layers);
  return a;
}

}  // namespace

TEST_CASE("uneven pipeline: explicit stage_layers run 126 layers on 16 stages; the slowest stage sets the step") {
  json s = llama405b_pp16();
  const json even_error = run(s);
  REQUIRE(even_error["ok"] == false);  // 16 does not divide 126
  CHECK(even_error["error"]["path"] == "/training/parallelism/pp");
  s["training"]["parallelism"]["stage_layers"] = stages({{1, 7}, {14, 8}, {1, 7}});
  const json meta = training_result(s);
  CHECK(meta["pipeline"]["layers_per_chunk"][0] == 7);
  CHECK(meta["pipeline"]["layers_per_chunk"][15] == 7);
  // Move a layer from the last stage onto the first: the first stage is now the slowest, and the step grows.
  s["training"]["parallelism"]["stage_layers"] = stages({{1, 9}, {14, 8}, {1, 5}});
  const json lopsided = training_result(s);
  CHECK(lopsided["metrics"]["step_time_ms"].get<double>() > meta["metrics"]["step_time_ms"].get<double>() * 1.02);
  const json& ranks = lopsided["pipeline"]["per_rank"];
  CHECK(ranks[0]["busy_ms"].get<double>() > ranks[15]["busy_ms"].get<double>());
}

TEST_CASE("uneven pipeline: an explicit even layout gives the same result as the default split") {
  json s = preset("scenarios", "T2.3");  // interleaved: 16 model chunks on 8 ranks
  s["training"].erase("compare");          // its variant has another chunk count
  const json base = training_result(s);
  const json& chunks = base["pipeline"]["layers_per_chunk"];
  REQUIRE(chunks.size() >= 2);
  s["training"]["parallelism"]["stage_layers"] = chunks;
  const json explicit_even = training_result(s);
  CHECK(explicit_even["metrics"]["step_time_ms"].get<double>() == base["metrics"]["step_time_ms"].get<double>());
}

TEST_CASE("uneven pipeline: bad stage_layers get located errors") {
  struct Case {
    json layers;
    const char* code;
    const char* path;
  };
  const std::vector<Case> cases = {
      {stages({{15, 8}}), "constraint_violation", "/training/parallelism/stage_layers"},           // 15 entries
      {stages({{16, 8}}), "constraint_violation", "/training/parallelism/stage_layers"},           // sums to 128
      {json::array({7, 8, 8, -1}), "out_of_range", "/training/parallelism/stage_layers/3"},
      {json::array({7, "8"}), "type_error", "/training/parallelism/stage_layers/1"},
      {json::array(), "type_error", "/training/parallelism/stage_layers"},
  };
  for (const Case& c : cases) {
    json s = llama405b_pp16();
    s["training"]["parallelism"]["stage_layers"] = c.layers;
    const json e = run(s);
    CAPTURE(c.layers.dump());
    REQUIRE(e["ok"] == false);
    CHECK(e["error"]["code"] == c.code);
    CHECK(e["error"]["path"] == c.path);
  }
}
