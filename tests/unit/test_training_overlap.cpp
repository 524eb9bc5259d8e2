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
  // Two collectives cannot both hide behind one pass's total GEMM time: each has its own.
  const std::map<std::string, double> gemms = {{"attn_post_proj", 50e-6}, {"mlp_down_proj", 1000e-6}};
  const std::vector<NamedTime> comms = {{"attn_reduce_scatter", 200e-6}, {"mlp_reduce_scatter", 200e-6}};
  CHECK(tp_exposed_with_overlap_s(comms, gemms, share) == doctest::Approx(150e-6 + share * 200e-6));
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
  // GEMMs share SMs with the collectives: at least share × the TP time is paid.
  CHECK(hidden >= tp_overlap_sm_share(132) * total * 0.999);
  CHECK(ov["metrics"]["step_time_ms"].get<double>() < base["metrics"]["step_time_ms"].get<double>());
  // Megatron's comm overlap needs sequence parallelism: all-reduces do not hide.
  s["training"]["parallelism"]["sequence_parallel"] = false;
  const json no_sp = training_result(s);
  s["training"].erase("overlap");
  const json no_sp_base = training_result(s);
  CHECK(no_sp["step_breakdown_ms"]["exposed_comm"]["tp"].get<double>() ==
        doctest::Approx(no_sp_base["step_breakdown_ms"]["exposed_comm"]["tp"].get<double>()));
}
