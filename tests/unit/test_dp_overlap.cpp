// Data-parallel communication as Megatron schedules it (train/dp_overlap.hpp,
// issue 38): gradient buckets that leave while the backward runs, the last
// one always exposed, exposure shrinking with more buckets and vanishing
// behind compute only to the last bucket; the distributed optimizer's
// parameter all-gather, chunk by chunk, its first bucket always exposed when
// nothing runs before it, hidden behind the forwards of earlier chunks with
// interleaving. Hand arithmetic on the pure functions and the schedule.
#include <doctest/doctest.h>

#include "train/dp_overlap.hpp"
#include "train/schedule.hpp"

using namespace sightline;

namespace {

// One stage, one micro-batch (forward 1 s, backward `bwd_s`), the chunk's
// gradients in the given buckets, each taking bytes·s_per_byte on the stream.
double dp_exposed_after_backward(const std::vector<ReadyBucket>& buckets, double bwd_s, double s_per_byte,
                                 bool overlap = true) {
  ScheduleInput in;
  in.pp = 1;
  in.micro_batches = 1;
  in.fwd_s = {1.0};
  in.bwd_s = {bwd_s};
  in.act_bytes = {1.0};
  in.overlap_grad_sync = overlap;
  in.buckets.resize(1);
  for (const ReadyBucket& b : buckets) in.buckets[0].push_back(GradBucket{b.ready_offset_s, b.bytes * s_per_byte, b.bytes});
  PipelineSimulation sim(std::move(in));
  while (!sim.advance(1000)) {
  }
  const RankTimeline& r = sim.ranks()[0];
  return std::max(0.0, r.comm_end_s - r.end_s);
}

double total_bytes(const std::vector<ReadyBucket>& b) {
  double x = 0;
  for (const ReadyBucket& r : b) x += r.bytes;
  return x;
}

}  // namespace

TEST_CASE("dp buckets: filled in backward order, ready part-way through the producer that fills them") {
  // Two producers of 30 bytes over 2 s each, buckets of 25: the first fills
  // 25/30 into the first producer, the second 20/30 into the second, the
  // last (10 bytes) when the backward ends.
  const auto b = gradient_bucket_schedule({{2.0, 30.0}, {2.0, 30.0}}, 25.0, false);
  REQUIRE(b.size() == 3);
  CHECK(b[0].ready_offset_s == doctest::Approx(2.0 * 25.0 / 30.0));
  CHECK(b[1].ready_offset_s == doctest::Approx(2.0 + 2.0 * 20.0 / 30.0));
  CHECK(b[2].ready_offset_s == doctest::Approx(4.0));
  CHECK(b[2].bytes == doctest::Approx(10.0));
  CHECK(total_bytes(b) == doctest::Approx(60.0));
  // Bucketing off: one bucket, ready at the end.
  const auto one = gradient_bucket_schedule({{2.0, 30.0}, {2.0, 30.0}}, 25.0, true);
  REQUIRE(one.size() == 1);
  CHECK(one[0].ready_offset_s == doctest::Approx(4.0));
  CHECK(one[0].bytes == doctest::Approx(60.0));
  // Every bucket size: bytes conserved, ready times in order, the last bucket at the end of the backward.
  for (const double size : {1.0, 7.0, 25.0, 30.0, 59.0, 60.0, 1000.0}) {
    const auto x = gradient_bucket_schedule({{1.0, 10.0}, {2.0, 30.0}, {0.5, 20.0}}, size, false);
    CHECK(total_bytes(x) == doctest::Approx(60.0));
    CHECK(x.back().ready_offset_s == doctest::Approx(3.5));
    for (size_t i = 1; i < x.size(); ++i) CHECK(x[i].ready_offset_s >= x[i - 1].ready_offset_s);
  }
}

TEST_CASE("dp buckets: exposed time shrinks with more buckets; the last bucket is always exposed") {
  // 100 bytes produced evenly over a 4 s backward; 0.02 s per byte on the stream.
  const double k = 0.02;
  const double one = dp_exposed_after_backward(gradient_bucket_schedule({{4.0, 100.0}}, 100.0, false), 4.0, k);
  const double four = dp_exposed_after_backward(gradient_bucket_schedule({{4.0, 100.0}}, 25.0, false), 4.0, k);
  const double sixteen = dp_exposed_after_backward(gradient_bucket_schedule({{4.0, 100.0}}, 6.25, false), 4.0, k);
  CHECK(one == doctest::Approx(2.0));              // one bucket: nothing overlaps
  CHECK(four == doctest::Approx(25.0 * k));        // each bucket hides behind the next second of backward, the last cannot
  CHECK(sixteen == doctest::Approx(6.25 * k));
  CHECK(sixteen < four);
  CHECK(four < one);
  // Without overlap every bucket waits for the backward: all 2 s exposed, however many buckets.
  CHECK(dp_exposed_after_backward(gradient_bucket_schedule({{4.0, 100.0}}, 6.25, false), 4.0, k, false) ==
        doctest::Approx(2.0));
  // Buckets slower than the backward that produces them queue: more is exposed than the last alone.
  const double slow = dp_exposed_after_backward(gradient_bucket_schedule({{1.0, 100.0}}, 25.0, false), 1.0, k);
  CHECK(slow > 25.0 * k);
  CHECK(slow == doctest::Approx(2.0 - 0.75));
}

TEST_CASE("parameter all-gather: the first bucket is exposed, more buckets hide more, interleaving hides the next chunk") {
  // One chunk, its gather (2 s) issued when its forward (4 s) starts.
  CHECK(exposed_parameter_gather_s({{2.0, 1, 0.0, 4.0}}) == doctest::Approx(2.0));
  CHECK(exposed_parameter_gather_s({{2.0, 4, 0.0, 4.0}}) == doctest::Approx(0.5));   // the first of four buckets
  CHECK(exposed_parameter_gather_s({{2.0, 16, 0.0, 4.0}}) == doctest::Approx(0.125));
  // A forward shorter than the gather waits for the last bucket: 2 s of gather, 3/4 of 1 s of compute before it.
  CHECK(exposed_parameter_gather_s({{2.0, 4, 0.0, 1.0}}) == doctest::Approx(2.0 - 0.75));
  // A stage that starts late (it waits for the stage before) hides its gather behind the wait.
  CHECK(exposed_parameter_gather_s({{2.0, 4, 3.0, 4.0}}) == doctest::Approx(0.0));
  // Interleaving: chunk 1's gather leaves when chunk 0's first forward starts and has until chunk 1's first forward.
  const double hidden = exposed_parameter_gather_s({{1.0, 4, 0.0, 2.0}, {1.0, 1, 5.0, 2.0}});
  CHECK(hidden == doctest::Approx(0.25));  // only chunk 0's first bucket
  // ...unless chunk 1 starts before its gather can arrive (gathers run one after another).
  CHECK(exposed_parameter_gather_s({{1.0, 4, 0.0, 2.0}, {1.0, 1, 1.5, 2.0}}) == doctest::Approx(0.25 + 0.5));
}
