// The pipeline schedule simulator against the closed forms it must reproduce
// on uniform stages (forward f, backward b, no transfer delay): makespan
// (m + p − 1)(f + b), bubble (p − 1)/(m + p − 1), 1F1B holding at most p
// micro-batches where GPipe holds all m, and gradient buckets overlapping the
// backward pass that produces them. Hand arithmetic, not snapshots.
#include <doctest/doctest.h>

#include "train/schedule.hpp"

using namespace sightline;

namespace {

ScheduleInput uniform(PipelineSchedule kind, int pp, int v, int64_t m, double f, double b) {
  ScheduleInput in;
  in.kind = kind;
  in.pp = pp;
  in.virtual_stages = v;
  in.micro_batches = m;
  const int chunks = pp * v;
  in.fwd_s.assign(chunks, f / v);
  in.bwd_s.assign(chunks, b / v);
  in.act_bytes.assign(chunks, 1.0);
  in.p2p_fwd_s.assign(chunks - 1, 0.0);
  in.p2p_bwd_s.assign(chunks - 1, 0.0);
  in.buckets.assign(chunks, {});
  return in;
}

PipelineSimulation run(ScheduleInput in) {
  PipelineSimulation sim(std::move(in));
  while (!sim.advance(7)) {  // small slices: slicing must not change the schedule
  }
  return sim;
}

}  // namespace

TEST_CASE("schedule: 1F1B and GPipe on uniform stages take (m + p - 1)(f + b)") {
  for (PipelineSchedule kind : {PipelineSchedule::OneFOneB, PipelineSchedule::GPipe}) {
    const PipelineSimulation sim = run(uniform(kind, 4, 1, 8, 1.0, 2.0));
    CHECK(sim.total_passes() == 2 * 4 * 8);
    CHECK(sim.makespan_s() == doctest::Approx((8 + 4 - 1) * 3.0));
    for (const RankTimeline& r : sim.ranks()) {
      CHECK(r.busy_s == doctest::Approx(8 * 3.0));  // every rank runs every micro-batch once each way
      CHECK(r.passes.size() == 16u);
    }
    // The bubble of the busiest rank is the formula's.
    const double bubble = (sim.makespan_s() - sim.ranks()[0].busy_s) / sim.makespan_s();
    CHECK(bubble == doctest::Approx(3.0 / 11.0));
    CHECK(bubble_formula(4, 1, 8) == doctest::Approx(3.0 / 11.0));
  }
}

TEST_CASE("schedule: 1F1B keeps at most p micro-batches in flight on the first stage, GPipe all m") {
  const PipelineSimulation one = run(uniform(PipelineSchedule::OneFOneB, 4, 1, 8, 1.0, 2.0));
  const PipelineSimulation gpipe = run(uniform(PipelineSchedule::GPipe, 4, 1, 8, 1.0, 2.0));
  CHECK(one.ranks()[0].peak_in_flight == 4);
  CHECK(one.ranks()[3].peak_in_flight == 1);  // the last stage runs each backward right after its forward
  CHECK(gpipe.ranks()[0].peak_in_flight == 8);
  CHECK(one.ranks()[0].peak_act_bytes == doctest::Approx(4.0));  // one byte per held micro-batch
}

TEST_CASE("schedule: the first forward reaches stage d after d forwards and d transfers") {
  ScheduleInput in = uniform(PipelineSchedule::OneFOneB, 4, 1, 4, 1.0, 2.0);
  in.p2p_fwd_s.assign(3, 0.25);
  in.p2p_bwd_s.assign(3, 0.25);
  const PipelineSimulation sim = run(in);
  for (int d = 0; d < 4; ++d) {
    CAPTURE(d);
    const PassRecord& first = sim.ranks()[d].passes.front();
    CHECK(first.forward);
    CHECK(first.micro == 0);
    CHECK(first.start_s == doctest::Approx(d * (1.0 + 0.25)));
  }
  // Transfers only delay the schedule: it ends later than without them.
  CHECK(sim.makespan_s() > (4 + 4 - 1) * 3.0 + 2 * 3 * 0.25 - 1e-9);
  // One micro-batch is a pure chain: p forwards, p backwards and a transfer per hop each way.
  ScheduleInput one = uniform(PipelineSchedule::OneFOneB, 4, 1, 1, 1.0, 2.0);
  one.p2p_fwd_s.assign(3, 0.25);
  one.p2p_bwd_s.assign(3, 0.25);
  CHECK(run(one).makespan_s() == doctest::Approx(4 * 1.0 + 4 * 2.0 + 2 * 3 * 0.25));
}

