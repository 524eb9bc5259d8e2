// Collective times against the ring/NVLS/pairwise formulas worked by hand on
// a link with a plain calibration (no latency, no pipeline fill, eta 1), then
// the properties the calibrated model must keep: more data or a wider ring
// never gets faster per GPU than the ring floor, groups spanning nodes pay
// for the network. Not snapshots of today's numbers.
#include <doctest/doctest.h>

#include "comm/collectives.hpp"
#include "hw/hardware.hpp"

using namespace sightline;

namespace {

InterconnectSpec plain_link(double GBps) {
  InterconnectSpec l;
  l.id = "test-link";
  l.kind = "nvswitch";
  l.scope = "intra_node";
  l.bandwidth_per_gpu_GBps = GBps;
  return l;
}

// Bandwidth only: the time is factor · bytes / bandwidth.
CommCalibration ideal() {
  CommCalibration c;
  for (AlgorithmParams* p : {&c.ring, &c.p2p}) {
    p->eta_bandwidth = 1.0;
    p->latency_us = 0;
    p->base_latency_us = 0;
    p->chunk_bytes = 0;
  }
  return c;
}

InterconnectSpec preset_link(const std::string& id) { return read_interconnect(json(id), "/hardware/intra_node"); }

constexpr double kGB = 1e9;

}  // namespace

TEST_CASE("comm: ring collectives move 2(n-1)/n (all-reduce) or (n-1)/n of the message per GPU") {
  const InterconnectSpec link = plain_link(100);  // 100 GB/s per GPU, one direction
  const CommCalibration cal = ideal();
  const double bytes = 1 * kGB;
  for (int n : {2, 4, 8}) {
    CAPTURE(n);
    const double d = n;
    CHECK(flat_collective_cost(CollectiveKind::AllReduce, bytes, n, link, cal).time_s ==
          doctest::Approx(2 * (d - 1) / d * bytes / (100 * kGB)));
    CHECK(flat_collective_cost(CollectiveKind::AllGather, bytes, n, link, cal).time_s ==
          doctest::Approx((d - 1) / d * bytes / (100 * kGB)));
    CHECK(flat_collective_cost(CollectiveKind::ReduceScatter, bytes, n, link, cal).time_s ==
          doctest::Approx((d - 1) / d * bytes / (100 * kGB)));
    CHECK(flat_collective_cost(CollectiveKind::AllToAll, bytes, n, link, cal).time_s ==
          doctest::Approx((d - 1) / d * bytes / (100 * kGB)));
    // nccl-tests' bus bandwidth of an ideal ring is the link bandwidth.
    CHECK(flat_collective_cost(CollectiveKind::AllReduce, bytes, n, link, cal).busbw_GBps == doctest::Approx(100));
  }
  CHECK(flat_collective_cost(CollectiveKind::SendRecv, bytes, 2, link, cal).time_s == doctest::Approx(0.01));
  CHECK(flat_collective_cost(CollectiveKind::AllReduce, bytes, 1, link, cal).time_s == 0);  // nothing to exchange
}

TEST_CASE("comm: each ring step pays the per-step latency; the pipeline fill costs one chunk per step") {
  const InterconnectSpec link = plain_link(100);
  CommCalibration cal = ideal();
  cal.ring.latency_us = 5;
  cal.ring.base_latency_us = 10;
  // 8 GPUs, all-reduce: 2·7 = 14 steps.
  const double t = flat_collective_cost(CollectiveKind::AllReduce, 8e3, 8, link, cal).time_s;
  CHECK(t == doctest::Approx(10e-6 + 14 * 5e-6 + 2 * 7.0 / 8 * 8e3 / (100 * kGB)));
  cal.ring.latency_us = 0;
  cal.ring.base_latency_us = 0;
  cal.ring.chunk_bytes = 1 << 20;
  // A 64 MiB message splits into 8 MiB pieces; the fill is one 1 MiB chunk per step.
  const double bytes = 64.0 * (1 << 20);
  CHECK(flat_collective_cost(CollectiveKind::AllGather, bytes, 8, link, cal).time_s ==
        doctest::Approx((7 * double(1 << 20) + 7.0 / 8 * bytes) / (100 * kGB)));
}

