// Small collectives: per-call latency and bandwidth efficiency by group size
// (issue 11, point 4). The shipped NVLink calibrations are fitted with NCCL's
// latency structure (a base per call plus a per-step latency) and an
// efficiency per measured group size; these tests fail if a fit falls back to
// one efficiency for every group or loses the per-call latency.
#include <doctest/doctest.h>

#include "comm/collectives.hpp"
#include "comm/comm_calibration.hpp"
#include "core/error.hpp"
#include "hw/hardware.hpp"

using namespace sightline;

TEST_CASE("eta_by_gpus interpolates in log group size and holds its ends") {
  AlgorithmParams p;
  p.eta_bandwidth = 0.9;
  CHECK(p.eta_for(2) == doctest::Approx(0.9));
  p.eta_by_gpus = {{2, 0.5}, {8, 0.8}};
  CHECK(p.eta_for(2) == doctest::Approx(0.5));
  CHECK(p.eta_for(4) == doctest::Approx(0.65));  // halfway in log2
  CHECK(p.eta_for(8) == doctest::Approx(0.8));
  CHECK(p.eta_for(64) == doctest::Approx(0.8));
}

TEST_CASE("a calibration with unordered eta_by_gpus is a located error") {
  const json bad = {{"provenance", "x"}, {"eta_bandwidth", 0.8}, {"latency_us", 1}, {"chunk_bytes", 1e6},
                    {"eta_by_gpus", json::array({{{"gpus", 8}, {"eta_bandwidth", 0.8}}, {{"gpus", 2}, {"eta_bandwidth", 0.5}}})}};
  try {
    AlgorithmParams::from_json(bad, "/ring");
    FAIL("expected an error");
  } catch (const SightlineError& e) {
    CHECK(e.path() == "/ring/eta_by_gpus/1/gpus");
  }
}

TEST_CASE("2-GPU all-reduce: more fixed latency and less bus bandwidth than one shared efficiency gives") {
  for (const char* id : {"nvlink3-nvswitch", "nvlink4-nvswitch"}) {
    CAPTURE(id);
    const InterconnectSpec link = read_interconnect(json(id), "/i");
    const CommCalibration* cal = find_comm_calibration(id);
    REQUIRE(cal != nullptr);
    REQUIRE(cal->ring.eta_by_gpus.size() >= 2);
    CHECK(cal->ring.base_latency_us > 1.0);
    // Bus bandwidth at 64 MiB grows with the group: a pair of GPUs reaches less of the link.
    const double big = 64.0 * 1024 * 1024;
    const double bus2 = collective_cost(CollectiveKind::AllReduce, big, 2, link).busbw_GBps;
    const double bus8 = collective_cost(CollectiveKind::AllReduce, big, 8, link).busbw_GBps;
    CHECK(bus2 < 0.85 * bus8);
    // A small message costs the per-call latency plus one per ring step: above
    // the old per-step-only floor for a pair, below it for eight GPUs.
    const double t2 = collective_cost(CollectiveKind::AllReduce, 8192, 2, link).time_s * 1e6;
    const double t8 = collective_cost(CollectiveKind::AllReduce, 8192, 8, link).time_s * 1e6;
    CHECK(t2 >= 8.0);
    CHECK(t2 < t8);
    CHECK(t8 < 3.5 * t2);  // not proportional to the 7x step count: the base dominates
  }
}

TEST_CASE("collective bands: own held-out residuals where measured, the transfer error elsewhere, never zero width") {
  const CommBand& transfer = comm_transfer_error();
  REQUIRE(transfer.samples > 0);
  CHECK(transfer.log_q10 < -0.05);
  CHECK(transfer.log_q90 > 0.05);
  const double mib = 1024.0 * 1024;
  // NVLink 3: 33 measured ring calls, its own band (narrower than a transfer).
  const InterconnectSpec nv3 = read_interconnect(json("nvlink3-nvswitch"), "/i");
  const CollectiveCost own = collective_cost(CollectiveKind::AllReduce, 16 * mib, 8, nv3);
  CHECK(own.log_q10 < 0);
  CHECK(own.log_q90 > 0);
  CHECK(own.log_q10 > transfer.log_q10);
  CHECK(own.log_q90 < transfer.log_q90);
  // Point-to-point was never measured on NVLink 3 (derived from the ring): widened.
  const CollectiveCost p2p = collective_cost(CollectiveKind::SendRecv, 16 * mib, 2, nv3);
  CHECK(p2p.log_q10 <= transfer.log_q10);
  CHECK(p2p.log_q90 >= transfer.log_q90);
  // A link without a calibration of its own (PCIe) and a multi-node group: widened.
  const InterconnectSpec pcie = read_interconnect(json("pcie5"), "/i");
  CHECK(collective_cost(CollectiveKind::AllGather, 16 * mib, 4, pcie).log_q90 >= transfer.log_q90);
  const InterconnectSpec ib = read_interconnect(json("ib-ndr"), "/i");
  const InterconnectSpec nv4 = read_interconnect(json("nvlink4-nvswitch"), "/i");
  CommGroup g;
  g.size = 32;
  g.gpus_per_node = 8;
  g.intra = &nv4;
  g.inter = &ib;
  const CollectiveCost multi = collective_cost(CollectiveKind::AllReduce, 256 * mib, g);
  CHECK(multi.log_q10 <= transfer.log_q10);
  CHECK(multi.log_q90 >= transfer.log_q90);
}