TEST_CASE("schedule: interleaving v chunks per rank divides the bubble by v") {
  const PipelineSimulation plain = run(uniform(PipelineSchedule::OneFOneB, 4, 1, 8, 1.0, 2.0));
  const PipelineSimulation inter = run(uniform(PipelineSchedule::Interleaved, 4, 2, 8, 1.0, 2.0));
  const double bubble_plain = plain.makespan_s() - plain.ranks()[0].busy_s;
  const double bubble_inter = inter.makespan_s() - inter.ranks()[0].busy_s;
  CHECK(inter.ranks()[0].busy_s == doctest::Approx(8 * 3.0));  // same work per rank
  CHECK(bubble_inter == doctest::Approx(bubble_plain / 2));
  CHECK(bubble_formula(4, 2, 8) == doctest::Approx(3.0 / 19.0));
}

TEST_CASE("schedule: a gradient bucket overlaps the rest of the backward that produced it") {
  // One stage, two micro-batches: f, b, f, b. The bucket is ready halfway
  // through the last backward and takes 0.5 on the communication stream.
  ScheduleInput in = uniform(PipelineSchedule::OneFOneB, 1, 1, 2, 1.0, 2.0);
  in.buckets[0] = {GradBucket{1.0, 0.5}};
  const PipelineSimulation overlapped = run(in);
  const RankTimeline& r = overlapped.ranks()[0];
  CHECK(r.end_s == doctest::Approx(6.0));
  CHECK(r.comm_total_s == doctest::Approx(0.5));
  CHECK(r.comm_end_s == doctest::Approx(4.0 + 1.0 + 0.5));  // hidden: done before the backward ends
  // Without overlap the bucket waits for the last backward.
  in.overlap_grad_sync = false;
  const PipelineSimulation serial = run(in);
  CHECK(serial.ranks()[0].comm_end_s == doctest::Approx(6.0 + 0.5));
  // A bucket longer than the rest of the backward is exposed by the difference.
  in.overlap_grad_sync = true;
  in.buckets[0] = {GradBucket{1.0, 3.0}};
  CHECK(run(in).ranks()[0].comm_end_s == doctest::Approx(5.0 + 3.0));
}

TEST_CASE("schedule: interleaved 1F1B idles (p-1)/(v*m) of the busy time, with the real micro-batch counts") {
  // Uniform stages, no transfer delay: each rank idles (p-1) chunk-passes of
  // f/v + b/v while the pipeline fills and drains, against m·(f + b) of work.
  for (const int pp : {2, 4, 8})
    for (const int v : {1, 2, 4, 8})
      for (const int64_t m : {int64_t{8}, int64_t{16}, int64_t{32}}) {
        if (m % pp != 0) continue;  // Megatron's interleaved schedule needs m a multiple of p
        const PipelineSimulation sim =
            run(uniform(v == 1 ? PipelineSchedule::OneFOneB : PipelineSchedule::Interleaved, pp, v, m, 1.0, 2.0));
        for (const RankTimeline& r : sim.ranks()) {
          const double idle = sim.makespan_s() - r.busy_s;
          CHECK_MESSAGE(idle / r.busy_s == doctest::Approx(static_cast<double>(pp - 1) / (v * m)),
                        "p=" << pp << " v=" << v << " m=" << m);
        }
      }
}