TEST_CASE("comm: NVLS (in-switch reduction) is chosen only where it beats the ring") {
  InterconnectSpec link = plain_link(100);
  link.sharp = true;
  CommCalibration cal = ideal();
  AlgorithmParams nvls = cal.ring;
  nvls.latency_us = 20;  // one step, but a slow one
  cal.nvls = nvls;
  // Large message: NVLS moves `bytes` once instead of 2(n−1)/n · bytes.
  const CollectiveCost big = flat_collective_cost(CollectiveKind::AllReduce, 1 * kGB, 8, link, cal);
  CHECK(big.algorithm == "nvls");
  CHECK(big.time_s == doctest::Approx(20e-6 + 1 * kGB / (100 * kGB)));
  // Tiny message on an ideal ring (no per-step latency): the ring wins.
  CHECK(flat_collective_cost(CollectiveKind::AllReduce, 1024, 8, link, cal).algorithm == "ring");
  link.sharp = false;
  CHECK(flat_collective_cost(CollectiveKind::AllReduce, 1 * kGB, 8, link, cal).algorithm == "ring");
}

TEST_CASE("comm: calibrated links never beat their ring floor, and the network costs more than NVLink") {
  const InterconnectSpec nv = preset_link("nvlink3-nvswitch");
  const InterconnectSpec ib = read_interconnect(json("ib-hdr"), "/hardware/inter_node");
  double previous = 0;
  for (double bytes : {1e6, 1e7, 1e8, 1e9}) {
    CAPTURE(bytes);
    const CollectiveCost c = collective_cost(CollectiveKind::AllReduce, bytes, 8, nv);
    CHECK(c.time_s >= 2 * 7.0 / 8 * bytes / (nv.bandwidth_per_gpu_GBps * kGB));
    CHECK(c.time_s > previous);  // more data never takes less time
    previous = c.time_s;
  }
  // 16 GPUs as two nodes of 8 over HDR InfiniBand versus 8 GPUs inside one node.
  CommGroup two_nodes;
  two_nodes.size = 16;
  two_nodes.gpus_per_node = 8;
  two_nodes.intra = &nv;
  two_nodes.inter = &ib;
  const double across = collective_cost(CollectiveKind::AllReduce, 1e9, two_nodes).time_s;
  const double inside = collective_cost(CollectiveKind::AllReduce, 1e9, 8, nv).time_s;
  CHECK(across > inside);
  // Rail-aligned rings: the node's 8 NICs together (8 × 25 GB/s) bound the ring, not one NIC.
  CHECK(across >= 2 * 15.0 / 16 * 1e9 / (8 * ib.bandwidth_per_gpu_GBps * kGB));
  CHECK(across < 2 * 15.0 / 16 * 1e9 / (ib.bandwidth_per_gpu_GBps * kGB));
}

TEST_CASE("comm: bus bandwidth factors follow nccl-tests") {
  CHECK(bus_bandwidth_factor(CollectiveKind::AllReduce, 8) == doctest::Approx(2 * 7.0 / 8));
  CHECK(bus_bandwidth_factor(CollectiveKind::AllGather, 8) == doctest::Approx(7.0 / 8));
  CHECK(bus_bandwidth_factor(CollectiveKind::ReduceScatter, 4) == doctest::Approx(3.0 / 4));
  CHECK(bus_bandwidth_factor(CollectiveKind::Broadcast, 8) == 1);
  CHECK(bus_bandwidth_factor(CollectiveKind::SendRecv, 2) == 1);
}

TEST_CASE("comm: a link's calibration is chosen once per link values, and a held answer outlives the cache") {
  // A custom link with the values of a shipped one takes the same path as the
  // preset; the cached answer must equal a fresh choice for every key it
  // depends on (id, calibration, spec-sheet values), never a neighbour's.
  const InterconnectSpec nvl = read_interconnect(json("nvlink5-nvl72"), "/i");
  const std::shared_ptr<const CommCalibration> first = comm_calibration_for(nvl);
  CHECK(comm_calibration_for(nvl) == first);
  InterconnectSpec renamed = nvl;
  renamed.id = "my-rack";
  renamed.calibration.clear();
  const std::shared_ptr<const CommCalibration> custom = comm_calibration_for(renamed);
  CHECK(custom != first);
  InterconnectSpec slower = renamed;
  slower.latency_us = nvl.latency_us * 4;
  const std::shared_ptr<const CommCalibration> slow = comm_calibration_for(slower);
  CHECK(slow->ring.latency_us != custom->ring.latency_us);
  // Past the cache's size the answers start again; one held before stays valid.
  for (int i = 0; i < 200; ++i) {
    InterconnectSpec other = renamed;
    other.id = "link-" + std::to_string(i);
    CHECK(comm_calibration_for(other)->id == other.id);
  }
  CHECK(first->id == comm_calibration_for(nvl)->id);
  CHECK(first->ring.eta_bandwidth == comm_calibration_for(nvl)->ring.eta_bandwidth);
}
