#include "jobs/probe_sample.hpp"

#include <algorithm>

#include "scenario/simulation_spec.hpp"
#include "serve/simulation.hpp"
#include "serve/workload.hpp"

namespace sightline {

namespace {

// What an offline batch's request weighs in its run's steps, from its drawn
// lengths alone: its output tokens (each a sequence stepped, and a step a
// full batch's worth of them), or, under request-level batching, its batch's
// longest output (the batch runs until that one is done; batches of
// batch_size taken in arrival order). The probe's requests are the run's
// first ones, a sample of its lengths: I2.4's first 1,024 (seed 1) weigh less
// than its 20,000 do, and the probe's figure was 7.8% under the run's work
// (seeds 2-4 of the same scenario: -4.0%, -1.6%, +1.1%; docs/limits.md).
// Summed in the order generate_workload makes the requests, the sum kept
// when the probe's count is reached.
class LengthWeightSink final : public serve::RequestSink {
 public:
  LengthWeightSink(int64_t batch, int64_t probed) : batch_(batch), probed_(probed) {}
  void reserve(size_t) override {}
  void add(const serve::RequestSpec& r) override {
    if (batch_ <= 1) {
      sum_ += static_cast<double>(r.output);
    } else {
      longest_ = std::max<int64_t>(longest_, r.output);
      if (++in_batch_ == batch_) close_batch();
    }
    if (++count_ == probed_) {
      close_batch();  // the probe's last batch ends with its requests
      probe_sum_ = sum_;
    }
  }
  // The mean weight of the probe's requests and of all those added.
  double probe_mean() const { return probe_sum_ / static_cast<double>(std::max<int64_t>(1, probed_)); }
  double mean() {
    close_batch();
    return sum_ / static_cast<double>(std::max<int64_t>(1, count_));
  }

 private:
  void close_batch() {
    sum_ += static_cast<double>(longest_) * static_cast<double>(in_batch_);
    longest_ = in_batch_ = 0;
  }
  int64_t batch_, probed_;
  int64_t longest_ = 0, in_batch_ = 0, count_ = 0;
  double sum_ = 0, probe_sum_ = 0;
};

// The run's mean is read on at most this many of its first requests (the
// probe's at least): a mean over 100,000 draws is within a few tenths of a
// percent of the run's, and drawing a million requests' lengths took 0.2 s.
constexpr int64_t kLengthSampleMost = 100000;

}  // namespace

// The probe's arrivals at the run's average rate. A Poisson or gamma run's
// first k arrivals come at their own rate, off the nominal one by about
// 1/sqrt(k) (the head-to-head's first 1,000: 9.34 req/s of 10; its first
// 10,000: 10.03), and the events a request makes depend on the load: batches
// are shorter at a lower rate, so a request shares fewer steps. The run's n
// arrivals average nearer the nominal rate (within 1/sqrt(n)): the probe's
// arrival times are scaled (the same requests, the same gaps in proportion)
// so that its k-th arrival comes when the run's k-th would at the run's own
// average rate, k/n of the run's last arrival (the run's arrival stream,
// drawn without its requests: one draw an arrival). A probe that is the
// whole run is not scaled. Other processes: none (a trace's rate is what it
// is, an offline batch and a closed loop have none).
std::optional<double> probe_rate_qps(const Scenario& s, int64_t probed, int64_t requests) {
  const serve::SimulationSpec& sp = *s.serving->simulation;
  if (probed >= requests || probed < 1) return std::nullopt;
  const double run_last = serve::nth_arrival_s(sp, s.seed, requests);
  const double probe_last = serve::nth_arrival_s(sp, s.seed, probed);
  if (!(run_last > 0) || !(probe_last > 0)) return std::nullopt;
  // Times scale by rate / rate': the probe's last arrival moves to probed/requests of the run's.
  const double wanted = run_last * static_cast<double>(probed) / static_cast<double>(requests);
  return sp.workload.arrival.rate_qps * probe_last / wanted;
}

// The run's mean length weight over its probe's (1 when either is empty).
double offline_length_scale(const Scenario& s, int64_t probed, int64_t requests) {
  const serve::SimulationSpec& sp = *s.serving->simulation;
  if (probed >= requests || probed < 1) return 1.0;
  const bool request_level = sp.scheduler.policy == serve::SchedulerPolicy::Static;
  LengthWeightSink sink(request_level ? std::min(sp.scheduler.batch_size, sp.scheduler.max_num_seqs) : 1, probed);
  serve::WorkloadOverride o;
  o.num_requests = std::min(requests, std::max(probed, kLengthSampleMost));
  serve::GeneratedWorkload rest;
  serve::generate_workload_into(sp, s.seed, o, rest, sink);
  const double probe = sink.probe_mean(), run = sink.mean();
  return probe > 0 && run > 0 ? run / probe : 1.0;
}

// How far an offline batch's probe has come, in requests: a request done (or
// dropped) counts one, one in progress the share of its output delivered.
// Counted in requests done, its window (from its first requests done to its
// last admitted) closes with max_num_seqs of them part-way through on every
// replica, the work put into them counted and they not: the MLPerf offline
// rows were figured 5-12% over what their runs made. Its output, because a
// request's work in a step is a decoded token (a prompt's chunk is one
// sequence stepped, its tokens counted at its arrival). Other workloads keep
// the count of requests done: their windows close with the few requests in
// flight that their arrival rate keeps, and their figures were measured on
// it (within 2.2% on 40 of 46 preset runs; the fit's replay sizes too).
double requests_progressed(const serve::Simulation& sim) {
  double progressed = 0;
  for (int64_t i = 0; i < sim.num_requests(); ++i) {
    const serve::SimRequest& q = sim.record(static_cast<size_t>(i));
    if (q.state == serve::RequestState::Done || q.state == serve::RequestState::Dropped) progressed += 1.0;
    else progressed += static_cast<double>(q.generated) / static_cast<double>(std::max<serve::ReqTokens>(1, q.spec.output));
  }
  return progressed;
}

int64_t prompt_tokens_arrived(const serve::Simulation& sim) {
  int64_t tokens = 0;
  for (int64_t i = 0; i < sim.num_requests(); ++i) {
    const serve::SimRequest& q = sim.record(static_cast<size_t>(i));
    const bool unsent = q.state == serve::RequestState::Pending ||
                        (q.state == serve::RequestState::Dropped && q.drop_reason == serve::DropReason::SessionDropped);
    if (!unsent) tokens += q.spec.prompt;
  }
  return tokens;
}

}  // namespace sightline
